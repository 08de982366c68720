import { type Kysely, sql } from 'kysely';

// The token surface (spec §2 API token, §4.1, §5; CONTRACT §4): scoped `svc_` tokens stored as
// sha256 only, with expiry and an IPv4 allow-list; a log of every token-surface call (written in
// batches); and one-time console tickets bound to an account and a service.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table api_tokens (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      name text not null,
      token_hash text not null unique,
      hint text not null,
      scopes text[] not null,
      allowed_cidrs text[] not null default '{}',
      expires_at timestamptz,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      last_used_ip text,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index api_tokens_account_idx on api_tokens (account_id, id desc)`.execute(db);

  await sql`
    create table api_request_log (
      id bigint generated always as identity primary key,
      token_id integer references api_tokens (id) on delete cascade,
      account_id integer references accounts (id) on delete cascade,
      method text not null,
      path text not null,
      route text,
      status integer not null,
      ip text,
      duration_ms real not null,
      request_id text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index api_request_log_token_idx on api_request_log (token_id, id desc)`.execute(db);
  await sql`create index api_request_log_created_idx on api_request_log (created_at)`.execute(db);

  await sql`
    create table console_tickets (
      id integer generated always as identity primary key,
      ticket_hash text not null unique,
      account_id integer not null references accounts (id) on delete cascade,
      service_id integer not null references services (id),
      kind text not null check (kind in ('vnc', 'serial')),
      upstream_sealed text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['console_tickets', 'api_request_log', 'api_tokens'])
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
}
