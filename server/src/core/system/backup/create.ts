// `backup create`: one file holding the database, the files of DATA_DIR that matter and a
// manifest, for either engine, taken while the installation serves.
//
//  - Embedded (PGlite): the data directory as a tarball (dumpDataDir), taken by the database's
//    thread between two messages, so no statement is half-run: a crash-consistent copy whose
//    open transactions recovery rolls back. The manifest's fingerprint is computed on exactly that
//    copy (loaded into a throwaway in-memory PGlite), which proves it loads, too.
//  - PostgreSQL: pg_dump of a snapshot exported by a REPEATABLE READ transaction that computes
//    the fingerprint on the same snapshot.
//
// The archive (tar.ts, gzip) is assembled in DATA_DIR/backup-tmp (private, 0600 files) and the
// CLI moves it to the file asked for.

import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import type { Database } from '../../../db/database.ts';
import { openDatabase } from '../../../db/database.ts';
import { ensurePrivateDir } from '../../../db/lock.ts';
import { isDiskFull } from '../../disk.ts';
import { BACKUP_TEMP_DIR, type DataFile, hashFile, keptFiles } from './data-files.ts';
import { BackupError } from './errors.ts';
import {
  describeDatabase,
  type FileRecord,
  FORMAT,
  FORMAT_VERSION,
  fingerprint,
  keyCheck,
  MANIFEST_ENTRY,
  type Manifest,
  tableSums,
} from './manifest.ts';
import { pgDump } from './pg-tools.ts';
import { TarWriter } from './tar.ts';

export interface BackupSource {
  config: { dataDir: string; secretKey: Buffer | null };
  /** The installation's database, open (inside a server: the server's own). */
  database: Database;
  now: Date;
}

export interface CreatedBackup {
  /** The archive, in DATA_DIR/backup-tmp, for the caller to move (or remove). */
  tempPath: string;
  bytes: number;
  manifest: Manifest;
}

/** Whether DATA_DIR holds an embedded database (opening one that does not would create it). */
export function hasEmbeddedDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, 'pglite', 'PG_VERSION'));
}

/** The dumped database: its entry, the fingerprint of exactly what was dumped, and its bytes. */
interface DatabasePart {
  record: FileRecord;
  described: Awaited<ReturnType<typeof describeDatabase>>;
  tables: Manifest['tables'];
  source: Buffer | string;
}

async function dumpEmbedded(database: Database & { engine: 'pglite' }): Promise<DatabasePart> {
  const dump = await database.pglite.dumpDataDir('none');
  const bytes = Buffer.from(await dump.arrayBuffer());
  const copy = await openDatabase({ engine: 'pglite', dataDir: null, loadDataDir: dump });
  try {
    const client = await copy.pool.connect();
    try {
      const found = await fingerprint(client);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      return { ...found, record: { path: 'database/pglite.tar', bytes: bytes.length, sha256 }, source: bytes };
    } finally {
      client.release();
    }
  } finally {
    await copy.close();
  }
}

async function dumpPostgres(url: string, path: string): Promise<DatabasePart> {
  const client = new pg.Client({ connectionString: url, application_name: 'hostplane backup' });
  await client.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const { rows } = await client.query<{ s: string }>('select pg_export_snapshot() as s');
    const snapshot = rows[0]?.s as string;
    // The snapshot stays importable while this transaction is open: pg_dump and the fingerprint
    // read the same state. (The transaction's own settings are SET LOCAL, inside it.)
    const [dumped, tables, described] = await Promise.all([
      pgDump(url, snapshot, path),
      tableSums(client),
      describeDatabase(client),
    ]);
    await client.query('commit');
    return { tables, described, record: { path: 'database/postgresql.dump', ...dumped }, source: path };
  } finally {
    await client.end();
  }
}

/** A kept file with its entry name, size and hash (and its bytes, when read whole). */
type KeptFile = DataFile & FileRecord & { data?: Buffer };

