// The log of every token-surface call (spec §1: method, path, status, caller IP, duration),
// kept off the request path: entries are buffered and written in batches (every second, or
// sooner when 1000 are waiting), together with each token's last use. Kept RETENTION_DAYS.
// Off the request path is not free on PGlite, which runs in this process: a row costs about
// half as much in batches of 1000 as of 200 (issue 18; migration 0016 took the rest of it).
// Only calls made with a token we know are stored (a row nobody can ever read is only disk):
// anonymous calls (no token, or an unknown one) are counted per status in memory, and the
// counts go to the log every ANONYMOUS_REPORT_MS when they changed (security review F8).

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';

export const REQUEST_LOG_RETENTION_DAYS = 30;
const FLUSH_MS = 1000;
const FLUSH_AT = 1000;
const MAX_BUFFER = 20_000;
/** A token's last use is written at most this often (it is shown to the minute). */
const LAST_USED_EVERY_MS = 60_000;
/** How often the anonymous-call counts are written to the log (when there were any since). */
export const ANONYMOUS_REPORT_MS = 5 * 60_000;
/** Distinct statuses counted apart; any further ones are counted under "other". */
const ANONYMOUS_STATUSES = 64;

/** Token-surface calls with no token or an unknown one, since this process started. */
export interface AnonymousCalls {
  since: Date;
  total: number;
  byStatus: Record<string, number>;
}

export interface RequestLogEntry {
  tokenId: number | null;
  accountId: number | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  ip: string | null;
  durationMs: number;
  requestId: string;
  /** When: a Date, or epoch milliseconds. */
  at: Date | number;
}

