// The log of every token-surface call (spec §1: method, path, status, caller IP, duration),
// kept off the request path: entries are buffered and written in batches (every second, or
// sooner when 1000 are waiting), together with each token's last use. Kept RETENTION_DAYS.
// Off the request path is not free on PGlite, which runs in this process: a row costs about
// half as much in batches of 1000 as of 200 (issue 18; migration 0016 took the rest of it).
// Only calls made with a token we know are stored (a row nobody can ever read is only disk):
// anonymous calls (no token, or an unknown one) are counted per status in memory, and the
// counts go to the log every ANONYMOUS_REPORT_MS when they changed (security review F8).

import { type Kysely, sql } from 'kysely';
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

/**
 * One text column of buffered rows as the elements of a PostgreSQL array literal, in UTF-8 bytes
 * off the JavaScript heap (issue 18): `"text",NULL`. An entry kept as an object (a Date, the path
 * and the request id with it) until its batch was written outlived the young generation and was
 * copied and promoted by the garbage collector: with the writing, a quarter of `/plans`' CPU.
 * ASCII is copied byte by byte here: a `Buffer.write` per value (a call into C++ each) was 6 % of
 * `/plans`' main thread with ten columns (issue 18, eighth pass); the rest goes through it.
 */
class TextColumn {
  #bytes = Buffer.allocUnsafe(16 * 1024);
  #length = 0;
  #count = 0;
  #room(bytes: number): void {
    if (this.#length + bytes <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + bytes));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
  push(value: string | null): void {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit (an escaped ASCII one 2); the
    // separator and the quotes add 3.
    this.#room(value === null ? 5 : value.length * 3 + 3);
    const bytes = this.#bytes;
    if (this.#count++ > 0) bytes[this.#length++] = 0x2c; // ,
    if (value === null) {
      this.#length += bytes.write('NULL', this.#length, 'latin1');
      return;
    }
    let at = this.#length;
    bytes[at++] = 0x22; // "
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x80) {
        // The rest, escaped, as UTF-8.
        at += bytes.write(value.slice(i).replace(/[\\"]/g, '\\$&'), at, 'utf8');
        break;
      }
      if (c === 0x22 || c === 0x5c) bytes[at++] = 0x5c; // a backslash before " and \
      bytes[at++] = c;
    }
    bytes[at++] = 0x22;
    this.#length = at;
  }
  /** The literal: `{…}`. */
  literal(): string {
    return `{${this.#bytes.toString('utf8', 0, this.#length)}}`;
  }
  clear(): void {
    this.#length = 0;
    this.#count = 0;
    // A burst's buffer is not kept for ever.
    if (this.#bytes.length > 1024 * 1024) this.#bytes = Buffer.allocUnsafe(16 * 1024);
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
  /** The first `count` values as an array literal: `{12,NULL}`. */
  literal(count: number): string {
    let text = '{';
    for (let i = 0; i < count; i++) {
      const value = this.#values[i] as number;
      text += `${i > 0 ? ',' : ''}${Number.isFinite(value) ? value : 'NULL'}`;
    }
    return `${text}}`;
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

/** Buffered rows, column by column. */
class Rows {
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
  push(e: RequestLogEntry, at: number): void {
    const i = this.length++;
    this.tokenId.push(i, e.tokenId);
    this.accountId.push(i, e.accountId);
    this.method.push(i, e.method);
    this.path.push(e.path.length > 500 ? e.path.slice(0, 500) : e.path);
    this.route.push(i, e.route);
    this.status.push(i, e.status);
    this.ip.push(e.ip);
    this.durationMs.push(i, Math.round(e.durationMs * 100) / 100);
    this.requestId.push(e.requestId);
    this.at.push(i, at);
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

/** A token's latest use not yet written to `api_tokens`. */
interface LastUse {
  at: number;
  ip: string | null;
}

export function createRequestLog(db: Kysely<DB>, logger: Logger): RequestLog {
  // record() fills `rows`; write() swaps it with `spare` and writes the full one.
  let rows = new Rows();
  let spare = new Rows();
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
        // One statement of ten array literals rather than ten parameters a row: far less to parse
        // and bind. Rows of a token or account deleted meanwhile are left out, not the whole batch;
        // a duration that was not a number is 0, not a batch refused for a NULL.
        const n = batch.length;
        const method = batch.method.literals(n);
        const route = batch.route.literals(n);
        await sql`
          insert into api_request_log
            (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, created_at)
          select u.token_id, u.account_id, (${method.texts}::text[])[u.method], u.path,
            (${route.texts}::text[])[u.route], u.status, u.ip, coalesce(u.duration_ms, 0), u.request_id,
            to_timestamp(u.at / 1000.0)
          from unnest(
            ${batch.tokenId.literal(n)}::integer[], ${batch.accountId.literal(n)}::integer[],
            ${method.rows}::integer[], ${batch.path.literal()}::text[],
            ${route.rows}::integer[], ${batch.status.literal(n)}::integer[],
            ${batch.ip.literal()}::text[], ${batch.durationMs.literal(n)}::real[],
            ${batch.requestId.literal()}::text[], ${batch.at.literal(n)}::float8[]
          ) as u (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, at)
          where (u.token_id is null or exists (select 1 from api_tokens t where t.id = u.token_id))
            and (u.account_id is null or exists (select 1 from accounts a where a.id = u.account_id))`.execute(db);
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
