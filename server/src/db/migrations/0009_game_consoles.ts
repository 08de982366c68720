// Game servers (issue 12): a console ticket may be for a game server's console (Wings), besides a
// VM's VNC or serial console. The constraint's name is PostgreSQL's default for the inline check
// of 0007 on both engines.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table console_tickets drop constraint console_tickets_kind_check`.execute(db);
  await sql`alter table console_tickets add constraint console_tickets_kind_check
    check (kind in ('vnc', 'serial', 'game'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from console_tickets where kind = 'game'`.execute(db);
  await sql`alter table console_tickets drop constraint console_tickets_kind_check`.execute(db);
  await sql`alter table console_tickets add constraint console_tickets_kind_check
    check (kind in ('vnc', 'serial'))`.execute(db);
}
