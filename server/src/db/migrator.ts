// Schema migrations with Kysely's Migrator (advisory-locked, one transaction per run) over the
// in-code list in migrations/index.ts. Run on every start and by `npm run migrate`.

import { type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import { migrations } from './migrations/index.ts';
import type { DB } from './tables.ts';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface MigrateOptions {
  /** Called with the migrations a newer release applied that this one does not know (see below). */
  onNewer?: (names: string[]) => void;
}

export async function migrateToLatest(db: Kysely<DB>, options: MigrateOptions = {}): Promise<string[]> {
  const executed = await executedMigrations(db);
  const newer = newerMigrations(executed ?? []);
  if (newer.length > 0) options.onNewer?.(newer);
  // Nothing to do (every start of an existing database): Kysely's Migrator would still look
  // for its two tables through the catalogue twice and lock, a third of a second on PGlite.
  if (executed !== null && upToDate(executed, newer)) return [];
  const known: Record<string, Migration> = { ...migrations };
  for (const name of newer) known[name] = { up: async () => {} };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => known } });
  return applied(await migrator.migrateToLatest());
}

/** The names in kysely_migration; null for a database without it (a new one). */
async function executedMigrations(db: Kysely<DB>): Promise<string[] | null> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.rows.map((r) => r.name);
  } catch (error) {
    if ((error as { code?: unknown }).code === '42P01') return null; // undefined_table: a new database
    throw error;
  }
}

/**
 * Migrations of a newer release, already applied: names this release does not have, after all of
 * its own. A rolling upgrade migrates before it restarts the processes, so a process of the older
 * release that starts meanwhile (systemd restarting one that crashed, or a rollback) meets them;
 * the expand/contract rule (docs/ARCHITECTURE.md) keeps that schema working for it, so they count
 * as done here instead of failing the start (Kysely: "previously executed migration … is
 * missing"). An unknown name among this release's own is left to Kysely, which refuses it.
 */
function newerMigrations(executed: string[]): string[] {
  const last = Object.keys(migrations).sort().at(-1) ?? '';
  return executed.filter((name) => !Object.hasOwn(migrations, name) && name > last).sort();
}

/** Every migration of this release applied, and nothing else but a newer release's. */
function upToDate(executed: string[], newer: string[]): boolean {
  const done = new Set(executed);
  if (!Object.keys(migrations).every((name) => done.has(name))) return false;
  const allowed = new Set(newer);
  return executed.every((name) => Object.hasOwn(migrations, name) || allowed.has(name));
}

function applied({ error, results }: MigrationResultSet): string[] {
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(setup)'} failed: ${message}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
