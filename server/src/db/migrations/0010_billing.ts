// The billing cycle (CONTRACT §7, issue 14). A renewal order names the period it pays for
// (`renews_from`: the paid_until it extends), and a unique index on (service, renews_from) is what
// makes the cycle exactly once: however many workers run it, and after a crash at any point, one
// period of a service gets one renewal order, paid or unpaid. A service remembers the period it
// was reminded of, and why it is suspended (staff, the client's request, or overdue: only an
// overdue suspension is lifted by paying).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table orders add column renews_from timestamptz`.execute(db);
  await sql`create unique index orders_renewal_period_key on orders (service_id, renews_from)
    where renews_from is not null`.execute(db);
  await sql`create index orders_unpaid_idx on orders (account_id, created_at) where status = 'unpaid'`.execute(db);
  await sql`alter table services add column suspend_reason text
    check (suspend_reason in ('staff', 'client', 'overdue'))`.execute(db);
  await sql`alter table services add column reminded_for timestamptz`.execute(db);
  await sql`create index services_period_end_idx on services (period_end)
    where status in ('active', 'suspended')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists services_period_end_idx`.execute(db);
  await sql`alter table services drop column if exists reminded_for`.execute(db);
  await sql`alter table services drop column if exists suspend_reason`.execute(db);
  await sql`drop index if exists orders_unpaid_idx`.execute(db);
  await sql`drop index if exists orders_renewal_period_key`.execute(db);
  await sql`alter table orders drop column if exists renews_from`.execute(db);
}
