// The activity log a customer reads (issue 36, CONTRACT §11): one row per thing that happened to
// the account — sign-ins and failed ones, security changes, tokens, orders, payments, deposits,
// single sign-on, consoles, ended sessions, staff actions. Written by the app in the transaction
// of the event it records (core/activity/); never updated (a trigger refuses UPDATE); rows older
// than a year are deleted by the maintenance sweep, and go with their account.
// - `actor`: who did it — the customer (`self`), Hostplane staff (`staff`, with `staff_name`) or
//   the platform on its own (`system`: the billing cycle, a gateway webhook, a reconciliation).
// - `ip`: the client's address (text: the app's own reading of it, behind its trusted proxies).
// - `details`: ids, public ids, amounts and hints only — never a password, code, token or cookie.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table account_activity (
      id bigint generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      type text not null check (type ~ '^[a-z][a-z0-9_]{1,63}$'),
      at timestamptz not null default now(),
      ip text,
      actor text not null check (actor in ('self', 'staff', 'system')),
      staff_name text,
      summary text not null,
      details jsonb not null default '{}'::jsonb,
      check ((actor = 'staff') = (staff_name is not null))
    )`.execute(db);
  await sql`create index account_activity_account_idx on account_activity (account_id, id desc)`.execute(db);
  await sql`create index account_activity_type_idx on account_activity (account_id, type)`.execute(db);
  // Retention deletes by age across every account.
  await sql`create index account_activity_at_idx on account_activity (at)`.execute(db);
  await sql`
    create function hostplane_activity_is_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'account_activity is append-only: UPDATE refused' using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger account_activity_append_only
      before update on account_activity
      for each row execute function hostplane_activity_is_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists account_activity`.execute(db);
  await sql`drop function if exists hostplane_activity_is_append_only()`.execute(db);
}
