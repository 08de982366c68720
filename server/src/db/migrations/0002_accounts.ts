import { type Kysely, sql } from 'kysely';

// Accounts and everything that authenticates them (spec §2 Account, §4.3, §4.4; CONTRACT §3–4).
// Credentials are stored only as hashes: password (argon2id), session id, e-mail link tokens (sha256)
// and login codes (HMAC under SECRET_KEY). Queued mail bodies hold links, so they are encrypted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table accounts (
      id integer generated always as identity primary key,
      name text not null,
      email text not null,
      username text not null,
      password_hash text not null,
      email_verified_at timestamptz,
      suspended_at timestamptz,
      suspended_reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint accounts_email_lower check (email = lower(email)),
      constraint accounts_username_lower check (username = lower(username))
    )`.execute(db);
  await sql`create unique index accounts_email_key on accounts (email)`.execute(db);
  await sql`create unique index accounts_username_key on accounts (username)`.execute(db);

  await sql`
    create table sessions (
      id_hash text primary key,
      account_id integer not null references accounts (id) on delete cascade,
      remember boolean not null default false,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      ip text,
      user_agent text
    )`.execute(db);
  await sql`create index sessions_account_idx on sessions (account_id)`.execute(db);
  await sql`create index sessions_expires_idx on sessions (expires_at)`.execute(db);

  await sql`
    create table account_tokens (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      purpose text not null check (purpose in ('verify_email', 'reset_password')),
      token_hash text not null unique,
      expires_at timestamptz not null,
      consumed_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index account_tokens_account_idx on account_tokens (account_id, purpose)`.execute(db);

  await sql`
    create table login_codes (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      code_hash text not null,
      attempts integer not null default 0,
      expires_at timestamptz not null,
      consumed_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index login_codes_account_idx on login_codes (account_id)`.execute(db);

  await sql`
    create table mail_outbox (
      id integer generated always as identity primary key,
      account_id integer references accounts (id) on delete set null,
      to_address text not null,
      template text not null,
      subject text not null,
      body_sealed text,
      status text not null default 'queued' check (status in ('queued', 'sent', 'stored', 'failed')),
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    )`.execute(db);
  await sql`create index mail_outbox_status_idx on mail_outbox (status, created_at)`.execute(db);

  // rate-limiter-flexible's PostgreSQL store (used with PostgreSQL and no Redis). Unlogged: counters
  // need no crash safety, and skipping the WAL halves the cost of each counted request.
  await sql`
    create unlogged table rate_limits (
      key varchar(255) primary key,
      points integer not null default 0,
      expire bigint
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['rate_limits', 'mail_outbox', 'login_codes', 'account_tokens', 'sessions', 'accounts']) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
