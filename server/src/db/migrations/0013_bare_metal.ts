// Bare metal (issue 16): plans of type `baremetal`, run on `redfish` nodes (each node one
// physical machine behind its BMC), installed from an OS template's install image: the URL the
// BMC mounts as virtual media. A template without one is for virtual servers only.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table plans drop constraint plans_type_check`.execute(db);
  await sql`alter table plans add constraint plans_type_check
    check (type in ('vps', 'game', 'web', 'baremetal'))`.execute(db);
  await sql`alter table services drop constraint services_type_check`.execute(db);
  await sql`alter table services add constraint services_type_check
    check (type in ('vps', 'game', 'web', 'baremetal'))`.execute(db);
  await sql`alter table nodes drop constraint nodes_kind_check`.execute(db);
  await sql`alter table nodes add constraint nodes_kind_check
    check (kind in ('proxmox', 'pterodactyl', 'cpanel', 'redfish'))`.execute(db);
  await sql`alter table os_templates add column image_url text
    check (image_url ~ '^https?://[^\\s]+$' and length(image_url) <= 2048)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table os_templates drop column if exists image_url`.execute(db);
  await sql`alter table nodes drop constraint nodes_kind_check`.execute(db);
  await sql`alter table nodes add constraint nodes_kind_check
    check (kind in ('proxmox', 'pterodactyl', 'cpanel'))`.execute(db);
  await sql`alter table services drop constraint services_type_check`.execute(db);
  await sql`alter table services add constraint services_type_check
    check (type in ('vps', 'game', 'web'))`.execute(db);
  await sql`alter table plans drop constraint plans_type_check`.execute(db);
  await sql`alter table plans add constraint plans_type_check check (type in ('vps', 'game', 'web'))`.execute(db);
}
