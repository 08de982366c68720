// Cloud-init user data on virtual-server orders (issue 37, CONTRACT §13).
// - `services.user_data_sealed`: the user data an order gave, sealed with SECRET_KEY (AES-256-GCM,
//   bound to the service's id), kept only until provisioning has used it: cleared when the
//   service becomes active, fails or is terminated. Never in `orders.config` or `services.config`.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table services add column user_data_sealed text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table services drop column user_data_sealed`.execute(db);
}
