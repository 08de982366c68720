// Two lookups of the search (issue 15).
//
// A server by its MAC address: virtual servers (from the VM's `net0`… on its node) and bare-metal
// servers (from the BMC's network interfaces) keep their NICs' MAC addresses in
// `services.external.macs`, lower-case colon form. Only services that have any are in the index;
// one lookup finds the service whatever the size of the table, and the account is checked on
// what it finds.
//
// An account's services and orders of some plans: a text naming a plan (`minecraft`) matches
// every service and order of it, thousands of rows, counted exactly. Read through the trigram
// index (which leads with the account and holds the plan) each is a visit to the table; from
// (account_id, plan_id, id) the count and the page are read from the index alone.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index services_macs_idx on services using gin ((external -> 'macs')) where external ? 'macs'`.execute(
    db,
  );
  await sql`create index services_account_plan_idx on services (account_id, plan_id, id)`.execute(db);
  await sql`create index orders_account_plan_idx on orders (account_id, plan_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists orders_account_plan_idx`.execute(db);
  await sql`drop index if exists services_account_plan_idx`.execute(db);
  await sql`drop index if exists services_macs_idx`.execute(db);
}
