// Housekeeping: rows that can no longer be used are deleted, so the tables that every
// request reads (sessions) stay small, and the token request log is kept REQUEST_LOG_RETENTION_DAYS.
// Mail that was delivered keeps its metadata, not its body. On the embedded database, which
// has no autovacuum, the sweep also vacuums and analyzes (without statistics the planner
// scans whole tables where an index would do).

import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/tables.ts';
import { IDEMPOTENCY_RETENTION_HOURS } from './idempotency.ts';
import { sweepExports } from './privacy/exports.ts';
import { REQUEST_LOG_RETENTION_DAYS } from './tokens/request-log.ts';

const HOUR_MS = 3600 * 1000;

export async function sweep(db: Kysely<DB>, now: Date): Promise<Record<string, number>> {
  const dayAgo = new Date(now.getTime() - 24 * HOUR_MS);
  const sessions = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  const staffSessions = await db.deleteFrom('staff_sessions').where('expires_at', '<=', now).executeTakeFirst();
  const tokens = await db
    .deleteFrom('account_tokens')
    .where((eb) => eb.or([eb('expires_at', '<=', dayAgo), eb('consumed_at', '<=', dayAgo)]))
    .executeTakeFirst();
  const codes = await db
    .deleteFrom('login_codes')
    .where((eb) => eb.or([eb('expires_at', '<=', dayAgo), eb('consumed_at', '<=', dayAgo)]))
    .executeTakeFirst();
  const idempotency = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', new Date(now.getTime() - IDEMPOTENCY_RETENTION_HOURS * HOUR_MS))
    .executeTakeFirst();
  const requestLog = await db
    .deleteFrom('api_request_log')
    .where('created_at', '<', new Date(now.getTime() - REQUEST_LOG_RETENTION_DAYS * 24 * HOUR_MS))
    .executeTakeFirst();
  // A console ticket lives a minute; an hour later nobody can be asking about it.
  const tickets = await db
    .deleteFrom('console_tickets')
    .where('expires_at', '<=', new Date(now.getTime() - HOUR_MS))
    .executeTakeFirst();
  // An open console renews its row every minute; a lapsed one belonged to a process that died.
  const consoles = await db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst();
  // A data export can be downloaded for 24 hours; then its archive goes (CONTRACT §11).
  const exports = await sweepExports(db, now);
  return {
    idempotency_keys: Number(idempotency.numDeletedRows),
    sessions: Number(sessions.numDeletedRows),
    staff_sessions: Number(staffSessions.numDeletedRows),
    tokens: Number(tokens.numDeletedRows),
    codes: Number(codes.numDeletedRows),
    request_log: Number(requestLog.numDeletedRows),
    console_tickets: Number(tickets.numDeletedRows),
    console_sessions: Number(consoles.numDeletedRows),
    account_exports: exports,
  };
}

/**
 * What autovacuum does on a PostgreSQL server: reclaim dead rows and refresh the planner's
 * statistics. Only for the embedded engine (PGlite runs no background workers).
 */
export async function vacuumEmbedded(db: Kysely<DB>): Promise<void> {
  await sql`vacuum (analyze)`.execute(db);
}

/**
 * Statistics for start-up, of the tables that have none (pg_class.reltuples < 0: never analysed or
 * vacuumed, as every table of a new database or one a migration just made), so that a fresh or
 * restored embedded database is planned well at once. Not of the others: the sweep's vacuum keeps
 * them current every 15 minutes, and analysing every table, the catalogue's too, at each start took
 * a quarter to half a second. Returns the tables analysed.
 */
export async function analyzeEmbedded(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select format('%I.%I', n.nspname, c.relname) as name
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'm') and c.reltuples < 0
      and n.nspname <> 'information_schema' and left(n.nspname, 3) <> 'pg_'
    order by 1`.execute(db);
  const names = rows.map((r) => r.name);
  if (names.length > 0) await sql.raw(`analyze ${names.join(', ')}`).execute(db);
  return names;
}
