// The installation's identity (security review 3, T3-M2). One row, made at first start by
// core/system/installation.ts: a random id that namespaces every external id this installation
// creates on an upstream panel (`hp-<id>-svc-42`), so a second installation (a staging copy, a
// fresh database) on the same nodes never takes another installation's servers for its own.
// A restore keeps the row; a copy that must not act as the original gets a new id
// (`npm run admin -- install-id rotate`).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table installation (
      singleton boolean primary key default true check (singleton),
      id text not null check (id ~ '^[a-z2-7]{8}$'),
      created_at timestamptz not null default now(),
      rotated_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists installation`.execute(db);
}
