// The migrated starting point every test file clones, built once per `npm test` run and
// reused while the migrations and engine versions stay the same:
//  - PGlite: a `dumpDataDir()` tarball in .cache/ (cloning it takes ~0.4 s; initdb takes ~3 s);
//  - PostgreSQL: a template database that each file copies with CREATE DATABASE … TEMPLATE.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { APP_QUEUES } from '../../src/core/jobs/catalog.ts';
import { JobQueue } from '../../src/core/jobs/queue.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CACHE = join(ROOT, '.cache');

/** Changes whenever the schema or an engine that shapes the stored files changes. */
function fingerprint(): string {
  const hash = createHash('sha256');
  const dir = join(ROOT, 'server/src/db/migrations');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  hash.update(readFileSync(join(ROOT, 'server/src/core/jobs/catalog.ts')));
  for (const pkg of ['@electric-sql/pglite', 'pg-boss']) {
    hash.update(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json')));
  }
  return hash.digest('hex').slice(0, 12);
}

const quiet = pino({ level: 'silent' });

export async function preparePgliteTemplate(): Promise<string> {
  // Uncompressed: PGlite untars it at every open, and gunzipping 45 MB first cost each test app
  // about a quarter of its database's start (measured: ~1.0 s of CPU per open with gzip, ~0.75 s without).
  const path = join(CACHE, `pglite-template-${fingerprint()}.tar`);
  if (existsSync(path)) return path;
  mkdirSync(CACHE, { recursive: true });
  const database = await openDatabase({ engine: 'pglite', dataDir: null });
  try {
    await migrateToLatest(database.db);
    const jobs = new JobQueue(database, APP_QUEUES, quiet);
    await jobs.start();
    await jobs.stop();
    if (database.engine !== 'pglite') throw new Error('expected PGlite');
    const dump = await database.pglite.dumpDataDir('none');
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, path);
  } finally {
    await database.close();
  }
  return path;
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
