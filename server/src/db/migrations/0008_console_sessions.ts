// Open console WebSockets, one row each, so the per-account and per-node caps hold across
// processes. A row is deleted when its socket closes; one left by a crashed process stops
// counting when its lease lapses (expires_at, renewed every minute by the relaying process).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table console_sessions (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      service_id integer not null references services (id) on delete cascade,
      node_id integer not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index console_sessions_account_idx on console_sessions (account_id, expires_at)`.execute(db);
  await sql`create index console_sessions_node_idx on console_sessions (node_id, expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists console_sessions`.execute(db);
}
