// `npm run migrate`: bring the configured database to the latest schema and say what ran.

import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase, targetFromConfig } from './database.ts';
import { DataDirLockedError } from './lock.ts';
import { migrateToLatest } from './migrator.ts';

async function main(): Promise<number> {
  const config = loadConfig(process.env);
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

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = error instanceof ConfigError || error instanceof DataDirLockedError;
    console.error(`migrate: ${known ? (error as Error).message : String((error as Error)?.stack ?? error)}`);
    process.exit(known ? 2 : 1);
  },
);
