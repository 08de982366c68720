// Passkeys (issue 36 part B, CONTRACT §11).
// - `passkeys`: an account's WebAuthn credentials. `id` is the public (numeric) id the API names a
//   passkey by; `credential_id` the authenticator's id (base64url, unique: one credential belongs
//   to one account); `public_key` the COSE key (base64url); `counter` the signature counter last
//   seen (an assertion must raise it, unless the authenticator keeps none); `user_handle` the
//   WebAuthn user id it was made for (a discoverable passkey sends it back at sign-in);
//   `backed_up` whether the authenticator says the credential is synced.
// - `webauthn_challenges`: the challenge of a ceremony under way, bound to the session that asked
//   for it (the sha256 of its cookie id, as sessions are stored; an anonymous session has no row
//   of its own). One per session and purpose, taken (deleted) by the answer that uses it, so each
//   works once; it expires after 5 minutes.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table passkeys (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      name text not null check (char_length(name) between 1 and 64),
      credential_id text not null unique,
      public_key text not null,
      user_handle text not null,
      counter bigint not null default 0 check (counter >= 0),
      transports text[] not null default '{}',
      backed_up boolean not null default false,
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    )`.execute(db);
  await sql`create index passkeys_account_idx on passkeys (account_id)`.execute(db);
  await sql`
    create table webauthn_challenges (
      session_hash text not null,
      purpose text not null check (purpose in ('register', 'sign_in', 'second_factor')),
      challenge text not null,
      account_id integer references accounts (id) on delete cascade,
      expires_at timestamptz not null,
      primary key (session_hash, purpose)
    )`.execute(db);
  await sql`create index webauthn_challenges_expiry_idx on webauthn_challenges (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists webauthn_challenges`.execute(db);
  await sql`drop table if exists passkeys`.execute(db);
}
