// Database assertions: a fingerprint of every application table, to prove a refused request
// changed nothing (rate-limit counters excepted: refusing a request may count it).

import { sql } from 'kysely';
import type { TestApp } from './harness.ts';

const IGNORED = new Set(['rate_limits', 'kysely_migration', 'kysely_migration_lock']);

export async function fingerprint(t: TestApp): Promise<Record<string, string>> {
  const db = t.deps.database.db;
  const { rows: tables } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    if (IGNORED.has(name)) continue;
    const { rows } = await sql<{ digest: string }>`
      select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${sql.table(name)} t`.execute(
      db,
    );
    out[name] = rows[0]?.digest ?? '';
  }
  return out;
}
