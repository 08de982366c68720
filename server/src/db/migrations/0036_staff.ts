// The staff console's identities, sessions and audit trail (issue 38, CONTRACT §14).
// - `staff`: people who run the platform, apart from customer accounts (no shared row, no shared
//   session). `email` is stored lower-case (like accounts.email). `role` support ⊂ billing ⊂ admin.
//   The password is argon2id (core/accounts/password.ts); null until the invitation is accepted.
//   The TOTP secret is sealed with SECRET_KEY (as two_factor's): `totp_pending_secret` from the
//   enrolment's first step until a code confirms it; `totp_last_step` so a code is accepted once.
//   `disabled_at`: the person can no longer sign in; staff rows are never deleted (the audit log
//   names them).
// - `staff_tokens`: single-use invitation links (sha256 of the token), with an expiry.
// - `staff_sessions`: cookie STAFFSESSID, stored as sha256. `stage`: `enrol` (password proven, no
//   second factor yet: only the enrolment), `totp` (password proven, the code still to come) or
//   `full`. 8 h absolute, 30 min idle (core/staff/staff-sessions.ts).
// - `audit_log`: every staff mutation, written in the change's own transaction
//   (core/audit/audit.ts recordAudit). Append-only: a trigger refuses UPDATE, DELETE and TRUNCATE,
//   on PGlite and PostgreSQL alike.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table staff (
      id integer generated always as identity primary key,
      email text not null,
      name text not null,
      role text not null check (role in ('support', 'billing', 'admin')),
      password_hash text,
      totp_secret text,
      totp_pending_secret text,
      totp_enabled_at timestamptz,
      totp_last_step integer,
      disabled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint staff_email_lower check (email = lower(email)),
      check ((totp_secret is null) = (totp_enabled_at is null))
    )`.execute(db);
  await sql`create unique index staff_email_key on staff (email)`.execute(db);

  await sql`
    create table staff_tokens (
      id integer generated always as identity primary key,
      staff_id integer not null references staff (id),
      purpose text not null check (purpose in ('invite')),
      token_hash text not null unique,
      expires_at timestamptz not null,
      consumed_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index staff_tokens_staff_idx on staff_tokens (staff_id, purpose)`.execute(db);

  await sql`
    create table staff_sessions (
      id_hash text primary key,
      staff_id integer not null references staff (id),
      stage text not null check (stage in ('enrol', 'totp', 'full')),
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      ip text,
      user_agent text
    )`.execute(db);
  await sql`create index staff_sessions_staff_idx on staff_sessions (staff_id)`.execute(db);

  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      at timestamptz not null default now(),
      staff_id integer references staff (id),
      actor text not null check (actor = 'operator' or actor ~ '^staff:[0-9]+$'),
      role text check (role in ('support', 'billing', 'admin')),
      action text not null check (action ~ '^[a-z][a-z0-9_.]{1,63}$'),
      target_type text not null check (target_type ~ '^[a-z][a-z0-9_]{1,31}$'),
      target_id text,
      before jsonb,
      after jsonb,
      reason text,
      ip text,
      check ((staff_id is null) = (actor = 'operator')),
      check ((staff_id is null) = (role is null))
    )`.execute(db);
  await sql`create index audit_log_target_idx on audit_log (target_type, target_id, id desc)`.execute(db);
  await sql`create index audit_log_staff_idx on audit_log (staff_id, id desc)`.execute(db);
  await sql`
    create function hostplane_audit_is_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger audit_log_append_only
      before update or delete on audit_log
      for each row execute function hostplane_audit_is_append_only()`.execute(db);
  await sql`
    create trigger audit_log_no_truncate
      before truncate on audit_log
      for each statement execute function hostplane_audit_is_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists audit_log`.execute(db);
  await sql`drop function if exists hostplane_audit_is_append_only()`.execute(db);
  await sql`drop table if exists staff_sessions`.execute(db);
  await sql`drop table if exists staff_tokens`.execute(db);
  await sql`drop table if exists staff`.execute(db);
}
