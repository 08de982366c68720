// Schema migrations with Kysely's Migrator (advisory-locked, one transaction per run) over the
// in-code list in migrations/index.ts. Run on every start and by `npm run migrate`.

import { type Kysely, type MigrationResultSet, Migrator } from 'kysely';
import { migrations } from './migrations/index.ts';
import type { DB } from './tables.ts';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  return applied(await migrator.migrateToLatest());
}

function applied({ error, results }: MigrationResultSet): string[] {
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(setup)'} failed: ${message}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