export interface RequestLog {
  record(entry: RequestLogEntry): void;
  /** Count a call that carried no token we know: it is not stored (F8). */
  countAnonymous(status: number): void;
  anonymous(): AnonymousCalls;
  /** Write what is buffered now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Where a text is written into: PostgreSQL array-literal elements, or COPY text-format fields. */
type TextFormat = 'array' | 'copy';

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** `text` escaped for `format` (array elements: `"` and `\`; COPY fields: `\`, tab, LF, CR). */
function escaped(text: string, format: TextFormat): string {
  return format === 'array'
    ? text.replace(/[\\"]/g, '\\$&')
    : text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string);
}

/**
 * Write `text`, escaped for `format`, into `bytes` at `at` (room for 3 bytes a UTF-16 unit is
 * the caller's); answers where it ended. ASCII is copied byte by byte: a `Buffer.write` per value
 * (a call into C++ each) was 6 % of `/plans`' main thread with ten columns (issue 18, eighth
 * pass). From the first other character on, the rest goes through one.
 */
function writeText(bytes: Buffer, at: number, text: string, format: TextFormat): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return at + bytes.write(escaped(text.slice(i), format), at, 'utf8');
    if (c === 0x5c)
      bytes[at++] = 0x5c; // a backslash is doubled in both
    else if (format === 'array') {
      if (c === 0x22) bytes[at++] = 0x5c;
    } else if (c === 0x09 || c === 0x0a || c === 0x0d) {
      bytes[at++] = 0x5c;
      bytes[at++] = c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : 0x72; // \t \n \r
      continue;
    }
    bytes[at++] = c;
  }
  return at;
}

/** A growable byte buffer, off the JavaScript heap. */
class Bytes {
  bytes = Buffer.allocUnsafe(16 * 1024);
  length = 0;
  /** Make room for `more` bytes. */
  room(more: number): Buffer {
    if (this.length + more > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    return this.bytes;
  }
  /** ASCII only (numbers, markers). */
  ascii(text: string): void {
    const bytes = this.room(text.length);
    for (let i = 0; i < text.length; i++) bytes[this.length++] = text.charCodeAt(i);
  }
  text(text: string, format: TextFormat): void {
    this.length = writeText(this.room(text.length * 3), this.length, text, format);
  }
  clear(): void {
    this.length = 0;
    // A burst's buffer is not kept for ever.
    if (this.bytes.length > 1024 * 1024) this.bytes = Buffer.allocUnsafe(16 * 1024);
  }
}

/**
 * One text column of buffered rows as the elements of a PostgreSQL array literal, in UTF-8 bytes
 * off the JavaScript heap (issue 18): `"text",NULL`. An entry kept as an object (a Date, the path
 * and the request id with it) until its batch was written outlived the young generation and was
 * copied and promoted by the garbage collector: with the writing, a quarter of `/plans`' CPU.
 */
class TextColumn {
  readonly #out = new Bytes();
  #count = 0;
  push(value: string | null): void {
    if (this.#count++ > 0) this.#out.ascii(',');
    if (value === null) this.#out.ascii('NULL');
    else {
      this.#out.ascii('"');
      this.#out.text(value, 'array');
      this.#out.ascii('"');
    }
  }
  /** The literal: `{…}`. */
  literal(): string {
    return `{${this.#out.bytes.toString('utf8', 0, this.#out.length)}}`;
  }
  clear(): void {
    this.#out.clear();
    this.#count = 0;
  }
}

/** One number column of buffered rows, unboxed; NaN stands for NULL (and so do infinities). */
class NumberColumn {
  #values = new Float64Array(1024);
  push(index: number, value: number | null): void {
    if (index === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[index] = value === null ? Number.NaN : value;
  }
  at(index: number): number {
    return this.#values[index] as number;
  }
  /** The first `count` values as an array literal: `{12,NULL}`. */
  literal(count: number): string {
    let text = '{';
    for (let i = 0; i < count; i++) {
      const value = this.#values[i] as number;
      text += `${i > 0 ? ',' : ''}${Number.isFinite(value) ? value : 'NULL'}`;
    }
    return `${text}}`;
  }
  /** The distinct finite values among the first `count`. */
  distinct(count: number): number[] {
    const seen = new Set<number>();
    for (let i = 0; i < count; i++) {
      const value = this.#values[i] as number;
      if (Number.isFinite(value)) seen.add(value);
    }
    return [...seen];
  }
  clear(): void {
    // A burst's array is not kept for ever.
    if (this.#values.length > 64 * 1024) this.#values = new Float64Array(1024);
  }
}

/**
 * A column of few distinct texts (methods, route patterns): each row holds the index of its
 * text in the batch's own list, and the texts are written once each when the batch is.
 */
class ChoiceColumn {
  #texts: (string | null)[] = [];
  #index = new Map<string | null, number>();
  readonly #rows = new NumberColumn();
  push(index: number, value: string | null): void {
    let choice = this.#index.get(value);
    if (choice === undefined) {
      choice = this.#texts.length;
      this.#texts.push(value);
      this.#index.set(value, choice);
    }
    this.#rows.push(index, choice + 1);
  }
  /** The texts (`{"GET","POST"}`) and the rows' 1-based positions in them (`{1,1,2}`). */
  literals(count: number): { texts: string; rows: string } {
    const texts = new TextColumn();
    for (const text of this.#texts) texts.push(text);
    return { texts: texts.literal(), rows: this.#rows.literal(count) };
  }
  clear(): void {
    this.#texts = [];
    this.#index.clear();
    this.#rows.clear();
  }
}

/** Buffered rows and how they are written: as array literals through unnest, or by COPY. */
interface Rows {
  readonly length: number;
  push(e: RequestLogEntry, at: number): void;
  /** Insert the rows whose token and account still exist (rows of ones deleted meanwhile are left out). */
  insert(): Promise<void>;
  clear(): void;
}

/** A path is cut at this many characters. */
const PATH_MAX = 500;

/**
 * Rows column by column, written as ten array literals through unnest: one statement, far less to
 * parse and bind than ten parameters a row. The way for PGlite, which does not take COPY FROM
 * STDIN on its connection (its thread stops).
 */
class ArrayRows implements Rows {
  length = 0;
  readonly tokenId = new NumberColumn();
  readonly accountId = new NumberColumn();
  readonly method = new ChoiceColumn();
  readonly path = new TextColumn();
  readonly route = new ChoiceColumn();
  readonly status = new NumberColumn();
  readonly ip = new TextColumn();
  readonly durationMs = new NumberColumn();
  readonly requestId = new TextColumn();
  /** Epoch milliseconds. */
  readonly at = new NumberColumn();
  readonly #db: Kysely<DB>;
  constructor(db: Kysely<DB>) {
    this.#db = db;
  }
  push(e: RequestLogEntry, at: number): void {
    const i = this.length++;
    this.tokenId.push(i, e.tokenId);
    this.accountId.push(i, e.accountId);
    this.method.push(i, e.method);
    this.path.push(e.path.length > PATH_MAX ? e.path.slice(0, PATH_MAX) : e.path);
    this.route.push(i, e.route);
    this.status.push(i, e.status);
    this.ip.push(e.ip);
    this.durationMs.push(i, Math.round(e.durationMs * 100) / 100);
    this.requestId.push(e.requestId);
    this.at.push(i, at);
  }
  async insert(): Promise<void> {
    const n = this.length;
    const method = this.method.literals(n);
    const route = this.route.literals(n);
    // A duration that was not a number is 0, not a batch refused for a NULL.
    await sql`
      insert into api_request_log
        (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, created_at)
      select u.token_id, u.account_id, (${method.texts}::text[])[u.method], u.path,
        (${route.texts}::text[])[u.route], u.status, u.ip, coalesce(u.duration_ms, 0), u.request_id,
        to_timestamp(u.at / 1000.0)
      from unnest(
        ${this.tokenId.literal(n)}::integer[], ${this.accountId.literal(n)}::integer[],
        ${method.rows}::integer[], ${this.path.literal()}::text[],
        ${route.rows}::integer[], ${this.status.literal(n)}::integer[],
        ${this.ip.literal()}::text[], ${this.durationMs.literal(n)}::real[],
        ${this.requestId.literal()}::text[], ${this.at.literal(n)}::float8[]
      ) as u (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, at)
      where (u.token_id is null or exists (select 1 from api_tokens t where t.id = u.token_id))
        and (u.account_id is null or exists (select 1 from accounts a where a.id = u.account_id))`.execute(this.#db);
  }
  clear(): void {
    this.length = 0;
    for (const column of [
      this.tokenId,
      this.accountId,
      this.method,
      this.path,
      this.route,
      this.status,
      this.ip,
      this.durationMs,
      this.requestId,
      this.at,
    ])
      column.clear();
  }
}

const COPY_COLUMNS = 'token_id, account_id, method, path, route, status, ip, duration_ms, request_id, created_at';

/**
 * Rows as the text of a COPY (PostgreSQL): a line a row, tab-separated, written as UTF-8 bytes
 * when the row is recorded. PostgreSQL spends about 40 % less on a row by COPY than as array
 * literals through unnest (5.3 against 8.9 ms for 1000 rows; issue 18, eighth pass), on a server
 * that may share the machine. Rows whose token or account is gone are found by one query over the
 * batch's distinct ids and left out before the copy.
 */
class CopyRows implements Rows {
  length = 0;
  readonly #out = new Bytes();
  /** Per row: its token and account (for that check) and where its line ends. */
  readonly #tokenId = new NumberColumn();
  readonly #accountId = new NumberColumn();
  readonly #end = new NumberColumn();
  readonly #db: Kysely<DB>;
  readonly #pool: pg.Pool;
  #isoMs = Number.NaN;
  #iso = '';
  constructor(db: Kysely<DB>, pool: pg.Pool) {
    this.#db = db;
    this.#pool = pool;
  }
  #field(value: string | number | null, last = false): void {
    if (value === null || (typeof value === 'number' && !Number.isFinite(value))) this.#out.ascii('\\N');
    else if (typeof value === 'number') this.#out.ascii(String(value));
    else this.#out.text(value, 'copy');
    this.#out.ascii(last ? '\n' : '\t');
  }
  push(e: RequestLogEntry, at: number): void {
    const i = this.length++;
    this.#tokenId.push(i, e.tokenId);
    this.#accountId.push(i, e.accountId);
    // The time as ISO 8601, made once a millisecond (a busy server records many rows in each).
    if (at !== this.#isoMs) {
      this.#isoMs = at;
      this.#iso = new Date(at).toISOString();
    }
    const duration = Math.round(e.durationMs * 100) / 100;
    this.#field(e.tokenId);
    this.#field(e.accountId);
    this.#field(e.method);
    this.#field(e.path.length > PATH_MAX ? e.path.slice(0, PATH_MAX) : e.path);
    this.#field(e.route);
    this.#field(e.status);
    this.#field(e.ip);
    this.#field(Number.isFinite(duration) ? duration : 0);
    this.#field(e.requestId);
    this.#field(this.#iso, true);
    this.#end.push(i, this.#out.length);
  }
  async insert(): Promise<void> {
    const n = this.length;
    const { rows } = await sql<{ tokens: number[]; accounts: number[] }>`select
      array(select id from api_tokens where id = any(${this.#tokenId.distinct(n)}::integer[])) as tokens,
      array(select id from accounts where id = any(${this.#accountId.distinct(n)}::integer[])) as accounts`.execute(
      this.#db,
    );
    const tokens = new Set(rows[0]?.tokens ?? []);
    const accounts = new Set(rows[0]?.accounts ?? []);
    const kept = (i: number, ids: NumberColumn, existing: Set<number>) => {
      const id = ids.at(i);
      return !Number.isFinite(id) || existing.has(id);
    };
    let data = this.#out.bytes.subarray(0, this.#out.length);
    const parts: Buffer[] = [];
    let all = true;
    for (let i = 0, start = 0; i < n; i++) {
      const end = this.#end.at(i);
      if (kept(i, this.#tokenId, tokens) && kept(i, this.#accountId, accounts)) parts.push(data.subarray(start, end));
      else all = false;
      start = end;
    }
    if (!all) data = Buffer.concat(parts);
    if (data.length === 0) return;
    const client = await this.#pool.connect();
    let failed: Error | undefined;
    try {
      const copy = client.query(copyFrom(`copy api_request_log (${COPY_COLUMNS}) from stdin`));
      await pipeline(Readable.from([data]), copy);
    } catch (error) {
      failed = error as Error;
      throw error;
    } finally {
      // A connection whose copy failed is not reused.
      client.release(failed);
    }
  }
  clear(): void {
    this.length = 0;
    this.#out.clear();
    this.#tokenId.clear();
    this.#accountId.clear();
    this.#end.clear();
  }
}

/** A token's latest use not yet written to `api_tokens`. */
interface LastUse {
  at: number;
  ip: string | null;
}

/**
 * `copyPool`: the PostgreSQL pool to COPY batches through (PostgreSQL); without it, batches go as
 * array literals (PGlite).
 */
export function createRequestLog(db: Kysely<DB>, logger: Logger, copyPool: pg.Pool | null = null): RequestLog {
  const newRows = (): Rows => (copyPool === null ? new ArrayRows(db) : new CopyRows(db, copyPool));
  // record() fills `rows`; write() swaps it with `spare` and writes the full one.
  let rows = newRows();
  let spare = newRows();
  let flushing: Promise<void> | null = null;
  let dropped = 0;
  /** When each token's last use was last written (epoch ms). */
  const lastWritten = new Map<number, number>();
  /** Tokens whose use is due to be written (not written for LAST_USED_EVERY_MS): the latest use. */
  let lastUses = new Map<number, LastUse>();
  const anonymous: AnonymousCalls = { since: new Date(), total: 0, byStatus: {} };
  let reportedTotal = 0;
  const anonymousCounts = (): AnonymousCalls => ({ ...anonymous, byStatus: { ...anonymous.byStatus } });
  const report = (): void => {
    if (anonymous.total === reportedTotal) return;
    logger.info(
      { anonymousCalls: anonymousCounts(), sinceLastReport: anonymous.total - reportedTotal },
      'anonymous token-surface calls (not stored in the request log)',
    );
    reportedTotal = anonymous.total;
  };

  async function write(): Promise<void> {
    // The batch waiting now, then more only while a full one waits again: rows recorded while a
    // batch was being written wait for the next second (or the next full batch) rather than going
    // as a small batch of their own at once (issue 18: at a few thousand requests a second that
    // was a batch of a hundred rows after every full one, and a row costs PGlite about twice as
    // much in batches of 200 as of 1000).
    if (rows.length === 0) return;
    do {
      const batch = rows;
      rows = spare;
      spare = batch;
      const uses = lastUses;
      lastUses = new Map();
      try {
        await batch.insert();
        if (uses.size > 0) {
          // One statement for every token of the batch.
          const values = [...uses].map(
            ([id, use]) => sql`(${id}::integer, ${new Date(use.at)}::timestamptz, ${use.ip}::text)`,
          );
          await sql`update api_tokens t set last_used_at = v.at, last_used_ip = v.ip
            from (values ${sql.join(values)}) as v(id, at, ip) where t.id = v.id`.execute(db);
          if (lastWritten.size + uses.size > 50_000) lastWritten.clear();
          for (const [id, use] of uses) lastWritten.set(id, use.at);
        }
      } catch (error) {
        // A token deleted with its account in the meantime, or the database briefly away: the
        // log is an audit aid, never a reason to fail requests.
        logger.warn({ err: error, entries: batch.length }, 'request log batch not written');
      } finally {
        batch.clear();
      }
    } while (rows.length >= FLUSH_AT);
  }

  const flush = (): Promise<void> => {
    flushing ??= write().finally(() => {
      flushing = null;
    });
    return flushing;
  };

  const timer = setInterval(() => void flush(), FLUSH_MS);
  timer.unref();
  const reportTimer = setInterval(report, ANONYMOUS_REPORT_MS);
  reportTimer.unref();

  return {
    record(entry) {
      if (rows.length >= MAX_BUFFER) {
        dropped++;
        if (dropped % 1000 === 1) logger.warn({ dropped }, 'request log buffer full; entries dropped');
        return;
      }
      const at = typeof entry.at === 'number' ? entry.at : entry.at.getTime();
      rows.push(entry, at);
      if (entry.tokenId !== null && at - (lastWritten.get(entry.tokenId) ?? 0) >= LAST_USED_EVERY_MS) {
        const use = lastUses.get(entry.tokenId);
        if (use === undefined) lastUses.set(entry.tokenId, { at, ip: entry.ip });
        else {
          use.at = at;
          use.ip = entry.ip;
        }
      }
      if (rows.length >= FLUSH_AT) void flush();
    },
    countAnonymous(status) {
      let key = String(status);
      if (!(key in anonymous.byStatus) && Object.keys(anonymous.byStatus).length >= ANONYMOUS_STATUSES) key = 'other';
      anonymous.byStatus[key] = (anonymous.byStatus[key] ?? 0) + 1;
      anonymous.total++;
    },
    anonymous: anonymousCounts,
    async flush() {
      await flush();
      if (rows.length > 0) await flush();
    },
    async close() {
      clearInterval(timer);
      clearInterval(reportTimer);
      report();
      await this.flush();
    },
  };
}
