// Reverse DNS (issue 37, CONTRACT §13): `services.ptr`, the PTR name the customer set for the
// service's IPv4 address (null: none set). Stored as sent to the DNS server, lower-case without
// the trailing dot; written only after the DNS server accepted it (core/product-kit/reverse-dns.ts).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table services
      add column ptr text,
      add constraint services_ptr_hostname check (
        ptr is null or (length(ptr) between 1 and 253 and ptr ~ '^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$')
      )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table services drop constraint services_ptr_hostname, drop column ptr`.execute(db);
}
