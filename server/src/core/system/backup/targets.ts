// What a restore goes into, checked before anything is written: DATA_DIR must hold no files
// (empty directories and what an interrupted restore left are cleared), and with PostgreSQL the
// database of DATABASE_URL must hold no tables, schemas or extensions of its own.

import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { LOCK_FILE } from '../../../db/lock.ts';
import { BackupError } from './errors.ts';

/** Entries of DATA_DIR that are no data: the lock (taken over when stale), the admin socket and its pointer. */
const NOT_DATA = new Set([LOCK_FILE, 'admin.sock', 'admin.sock.path']);

/** Whether `dir` holds anything but (empty) directories. */
async function holdsFiles(dir: string): Promise<boolean> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || (await holdsFiles(join(dir, entry.name)))) return true;
  }
  return false;
}

/**
 * Refuse (target_not_empty) a DATA_DIR that holds files; return what may be cleared before
 * restoring into it: empty directory trees, and the staging directories of an interrupted restore.
 */
export async function leftoversOf(dataDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dataDir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const content: string[] = [];
  const leftovers: string[] = [];
  for (const name of names) {
    if (NOT_DATA.has(name)) continue;
    const path = join(dataDir, name);
    const stat = await lstat(path);
    if (stat.isDirectory() && (name.startsWith('.restore-') || !(await holdsFiles(path)))) leftovers.push(path);
    else if (!stat.isSocket()) content.push(stat.isDirectory() ? `${name}/` : name);
  }
  if (content.length > 0) {
    throw new BackupError(
      'target_not_empty',
      `DATA_DIR ${dataDir} is not empty (it holds ${content.slice(0, 5).join(', ')}${content.length > 5 ? ', …' : ''}): ` +
        'a restore goes into an empty directory; move this one away or set DATA_DIR to a new one',
    );
  }
  return leftovers;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'hostplane restore' });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new BackupError('database_unreachable', `cannot connect to DATABASE_URL: ${(error as Error).message}`);
  }
  return client;
}

/** Refuse (target_not_empty) a database that holds relations, schemas besides public, or extensions. */
export async function emptyDatabase(url: string): Promise<void> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ relations: number; schemas: string[]; extensions: string[] }>(`
      select
        (select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%')::int as relations,
        array(select nspname::text from pg_namespace
          where nspname not in ('public', 'information_schema') and nspname not like 'pg\\_%' order by 1) as schemas,
        array(select extname::text from pg_extension where extname <> 'plpgsql' order by 1) as extensions`);
    const found = rows[0] as { relations: number; schemas: string[]; extensions: string[] };
    if (found.relations > 0 || found.schemas.length > 0 || found.extensions.length > 0) {
      const what = [
        found.relations > 0 ? `${found.relations} tables, indexes or sequences` : null,
        found.schemas.length > 0 ? `schemas ${found.schemas.join(', ')}` : null,
        found.extensions.length > 0 ? `extensions ${found.extensions.join(', ')}` : null,
      ].filter((x) => x !== null);
      throw new BackupError(
        'target_not_empty',
        `the database of DATABASE_URL is not empty (it holds ${what.join('; ')}): a restore goes into a new, ` +
          'empty database (`createdb NAME`, then DATABASE_URL=…/NAME)',
      );
    }
  } finally {
    await client.end();
  }
}

/**
 * Remove what a restore put into a database that was empty before: every schema but public, and
 * public made afresh as PostgreSQL (15+) creates it.
 */
export async function removeRestoredSchemas(url: string): Promise<void> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ name: string }>(`
      select nspname::text as name from pg_namespace
      where nspname not in ('public', 'information_schema') and nspname not like 'pg\\_%'`);
    await client.query('begin');
    for (const { name } of rows) await client.query(`drop schema "${name.replaceAll('"', '""')}" cascade`);
    await client.query('drop schema public cascade');
    await client.query('create schema public authorization pg_database_owner');
    await client.query('grant usage on schema public to public');
    await client.query('commit');
  } finally {
    await client.end();
  }
}
