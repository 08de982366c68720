import { type Kysely, sql } from 'kysely';

// In-app notifications (spec 4.11), one account each.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table notifications (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      kind text not null,
      title text not null,
      body text not null,
      data jsonb not null default '{}',
      read_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index notifications_account_idx on notifications (account_id, id desc)`.execute(db);
  await sql`create index notifications_unread_idx on notifications (account_id) where read_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists notifications`.execute(db);
}
