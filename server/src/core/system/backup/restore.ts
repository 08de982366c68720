// `backup restore FILE`: into an empty DATA_DIR (embedded) or an empty database and DATA_DIR
// (PostgreSQL), never over an installation. Everything is unpacked into a private staging
// directory inside DATA_DIR while DATA_DIR's lock is held (no server can start on it meanwhile),
// checked against the manifest (every entry's SHA-256, then the restored database's fingerprint
// and installation id), and only then moved into place, the embedded database last: until the
// restore succeeds, DATA_DIR holds no database that `npm start` would take for an installation.

import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import type { Engine } from '../../../config.ts';
import { openDatabase } from '../../../db/database.ts';
import { acquireDataDirLock, lockHolder } from '../../../db/lock.ts';
import { SECRET_KEY_FILE } from '../../crypto/secret-key.ts';
import { counted } from '../../words.ts';
import { KEPT_DIRS } from './data-files.ts';
import { BackupError } from './errors.ts';
import {
  differingTables,
  type FileRecord,
  fingerprint,
  keyCheck,
  MANIFEST_ENTRY,
  MAX_MANIFEST_BYTES,
  type Manifest,
  parseManifest,
  type TableSum,
} from './manifest.ts';
import { pgRestore } from './pg-tools.ts';
import { readTar } from './tar.ts';
import { emptyDatabase, leftoversOf, removeRestoredSchemas } from './targets.ts';

export interface RestoreConfig {
  dataDir: string;
  secretKey: Buffer | null;
  databaseUrl: string | null;
  engine: Engine;
}

export interface RestoredBackup {
  manifest: Manifest;
  rows: number;
}

/** The entries of files a backup may hold: what data-files.ts keeps, nothing else of DATA_DIR. */
const KEPT_ENTRY = new RegExp(`^files/(${SECRET_KEY_FILE.replace('.', '\\.')}|(${KEPT_DIRS.join('|')})/.+)$`);

const DATABASE_ENTRY: Record<Engine, string> = {
  pglite: 'database/pglite.tar',
  postgresql: 'database/postgresql.dump',
};

/** The backup's key source against the configured SECRET_KEY: refused when the restored copy could not open its secrets. */
function checkKey(manifest: Manifest, configured: Buffer | null): void {
  const recorded = manifest.secret_key;
  if (recorded === null) return;
  if (recorded.source === 'environment' && configured === null) {
    throw new BackupError(
      'secret_key_mismatch',
      'this backup was made with SECRET_KEY set and does not hold the key: set the same SECRET_KEY to restore it',
    );
  }
  if (configured !== null && keyCheck(configured) !== recorded.check) {
    throw new BackupError(
      'secret_key_mismatch',
      recorded.source === 'environment'
        ? 'SECRET_KEY is not the key this backup was made with: set that one'
        : "SECRET_KEY is set, but this backup's secrets are sealed with the key it holds (its DATA_DIR/secret.key): " +
            'unset SECRET_KEY, or set it to the key the backup was made with',
    );
  }
}

/** The manifest of the archive's first entry, checked against this installation's engine and key. */
async function readManifest(body: AsyncIterable<Buffer>, size: number, config: RestoreConfig): Promise<Manifest> {
  if (size > MAX_MANIFEST_BYTES)
    throw new BackupError('backup_corrupt', 'the backup file is damaged: its manifest is too large');
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const manifest = parseManifest(Buffer.concat(chunks).toString('utf8'));
  if (manifest.engine !== config.engine) {
    throw new BackupError(
      'engine_mismatch',
      `this is a backup of ${manifest.engine === 'pglite' ? 'an embedded (PGlite)' : 'a PostgreSQL'} installation; ` +
        `it restores into the same engine only (${manifest.engine === 'pglite' ? 'unset DATABASE_URL' : 'set DATABASE_URL'})`,
    );
  }
  const names = [manifest.database.path, ...manifest.files.map((f) => f.path)];
  if (
    manifest.database.path !== DATABASE_ENTRY[manifest.engine] ||
    !manifest.files.every((f) => KEPT_ENTRY.test(f.path)) ||
    (manifest.secret_key?.source === 'data_dir' && !names.includes(`files/${SECRET_KEY_FILE}`)) ||
    new Set(names).size !== names.length
  ) {
    throw new BackupError('backup_corrupt', 'the backup file is damaged: its manifest lists unexpected entries');
  }
  checkKey(manifest, config.secretKey);
  return manifest;
}

