// Builds the migrated template of a new embedded database (db/template.ts says what it is and
// where it lives): an in-memory cluster, every migration, pg-boss's schema and queues, a
// checkpoint (so that a database loaded from it has no write-ahead log to replay), dumped.
// scripts/db-template.ts builds it (npm ci's postinstall); `npm test` and the start-up benchmark
// call ensureTemplate() too.

import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { APP_QUEUES } from '../core/jobs/catalog.ts';
import { JobQueue } from '../core/jobs/queue.ts';
import { openDatabase } from './database.ts';
import { migrateToLatest } from './migrator.ts';
import { cachedTemplate, templatePath } from './template.ts';

/** This release's template, built unless it exists; its path. */
export async function ensureTemplate(): Promise<string> {
  return cachedTemplate() ?? (await buildTemplate(templatePath()));
}

async function buildTemplate(path: string): Promise<string> {
  const database = await openDatabase({ engine: 'pglite', dataDir: null });
  try {
    if (database.engine !== 'pglite') throw new Error('expected PGlite');
    await migrateToLatest(database.db);
    const jobs = new JobQueue(database, APP_QUEUES, pino({ level: 'silent' }));
    await jobs.start();
    await jobs.stop();
    // Nothing of an installation's own: each database makes its id at its first start.
    const { rows } = await sql<{ n: string }>`select count(*) as n from installation`.execute(database.db);
    if (rows[0]?.n !== '0') throw new Error('the template would carry an installation id');
    await sql`checkpoint`.execute(database.db);
    const dump = await database.pglite.dumpDataDir('none');
    mkdirSync(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    try {
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, path);
    } finally {
      rmSync(partial, { force: true });
    }
  } finally {
    await database.close();
  }
  return path;
}
