// Database assertions: a fingerprint of every application table, to prove a refused request
// changed nothing. Left out: rate-limit counters (refusing a request may count it), and the
// token surface's audit trail (the log of the calls themselves, and tokens' last-use stamps),
// and the delivery state of mail queued before.

import { sql } from 'kysely';
import type { TestApp } from './harness.ts';

const IGNORED = new Set(['rate_limits', 'kysely_migration', 'kysely_migration_lock', 'api_request_log']);
const COLUMNS: Record<string, string> = {
  api_tokens: 'id, account_id, name, token_hash, scopes, allowed_cidrs, expires_at, revoked_at',
  // Mail queued earlier is delivered in the background (status, attempts, sent_at, the body
  // dropped): a refused request must not queue mail, and that is what these columns show.
  mail_outbox: 'id, account_id, to_address, template, subject',
  // A signed-in request refreshes its session's last_seen_at (at most once a minute): not a change.
  sessions: 'id_hash, account_id, remember, created_at, expires_at, ip, user_agent',
};

/** The statement digesting every table, per app (its tables do not change while a file runs). */
const statements = new WeakMap<TestApp, ReturnType<typeof sql<{ name: string; digest: string }>>>();

export async function fingerprint(t: TestApp): Promise<Record<string, string>> {
  const db = t.deps.database.db;
  let statement = statements.get(t);
  if (statement === undefined) {
    const { rows: tables } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
    // One statement for all of them: a battery takes a fingerprint before and after every request.
    const parts = tables
      .filter(({ name }) => !IGNORED.has(name))
      .map(({ name }) => {
        const columns = COLUMNS[name];
        const source = columns ? sql`(select ${sql.raw(columns)} from ${sql.table(name)})` : sql`${sql.table(name)}`;
        return sql`select ${name}::text as name, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${source} t`;
      });
    statement = sql<{ name: string; digest: string }>`${sql.join(parts, sql` union all `)}`;
    statements.set(t, statement);
  }
  const { rows } = await statement.execute(db);
  return Object.fromEntries(rows.map((row) => [row.name, row.digest]));
}
