// Resizing a VPS to a larger plan (issue 37, CONTRACT §13): a job of its own type, `resize`
// (stop, set CPU and memory, grow the disk, start), and an order of its own kind, `resize`: the
// pro-rata price difference charged at once, with its tax invoice like any other paid order.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs drop constraint jobs_type_check`.execute(db);
  await sql`alter table jobs add constraint jobs_type_check
    check (type in ('provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate', 'snapshot', 'resize'))`.execute(
    db,
  );
  await sql`alter table orders drop constraint orders_kind_check`.execute(db);
  await sql`alter table orders add constraint orders_kind_check check (kind in ('new', 'renewal', 'resize'))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // A job record is history only; a resize job still queued would not run on the older code.
  await sql`delete from jobs where type = 'resize'`.execute(db);
  await sql`alter table jobs drop constraint jobs_type_check`.execute(db);
  await sql`alter table jobs add constraint jobs_type_check
    check (type in ('provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate', 'snapshot'))`.execute(db);
  await sql`alter table orders drop constraint orders_kind_check`.execute(db);
  // Resize orders have invoices that reference them: they stay, unchecked (not valid).
  await sql`alter table orders add constraint orders_kind_check check (kind in ('new', 'renewal')) not valid`.execute(
    db,
  );
}
