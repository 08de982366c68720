import { type Kysely, sql } from 'kysely';

// Orders, the services they create, the jobs that act on services (spec §2 Order, Service, Job;
// CONTRACT §3, §5): at most one mutating job per service at a time (a partial unique index),
// every lifecycle step recorded as an event, staff-reviewed suspend/terminate requests, and the
// idempotency records that make a retried order return the first answer.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table services (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete restrict,
      plan_id integer not null references plans (id),
      type text not null check (type in ('vps', 'game', 'web')),
      label text not null,
      status text not null default 'pending'
        check (status in ('pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated')),
      location_id integer not null references locations (id),
      node_id integer references nodes (id),
      price_paise bigint not null check (price_paise > 0),
      config jsonb not null default '{}',
      external jsonb,
      credentials_sealed text,
      period_end timestamptz,
      created_at timestamptz not null default now(),
      activated_at timestamptz,
      suspended_at timestamptz,
      terminated_at timestamptz
    )`.execute(db);
  // A label names one live service of an account (DELETE … confirm must equal it).
  await sql`create unique index services_label_key on services (account_id, label) where status <> 'terminated'`.execute(
    db,
  );
  await sql`create index services_account_idx on services (account_id, id desc)`.execute(db);
  await sql`create index services_node_idx on services (node_id) where status not in ('terminated', 'failed')`.execute(
    db,
  );
  await sql`alter table ipv4_addresses add constraint ipv4_service_fk foreign key (service_id) references services (id)`.execute(
    db,
  );

  await sql`
    create table orders (
      id integer generated always as identity primary key,
      public_id text not null unique,
      account_id integer not null references accounts (id) on delete restrict,
      plan_id integer not null references plans (id),
      service_id integer references services (id),
      kind text not null check (kind in ('new', 'renewal')),
      status text not null check (status in ('unpaid', 'paid', 'refunded', 'cancelled')),
      amount_paise bigint not null check (amount_paise > 0),
      config jsonb not null default '{}',
      domain text,
      location_id integer references locations (id),
      transaction_id integer references wallet_transactions (id),
      refund_transaction_id integer references wallet_transactions (id),
      created_at timestamptz not null default now(),
      paid_at timestamptz
    )`.execute(db);
  await sql`create index orders_account_idx on orders (account_id, id desc)`.execute(db);
  await sql`alter table services add column order_id integer references orders (id)`.execute(db);

  await sql`
    create table jobs (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete restrict,
      service_id integer not null references services (id),
      type text not null check (type in ('provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate')),
      params jsonb not null default '{}',
      status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
      progress integer not null default 0 check (progress between 0 and 100),
      step text,
      error_code text,
      error_message text,
      attempts integer not null default 0,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz
    )`.execute(db);
  await sql`create unique index jobs_one_active_per_service on jobs (service_id) where status in ('queued', 'running')`.execute(
    db,
  );
  await sql`create index jobs_account_idx on jobs (account_id, id desc)`.execute(db);
  await sql`create index jobs_service_idx on jobs (service_id, id desc)`.execute(db);

  await sql`
    create table service_events (
      id integer generated always as identity primary key,
      service_id integer not null references services (id),
      kind text not null,
      message text not null,
      data jsonb not null default '{}',
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index service_events_service_idx on service_events (service_id, id desc)`.execute(db);

  await sql`
    create table service_requests (
      id integer generated always as identity primary key,
      service_id integer not null references services (id),
      account_id integer not null references accounts (id),
      kind text not null check (kind in ('suspend', 'terminate')),
      status text not null default 'pending' check (status in ('pending', 'approved', 'rejected')),
      note text,
      reason text,
      reviewed_by text,
      job_id integer references jobs (id),
      created_at timestamptz not null default now(),
      decided_at timestamptz
    )`.execute(db);
  await sql`create unique index service_requests_one_pending on service_requests (service_id, kind) where status = 'pending'`.execute(
    db,
  );

  await sql`
    create table idempotency_keys (
      account_id integer not null references accounts (id) on delete cascade,
      key text not null,
      scope text not null,
      request_hash text not null,
      response_status integer not null,
      response_body text not null,
      created_at timestamptz not null default now(),
      primary key (account_id, key)
    )`.execute(db);
  await sql`create index idempotency_keys_created_idx on idempotency_keys (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ipv4_addresses drop constraint if exists ipv4_service_fk`.execute(db);
  for (const table of ['idempotency_keys', 'service_requests', 'service_events', 'jobs'])
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  await sql`alter table services drop column if exists order_id`.execute(db);
  await sql`drop table if exists orders`.execute(db);
  await sql`drop table if exists services`.execute(db);
}
