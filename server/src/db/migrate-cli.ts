// `npm run migrate`: bring the configured database to the latest schema and say what ran.
// `npm run migrate -- --check`: say which migrations would run, without running any: exit 0 when
// none would, 1 when some would (or the database has migrations this code does not know: it was
// written by a newer version), 2 on a configuration error.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { counted } from '../core/words.ts';
import { type Database, openDatabase, targetFromConfig } from './database.ts';
import { DataDirLockedError } from './lock.ts';
import { migrations } from './migrations/index.ts';
import { migrateToLatest } from './migrator.ts';

/** The migrations the database records as applied (none when it has no migration table yet). */
async function appliedMigrations(database: Database): Promise<string[]> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass('public.kysely_migration') is not null as present`.execute(database.db);
  if (!rows[0]?.present) return [];
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
  return applied.rows.map((r) => r.name);
}

function report(engine: string, applied: string[]): { code: number; text: string } {
  const known = Object.keys(migrations).sort();
  const done = new Set(applied);
  const pending = known.filter((name) => !done.has(name));
  const unknown = applied.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length > 0) {
    return {
      code: 1,
      text: `${engine}: the database has migrations this version does not know (${unknown.join(', ')}): it was written by a newer Hostplane\n`,
    };
  }
  if (pending.length === 0) return { code: 0, text: `${engine}: schema is up to date; no migration would run\n` };
  return { code: 1, text: `${engine}: ${counted(pending.length, 'migration')} would run: ${pending.join(', ')}\n` };
}

async function check(config: Config): Promise<number> {
  // Opening an embedded data directory without a database would create one: say so instead.
  if (config.engine === 'pglite' && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'))) {
    const { code, text } = report('pglite', []);
    process.stdout.write(text.replace('pglite: ', 'pglite (no database in DATA_DIR yet): '));
    return code;
  }
  const database = await openDatabase(targetFromConfig(config, 'migrate --check'));
  try {
    const { code, text } = report(database.engine, await appliedMigrations(database));
    process.stdout.write(text);
    return code;
  } finally {
    await database.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const unknownArgs = argv.filter((a) => a !== '--check');
  if (unknownArgs.length > 0) {
    process.stderr.write(`migrate: unknown argument ${unknownArgs[0]}; usage: npm run migrate [-- --check]\n`);
    return 2;
  }
  if (argv.includes('--check')) return check(config);
  const database = await openDatabase(targetFromConfig(config, 'migrate'));
  try {
    const ran = await migrateToLatest(database.db);
    process.stdout.write(
      ran.length === 0
        ? `${database.engine}: schema is up to date\n`
        : `${database.engine}: applied ${ran.join(', ')}\n`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof ConfigError || error instanceof DataDirLockedError;
    console.error(`migrate: ${known ? (error as Error).message : String((error as Error)?.stack ?? error)}`);
    process.exit(known ? 2 : 1);
  },
);
