// Game servers made before external ids carried the installation (security review 3, T3-M2)
// were named `hp-svc-<service id>` on their panel and recorded only by their ids. The name a
// service's server carries is now kept with it in services.external (`name`), and provisioning
// reads it from there; this writes the old name into the rows that have a server, so a
// provisioning job that runs again for one of them still finds its own server (and adopts it
// because its panel id is the recorded one). Virtual machines always recorded their name.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update services
       set external = external || jsonb_build_object('name', 'hp-svc-' || id)
     where type = 'game' and external ? 'uuid' and not external ? 'name'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    update services
       set external = external - 'name'
     where type = 'game' and external ->> 'name' = 'hp-svc-' || id`.execute(db);
}
