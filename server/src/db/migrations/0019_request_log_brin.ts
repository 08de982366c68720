// The request log's time index as BRIN. The log is written in time order, a batch of up to a
// thousand rows at a time, and read by time only to delete what is past retention; a btree on
// created_at was a large part of each batch's insert. A BRIN index keeps the bounds of each
// range of pages, so the retention delete still reads only the old ranges.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists api_request_log_created_idx`.execute(db);
  await sql`create index api_request_log_created_idx on api_request_log using brin (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists api_request_log_created_idx`.execute(db);
  await sql`create index api_request_log_created_idx on api_request_log (created_at)`.execute(db);
}