/** Write one entry under `staging`, checking its size and SHA-256 against the manifest. */
async function unpackEntry(staging: string, record: FileRecord, body: AsyncIterable<Buffer>): Promise<void> {
  const path = join(staging, record.path);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(body, tap, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  if (hash.digest('hex') !== record.sha256)
    throw new BackupError('backup_corrupt', `the backup file is damaged: ${record.path} does not match its checksum`);
}

/** What zlib says of a file that is no gzip, or a damaged one, as a BackupError. */
function zlibError(error: NodeJS.ErrnoException): Error {
  if (error.code === 'Z_DATA_ERROR' && /header/.test(error.message))
    return new BackupError('backup_foreign', 'this is not a Hostplane backup (not a gzip-compressed archive)');
  if (error.code === 'Z_BUF_ERROR' || /unexpected end/.test(error.message))
    return new BackupError('backup_corrupt', 'the backup file is truncated');
  return new BackupError('backup_corrupt', `the backup file is damaged: ${error.message}`);
}

/** Thrown to stop reading once the manifest is read (`unpack` without a staging directory). */
const ENOUGH = Symbol('enough');

/**
 * Unpack `file` into `staging`: the manifest first (checked before anything is written), then
 * each entry it lists. Without `staging`, read and check the manifest only.
 */
async function unpack(file: string, staging: string | null, config: RestoreConfig): Promise<Manifest> {
  const gunzip = createGunzip();
  const source = createReadStream(file);
  source.on('error', (error) => gunzip.destroy(error));
  source.pipe(gunzip);
  let manifest: Manifest | null = null;
  const expected = new Map<string, FileRecord>();
  try {
    await readTar(gunzip, async (entry, body) => {
      if (manifest === null) {
        if (entry.name !== MANIFEST_ENTRY)
          throw new BackupError('backup_foreign', 'this is not a Hostplane backup (it has no manifest.json first)');
        manifest = await readManifest(body, entry.size, config);
        if (staging === null) throw ENOUGH;
        for (const record of [manifest.database, ...manifest.files]) expected.set(record.path, record);
        return;
      }
      const record = expected.get(entry.name);
      if (record === undefined)
        throw new BackupError(
          'backup_corrupt',
          `the backup file is damaged: ${JSON.stringify(entry.name)} is not in its manifest`,
        );
      if (entry.size !== record.bytes)
        throw new BackupError('backup_corrupt', `the backup file is damaged: ${record.path} has the wrong size`);
      expected.delete(entry.name);
      await unpackEntry(staging as string, record, body);
    });
  } catch (error) {
    if (error === ENOUGH) return manifest as unknown as Manifest;
    if (error instanceof BackupError) throw error;
    if (
      typeof (error as NodeJS.ErrnoException).code === 'string' &&
      /^Z_/.test((error as NodeJS.ErrnoException).code as string)
    )
      throw zlibError(error as NodeJS.ErrnoException);
    throw error;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
  if (manifest === null) throw new BackupError('backup_foreign', 'this is not a Hostplane backup (an empty archive)');
  if (expected.size > 0)
    throw new BackupError('backup_corrupt', `the backup file is damaged: it lacks ${[...expected.keys()].join(', ')}`);
  return manifest;
}

type Found = Awaited<ReturnType<typeof fingerprint>>;

/** Start the embedded database from the backup's tarball in `staging/db` (a clean stop after), and fingerprint it. */
async function loadEmbedded(staging: string, manifest: Manifest): Promise<Found> {
  const tarball = join(staging, manifest.database.path);
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({
      engine: 'pglite',
      dataDir: join(staging, 'db'),
      loadDataDir: new Blob([await readFile(tarball)]),
      role: 'backup restore',
    });
  } catch (error) {
    throw new BackupError('verify_failed', `the backed-up database does not start here: ${(error as Error).message}`);
  }
  try {
    const client = await database.pool.connect();
    try {
      return await fingerprint(client);
    } finally {
      client.release();
    }
  } finally {
    await database.close();
    await rm(tarball, { force: true });
  }
}

/** Fingerprint the restored PostgreSQL database. */
async function fingerprintPostgres(url: string): Promise<Found> {
  const client = new pg.Client({ connectionString: url, application_name: 'hostplane restore' });
  await client.connect();
  try {
    return await fingerprint(client);
  } finally {
    await client.end();
  }
}

/** What the restored database holds against what the backup recorded; throws verify_failed naming the difference. */
function verify(manifest: Manifest, found: Found): void {
  const differing = differingTables(manifest.tables, found.tables);
  if (differing.length > 0) {
    throw new BackupError(
      'verify_failed',
      `the restored database does not match the backup in ${counted(differing.length, 'table')}: ${differing.slice(0, 10).join(', ')}`,
    );
  }
  if (found.described.installationId !== manifest.installation_id) {
    throw new BackupError(
      'verify_failed',
      `the restored database has installation id ${found.described.installationId}, the backup ${manifest.installation_id}`,
    );
  }
}

/** Move the unpacked files, then the embedded database, from `staging` into DATA_DIR; undone on failure. */
async function moveIntoPlace(staging: string, dataDir: string, engine: Engine): Promise<void> {
  const moves: [string, string][] = [];
  const files = join(staging, 'files');
  for (const name of await readdir(files).catch(() => [] as string[]))
    moves.push([join(files, name), join(dataDir, name)]);
  if (engine === 'pglite') moves.push([join(staging, 'db', 'pglite'), join(dataDir, 'pglite')]);
  const done: string[] = [];
  try {
    for (const [from, to] of moves) {
      await rename(from, to);
      done.push(to);
    }
  } catch (error) {
    for (const path of done) await rm(path, { recursive: true, force: true });
    throw error;
  }
}

/** Refuse a target that holds an installation; returns the leftovers to clear (empty directories, a stale staging). */
async function checkTarget(config: RestoreConfig): Promise<string[]> {
  const holder = config.engine === 'pglite' ? lockHolder(config.dataDir) : null;
  if (holder !== null) {
    throw new BackupError(
      'target_not_empty',
      `a Hostplane process (pid ${holder.pid}, ${holder.role}) is running on DATA_DIR ${config.dataDir}: ` +
        'restore into a new, empty DATA_DIR',
    );
  }
  const leftovers = await leftoversOf(config.dataDir);
  if (config.engine === 'postgresql') await emptyDatabase(config.databaseUrl as string);
  return leftovers;
}

export async function restoreBackup(config: RestoreConfig, file: string): Promise<RestoredBackup> {
  await (
    await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      throw new BackupError('unreadable', `cannot read ${file}: ${error.code ?? error.message}`);
    })
  ).close();
  // The file first (a wrong one is refused whatever the target), then the target.
  await unpack(file, null, config);
  const leftovers = await checkTarget(config);
  const lock = acquireDataDirLock(config.dataDir, 'backup restore');
  const staging = join(config.dataDir, `.restore-${randomBytes(6).toString('hex')}`);
  let restoredDatabase = false;
  try {
    for (const path of leftovers) await rm(path, { recursive: true, force: true });
    await mkdir(staging, { mode: 0o700 });
    const manifest = await unpack(file, staging, config);
    let found: Found;
    if (config.engine === 'pglite') found = await loadEmbedded(staging, manifest);
    else {
      // One transaction: on failure nothing is left in the database.
      await pgRestore(config.databaseUrl as string, join(staging, manifest.database.path));
      restoredDatabase = true;
      found = await fingerprintPostgres(config.databaseUrl as string);
    }
    verify(manifest, found);
    await moveIntoPlace(staging, config.dataDir, config.engine);
    restoredDatabase = false;
    const rows = Object.values(found.tables).reduce((sum: number, t: TableSum) => sum + t.rows, 0);
    return { manifest, rows };
  } catch (error) {
    if (restoredDatabase) {
      await removeRestoredSchemas(config.databaseUrl as string).catch((cleanup: Error) => {
        throw new BackupError(
          error instanceof BackupError ? error.code : 'verify_failed',
          `${(error as Error).message}; and what was restored could not be removed (${cleanup.message}): ` +
            'drop and create the database before trying again',
        );
      });
    }
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
    lock.release();
  }
}
