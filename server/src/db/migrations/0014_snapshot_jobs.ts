// Snapshot changes (issue 16) become jobs of their own type, `snapshot`, with the change in
// `params.action` (create, restore or delete): they ran as `power` jobs with a `snapshot_*`
// signal, so a client saw a snapshot as a power job. Jobs recorded that way are rewritten, so
// one still queued when this runs is run by the new worker as a snapshot job.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs drop constraint jobs_type_check`.execute(db);
  await sql`alter table jobs add constraint jobs_type_check
    check (type in ('provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate', 'snapshot'))`.execute(db);
  await sql`update jobs
    set type = 'snapshot',
        params = (params - 'signal') || jsonb_build_object('action', substr(params ->> 'signal', 10))
    where type = 'power' and params ->> 'signal' in ('snapshot_create', 'snapshot_restore', 'snapshot_delete')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update jobs
    set type = 'power',
        params = (params - 'action') || jsonb_build_object('signal', 'snapshot_' || (params ->> 'action'))
    where type = 'snapshot'`.execute(db);
  await sql`alter table jobs drop constraint jobs_type_check`.execute(db);
  await sql`alter table jobs add constraint jobs_type_check
    check (type in ('provision', 'power', 'reinstall', 'suspend', 'unsuspend', 'terminate'))`.execute(db);
}
