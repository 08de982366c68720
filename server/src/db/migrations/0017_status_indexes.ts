// An account's rows by status (issue 15): `status:` in a search counts and pages one account's
// services, orders or deposits of a status, and needs only their ids. The (account_id, status)
// indexes of migration 0011 hold no id, so each match cost a visit to the table, and the planner
// preferred the partial index of every account's pending deposits filtered by account, a cost
// that grew with the whole table, not the account's rows. With the id in the index the account's
// range is read from the index alone. They replace 0011's, which are their prefix.
// And a service's unpaid orders (the `overdue` of every instance view): no index led with the
// service, so the planner walked every account's unpaid orders for it, and reading one instance
// grew with the table.

import { type Kysely, sql } from 'kysely';

const INDEXES = [
  ['deposits_account_status_idx', 'deposits'],
  ['orders_account_status_idx', 'orders'],
  ['services_account_status_idx', 'services'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, table] of INDEXES) {
    await sql`create index ${sql.id(name)} on ${sql.table(table)} (account_id, status, id desc)`.execute(db);
    await sql`drop index if exists ${sql.id(`${table}_status_idx`)}`.execute(db);
  }
  await sql`create index orders_unpaid_service_idx on orders (service_id) where status = 'unpaid'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists orders_unpaid_service_idx`.execute(db);
  for (const [name, table] of INDEXES) {
    await sql`create index if not exists ${sql.id(`${table}_status_idx`)} on ${sql.table(table)} (account_id, status)`.execute(
      db,
    );
    await sql`drop index if exists ${sql.id(name)}`.execute(db);
  }
}
