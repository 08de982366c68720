// Signed outgoing webhooks (issue 37, CONTRACT §13).
// - `webhook_endpoints`: an account's endpoints (at most 10, enforced by the service): the URL,
//   the event types it takes, its signing secret sealed with SECRET_KEY (and, for 24 hours after
//   a rotation, the previous one), whether it is enabled (and why not), and since when it has
//   failed without a success in between (3 days of that disables it).
// - `webhook_events`: the outbox. One row per event an account has an endpoint for, written in the
//   transaction that causes it; `body` is the exact JSON sent (and signed), so every attempt and
//   every redelivery sends the same bytes.
// - `webhook_deliveries`: one event to one endpoint: pending until it succeeds or its retry
//   schedule runs out. `claimed_until` is the lease of the worker sending it now (a worker that
//   dies leaves it to expire, and the delivery is sent again: at least once). Only the oldest
//   pending delivery of an endpoint is ever sent (ordered per endpoint).
// - `wallets.low_balance_threshold_paise`: below this, a debit that crosses it sends
//   wallet.low_balance (null: never).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      url text not null check (length(url) <= 2048),
      description text not null default '' check (length(description) <= 200),
      events text[] not null,
      enabled boolean not null default true,
      disabled_reason text check (disabled_reason in ('client', 'failing', 'gone')),
      disabled_at timestamptz,
      secret_sealed text not null,
      secret_hint text not null,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (enabled = (disabled_reason is null))
    )`.execute(db);
  await sql`create index webhook_endpoints_account_idx on webhook_endpoints (account_id, id)`.execute(db);
  await sql`
    create table webhook_events (
      id bigint generated always as identity primary key,
      public_id text not null unique,
      account_id integer not null references accounts (id) on delete cascade,
      type text not null,
      body text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index webhook_events_account_idx on webhook_events (account_id, id)`.execute(db);
  await sql`
    create table webhook_deliveries (
      id bigint generated always as identity primary key,
      endpoint_id integer not null references webhook_endpoints (id) on delete cascade,
      event_id bigint not null references webhook_events (id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
      attempt integer not null default 0,
      next_attempt_at timestamptz,
      claimed_until timestamptz,
      last_attempt_at timestamptz,
      response_status integer,
      response_body text,
      request_headers jsonb,
      error text,
      duration_ms integer,
      created_at timestamptz not null default now()
    )`.execute(db);
  // The head of each endpoint's queue, and what is due, are both found on the pending rows only.
  await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (endpoint_id, id) where status = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, id desc)`.execute(db);
  await sql`create index webhook_deliveries_event_idx on webhook_deliveries (event_id)`.execute(db);
  await sql`alter table wallets add column low_balance_threshold_paise bigint check (low_balance_threshold_paise > 0)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table wallets drop column if exists low_balance_threshold_paise`.execute(db);
  await sql`drop table if exists webhook_deliveries`.execute(db);
  await sql`drop table if exists webhook_events`.execute(db);
  await sql`drop table if exists webhook_endpoints`.execute(db);
}
