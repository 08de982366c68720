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
  at: Date;
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

export function createRequestLog(db: Kysely<DB>, logger: Logger): RequestLog {
  let buffer: RequestLogEntry[] = [];
  let flushing: Promise<void> | null = null;
  let dropped = 0;
  const lastWritten = new Map<number, number>();
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
    while (buffer.length > 0) {
      const batch = buffer.slice(0, 1000);
      buffer = buffer.slice(batch.length);
      try {
        // One statement of ten arrays rather than ten parameters a row: far less to parse and
        // bind. Rows of a token or account deleted meanwhile are left out, not the whole batch.
        const column = <T>(pick: (e: RequestLogEntry) => T) => batch.map(pick);
        await sql`
          insert into api_request_log
            (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, created_at)
          select u.* from unnest(
            ${column((e) => e.tokenId)}::integer[], ${column((e) => e.accountId)}::integer[],
            ${column((e) => e.method)}::text[], ${column((e) => e.path.slice(0, 500))}::text[],
            ${column((e) => e.route)}::text[], ${column((e) => e.status)}::integer[],
            ${column((e) => e.ip)}::text[], ${column((e) => Math.round(e.durationMs * 100) / 100)}::real[],
            ${column((e) => e.requestId)}::text[], ${column((e) => e.at.toISOString())}::timestamptz[]
          ) as u (token_id, account_id, method, path, route, status, ip, duration_ms, request_id, created_at)
          where (u.token_id is null or exists (select 1 from api_tokens t where t.id = u.token_id))
            and (u.account_id is null or exists (select 1 from accounts a where a.id = u.account_id))`.execute(db);
        const lastUse = new Map<number, RequestLogEntry>();
        for (const e of batch) {
          if (e.tokenId !== null && e.at.getTime() - (lastWritten.get(e.tokenId) ?? 0) >= LAST_USED_EVERY_MS)
            lastUse.set(e.tokenId, e);
        }
        if (lastUse.size > 0) {
          // One statement for every token of the batch.
          const rows = [...lastUse.entries()].map(
            ([id, e]) => sql`(${id}::integer, ${e.at}::timestamptz, ${e.ip}::text)`,
          );
          await sql`update api_tokens t set last_used_at = v.at, last_used_ip = v.ip
            from (values ${sql.join(rows)}) as v(id, at, ip) where t.id = v.id`.execute(db);
          for (const [id, e] of lastUse) lastWritten.set(id, e.at.getTime());
          if (lastWritten.size > 50_000) lastWritten.clear();
        }
      } catch (error) {
        // A token deleted with its account in the meantime, or the database briefly away: the
        // log is an audit aid, never a reason to fail requests.
        logger.warn({ err: error, entries: batch.length }, 'request log batch not written');
      }
    }
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
      if (buffer.length >= MAX_BUFFER) {
        dropped++;
        if (dropped % 1000 === 1) logger.warn({ dropped }, 'request log buffer full; entries dropped');
        return;
      }
      buffer.push(entry);
      if (buffer.length >= FLUSH_AT) void flush();
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
      if (buffer.length > 0) await flush();
    },
    async close() {
      clearInterval(timer);
      clearInterval(reportTimer);
      report();
      await this.flush();
    },
  };
}