/** Hash the kept files (reading the mutable ones whole); one removed meanwhile (an erased proof) is left out. */
async function hashKept(kept: DataFile[]): Promise<KeptFile[]> {
  const out: KeptFile[] = [];
  for (const file of kept) {
    const path = `files/${file.path}`;
    try {
      if (file.mutable) {
        const data = await readFile(file.absolute);
        out.push({ ...file, path, data, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') });
      } else {
        out.push({ ...file, path, ...(await hashFile(file.absolute)) });
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return out;
}

/** A file's bytes as they are copied, failing at the end if they are not the ones hashed before. */
async function* verified(file: KeptFile): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file.absolute) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    yield chunk;
  }
  if (hash.digest('hex') !== file.sha256) throw new Error(`${file.path} changed while it was being archived`);
}

async function writeArchive(
  path: string,
  manifest: Manifest,
  database: DatabasePart,
  files: KeptFile[],
  now: Date,
): Promise<void> {
  const gzip = createGzip();
  const done = pipeline(gzip, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  const tar = new TarWriter(gzip, now);
  try {
    const text = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    await tar.add(MANIFEST_ENTRY, text.length, [text]);
    const { source, record } = database;
    await tar.add(
      record.path,
      record.bytes,
      typeof source === 'string' ? (createReadStream(source) as AsyncIterable<Buffer>) : [source],
    );
    for (const file of files) await tar.add(file.path, file.bytes, file.data ? [file.data] : verified(file));
    await tar.finish();
    gzip.end();
    await done;
  } catch (error) {
    gzip.destroy(error as Error);
    await done.catch(() => {});
    throw error;
  }
}

/** Temporaries a CLI that died left behind (older than a day). */
async function clearStale(dir: string, now: Date): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info && now.getTime() - info.mtimeMs > 86_400_000) await rm(path, { force: true, recursive: true });
  }
}

export async function createBackup({ config, database, now }: BackupSource): Promise<CreatedBackup> {
  const tempDir = join(config.dataDir, BACKUP_TEMP_DIR);
  ensurePrivateDir(tempDir);
  await clearStale(tempDir, now);
  const id = randomBytes(8).toString('hex');
  const archive = join(tempDir, `${id}.tar.gz`);
  const dumpPath = join(tempDir, `${id}.dump`);
  try {
    const dumped =
      database.engine === 'pglite' ? await dumpEmbedded(database) : await dumpPostgres(database.url, dumpPath);
    const keyInDataDir = config.secretKey === null;
    const files = await hashKept(await keptFiles(config.dataDir, keyInDataDir));
    const keyFile = files.find((f) => f.path === 'files/secret.key');
    const key =
      config.secretKey ?? (keyFile ? Buffer.from((await readFile(keyFile.absolute, 'utf8')).trim(), 'base64') : null);
    const manifest: Manifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      created_at: now.toISOString(),
      engine: database.engine,
      database_version: dumped.described.serverVersion,
      schema_version: dumped.described.schemaVersion,
      installation_id: dumped.described.installationId,
      secret_key: key === null ? null : { source: keyInDataDir ? 'data_dir' : 'environment', check: keyCheck(key) },
      database: dumped.record,
      files: files.map(({ path, bytes, sha256 }) => ({ path, bytes, sha256 })),
      tables: dumped.tables,
    };
    await writeArchive(archive, manifest, dumped, files, now);
    return { tempPath: archive, bytes: (await stat(archive)).size, manifest };
  } catch (error) {
    await rm(archive, { force: true });
    if (isDiskFull(error))
      throw new BackupError(
        'insufficient_storage',
        `no space left on the disk of ${tempDir}, where the backup is assembled (${(error as NodeJS.ErrnoException).code}); ` +
          'nothing was kept: free space there (about the size of the database and the uploads) and run it again',
      );
    throw error;
  } finally {
    await rm(dumpPath, { force: true });
  }
}
