import { type Kysely, sql } from 'kysely';

// pg_trgm backs fuzzy search (spec 4.13); it is trusted on PostgreSQL ≥ 13 and bundled with PGlite.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop extension if exists pg_trgm`.execute(db);
}
