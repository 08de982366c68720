// The migrated starting point every test file clones, built once and reused while the
// migrations and engine versions stay the same:
//  - PGlite: the template a fresh DATA_DIR starts from (server/src/db/template.ts, a
//    `dumpDataDir()` tarball in .cache/; cloning it takes ~0.4 s, initdb ~3 s), so the servers the
//    tests start on a fresh DATA_DIR start from it too;
//  - PostgreSQL: a template database that each file copies with CREATE DATABASE … TEMPLATE.

import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { APP_QUEUES } from '../../src/core/jobs/catalog.ts';
import { JobQueue } from '../../src/core/jobs/queue.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';
import { templateFingerprint as fingerprint } from '../../src/db/template.ts';
import { ensureTemplate } from '../../src/db/template-build.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const quiet = pino({ level: 'silent' });

export async function preparePgliteTemplate(): Promise<string> {
  return ensureTemplate();
}

export function templateDatabaseName(): string {
  return `hostplane_template_${fingerprint()}`;
}

/** Build the PostgreSQL template database unless one with this fingerprint exists. */
export async function preparePostgresTemplate(adminUrl: string): Promise<string> {
  const name = templateDatabaseName();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 1) return name;
    // Old templates from earlier fingerprints are dropped so they do not pile up (not one that
    // another `npm test` on this server is building for this fingerprint now).
    const old = await admin.query<{ datname: string }>(
      "select datname from pg_database where datname like 'hostplane\\_template\\_%' and datname <> $1 and datname not like $2",
      [name, `${name.replaceAll('_', '\\_')}\\_building\\_%`],
    );
    for (const row of old.rows) await admin.query(`drop database if exists "${row.datname}" with (force)`);
    const building = `${name}_building_${process.pid}`;
    await admin.query(`create database "${building}"`);
    const database = await openDatabase({ engine: 'postgresql', url: withDatabase(adminUrl, building), poolSize: 2 });
    try {
      await migrateToLatest(database.db);
      const jobs = new JobQueue(database, APP_QUEUES, quiet);
      await jobs.start();
      await jobs.stop();
    } finally {
      await database.close();
    }
    try {
      await admin.query(`alter database "${building}" rename to "${name}"`);
    } catch (error) {
      // Another `npm test` built the same template meanwhile (42P04 duplicate_database): use it.
      if ((error as { code?: string }).code !== '42P04') throw error;
      await admin.query(`drop database if exists "${building}" with (force)`);
    }
    return name;
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
