// The log of every token-surface call (spec §1: method, path, status, caller IP, duration),
// kept off the request path: entries are buffered (request-log-rows.ts) and written in batches
// (every second, or sooner when 1000 are waiting), together with each token's last use. Kept
// RETENTION_DAYS. Batches are large because a row costs PGlite, which runs in this process,
// much less in a big batch than in a small one.
// Only calls made with a token we know are stored (a row nobody can ever read is only disk):
// anonymous calls (no token, or an unknown one) are counted per status in memory, and the
// counts go to the log every ANONYMOUS_REPORT_MS when they changed (security review F8).

import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';
import { type RequestLogEntry, Rows } from './request-log-rows.ts';

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

export interface RequestLog {
  record(entry: RequestLogEntry): void;
  /** Count a call that carried no token we know: it is not stored (F8). */
  countAnonymous(status: number): void;
  anonymous(): AnonymousCalls;
  /** Write what is buffered now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** A token's latest use not yet written to `api_tokens`. */
interface LastUse {
  at: number;
  ip: string | null;
}

/** The anonymous calls counted per status, and their report to the log when they changed. */
function anonymousCounter(logger: Logger) {
  const anonymous: AnonymousCalls = { since: new Date(), total: 0, byStatus: {} };
  let reportedTotal = 0;
  const counts = (): AnonymousCalls => ({ ...anonymous, byStatus: { ...anonymous.byStatus } });
  return {
    count(status: number): void {
      let key = String(status);
      if (!(key in anonymous.byStatus) && Object.keys(anonymous.byStatus).length >= ANONYMOUS_STATUSES) key = 'other';
      anonymous.byStatus[key] = (anonymous.byStatus[key] ?? 0) + 1;
      anonymous.total++;
    },
    counts,
    report(): void {
      if (anonymous.total === reportedTotal) return;
      logger.info(
        { anonymousCalls: counts(), sinceLastReport: anonymous.total - reportedTotal },
        'anonymous token-surface calls (not stored in the request log)',
      );
      reportedTotal = anonymous.total;
    },
  };
}

/**
 * Write one batch: its rows in one statement of ten array literals rather than ten parameters a
 * row (far less to parse and bind), then the last use of every token in it in one more. Rows of a
 * token or account deleted meanwhile are left out, not the whole batch; a duration that was not a
 * number is 0, not a batch refused for a NULL.
 */
async function writeBatch(db: Kysely<DB>, batch: Rows, uses: Map<number, LastUse>): Promise<void> {
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
  if (uses.size === 0) return;
  const values = [...uses].map(([id, use]) => sql`(${id}::integer, ${new Date(use.at)}::timestamptz, ${use.ip}::text)`);
  await sql`update api_tokens t set last_used_at = v.at, last_used_ip = v.ip
    from (values ${sql.join(values)}) as v(id, at, ip) where t.id = v.id`.execute(db);
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
  const anonymous = anonymousCounter(logger);

  async function write(): Promise<void> {
    // The batch waiting now, then more only while a full one waits again: rows recorded while a
    // batch was being written wait for the next second (or the next full batch) rather than going
    // as a small batch of their own at once, which under load would follow every full one.
    if (rows.length === 0) return;
    do {
      const batch = rows;
      rows = spare;
      spare = batch;
      const uses = lastUses;
      lastUses = new Map();
      try {
        await writeBatch(db, batch, uses);
        if (uses.size > 0 && lastWritten.size + uses.size > 50_000) lastWritten.clear();
        for (const [id, use] of uses) lastWritten.set(id, use.at);
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
  const reportTimer = setInterval(anonymous.report, ANONYMOUS_REPORT_MS);
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
    countAnonymous: anonymous.count,
    anonymous: anonymous.counts,
    async flush() {
      await flush();
      if (rows.length > 0) await flush();
    },
    async close() {
      clearInterval(timer);
      clearInterval(reportTimer);
      anonymous.report();
      await this.flush();
    },
  };
}
