// SSH keys as an account resource (issue 16, CONTRACT §9): stored checked and normalised, with
// their SHA256 fingerprint, once per account (the same key twice is refused by the index).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table ssh_keys (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      name text not null,
      public_key text not null,
      key_type text not null,
      bits integer not null,
      fingerprint text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index ssh_keys_fingerprint_key on ssh_keys (account_id, fingerprint)`.execute(db);
  await sql`create index ssh_keys_account_idx on ssh_keys (account_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists ssh_keys`.execute(db);
}
