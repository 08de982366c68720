// Two-factor sign-in and the sessions list (issue 36, CONTRACT §11).
// - `two_factor`: an account's TOTP secret, sealed with SECRET_KEY (never readable from the
//   table alone); `pending_secret` from totp_begin until a code confirms it; `last_step`, the
//   30-second step of the last code accepted, so a code is never accepted twice.
// - `recovery_codes`: ten single-use codes, stored keyed-hashed; `used_at` once spent.
// - `sessions.public_id`: what the sessions list names a session by (never its cookie or hash);
//   `sessions.two_factor_pending`: a half session, after the password (or mailed code) but
//   before the second factor, that may only complete the sign-in or log out.
// The sessions trigger of 0015 also fires when `two_factor_pending` changes, so no process
// keeps a cached session whose stage changed.

import { type Kysely, sql } from 'kysely';

const NOTICE_EVENTS_BEFORE = 'delete or update of id_hash, account_id, remember, expires_at or truncate';
const NOTICE_EVENTS = 'delete or update of id_hash, account_id, remember, expires_at, two_factor_pending or truncate';

async function sessionsTrigger(db: Kysely<unknown>, events: string): Promise<void> {
  await sql`drop trigger if exists sessions_notice on sessions`.execute(db);
  await sql`create trigger sessions_notice after ${sql.raw(events)} on sessions
    for each statement execute function hp_notice_topic('sessions')`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table two_factor (
      account_id integer primary key references accounts (id) on delete cascade,
      totp_secret text,
      pending_secret text,
      pending_at timestamptz,
      enabled_at timestamptz,
      last_step integer,
      updated_at timestamptz not null default now(),
      check ((totp_secret is null) = (enabled_at is null))
    )`.execute(db);
  await sql`
    create table recovery_codes (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      code_hash text not null,
      created_at timestamptz not null default now(),
      used_at timestamptz,
      unique (account_id, code_hash)
    )`.execute(db);
  await sql`
    alter table sessions
      add column public_id integer generated always as identity,
      add column two_factor_pending boolean not null default false`.execute(db);
  await sql`create unique index sessions_public_id_idx on sessions (public_id)`.execute(db);
  await sessionsTrigger(db, NOTICE_EVENTS);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sessionsTrigger(db, NOTICE_EVENTS_BEFORE);
  await sql`drop index if exists sessions_public_id_idx`.execute(db);
  await sql`alter table sessions drop column if exists two_factor_pending, drop column if exists public_id`.execute(db);
  await sql`drop table if exists recovery_codes`.execute(db);
  await sql`drop table if exists two_factor`.execute(db);
}
