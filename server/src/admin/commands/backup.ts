// `backup create [FILE]` and `backup restore FILE` (CONTRACT §15, docs/BACKUPS.md): the whole
// installation (database, uploaded proofs, the generated secret key, the demo's emulator state)
// in one file, for either engine. Create runs inside a running embedded server (its database is
// dumped between two of its statements) or on its own; restore runs in the CLI only, into an empty
// DATA_DIR (and database).

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createBackup, hasEmbeddedDatabase } from '../../core/system/backup/create.ts';
import { BackupError } from '../../core/system/backup/errors.ts';
import { latestMigration, type Manifest } from '../../core/system/backup/manifest.ts';
import { restoreBackup } from '../../core/system/backup/restore.ts';
import { type Command, CommandError, keyValues } from '../command.ts';

/** Run a backup step; its refusals become the CLI's (exit 1, their code with --json). */
async function refusing<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BackupError) throw new CommandError(error.code, error.message);
    throw error;
  }
}

function refuseExisting(path: string | undefined): void {
  if (path !== undefined && existsSync(resolve(path)))
    throw new CommandError('file_exists', `${path} exists already; choose another file name`);
}

function defaultName(manifest: Manifest): string {
  const at = manifest.created_at.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `hostplane-backup-${manifest.installation_id ?? 'new'}-${at}.tar.gz`;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const rowsOf = (manifest: Manifest) => Object.values(manifest.tables).reduce((sum, t) => sum + t.rows, 0);

function keyNote(manifest: Manifest): string {
  if (manifest.secret_key?.source === 'data_dir')
    return 'in the backup (generated into DATA_DIR): keep the file as secret as the key itself';
  if (manifest.secret_key?.source === 'environment') return 'not in the backup: restore with the same SECRET_KEY';
  return 'none';
}

const CREATE_DETAILS = `FILE defaults to hostplane-backup-<installation id>-<time>.tar.gz in the current directory; an
existing file is never replaced. The backup holds the database (embedded: a consistent copy taken
while the server runs; PostgreSQL: pg_dump of one snapshot, pg_dump on PATH), DATA_DIR/uploads/deposits
(payment proofs), DATA_DIR/emulators (demo mode) and, when SECRET_KEY is not set, DATA_DIR/secret.key:
the file is then as secret as the key. It is assembled in DATA_DIR/backup-tmp (as much free space as
the backup needs) and written 0600. See docs/BACKUPS.md.`;

const RESTORE_DETAILS = `Restores into an empty DATA_DIR (embedded), or an empty database (DATABASE_URL, pg_restore on
PATH) and an empty DATA_DIR (PostgreSQL); anything else is refused. The engine must be the backup's.
With SECRET_KEY in the environment the backup was made with, set the same one. Every entry is checked
against the backup's manifest, then the restored database's row counts and checksums; nothing is moved
into DATA_DIR unless all match. Start the copy with \`npm start\` (it applies newer migrations). Run it
with no server on DATA_DIR. See docs/BACKUPS.md.`;

export const backupCommands: Command[] = [
  {
    noun: 'backup',
    verb: 'create',
    summary: 'Back up the whole installation (database, uploads, generated secret key) to FILE',
    optionalArgs: ['FILE'],
    details: CREATE_DETAILS,
    // In the CLI, before a running server is asked to make it: a file that exists would be refused after.
    async readInputs(_options, _inputs, args) {
      refuseExisting(args[0]);
    },
    async runBare(context, { args }) {
      const { config } = context;
      if (!context.inServer) {
        refuseExisting(args[0]);
        if (config.engine === 'pglite' && !hasEmbeddedDatabase(config.dataDir))
          throw new CommandError('no_database', `DATA_DIR ${config.dataDir} holds no embedded database to back up`);
      }
      const database = await context.database();
      const created = await refusing(createBackup({ config, database, now: new Date() }));
      const { manifest } = created;
      const file = args[0] ?? defaultName(manifest);
      const json = {
        file,
        bytes: created.bytes,
        created_at: manifest.created_at,
        engine: manifest.engine,
        database_version: manifest.database_version,
        schema_version: manifest.schema_version,
        installation_id: manifest.installation_id,
        tables: Object.keys(manifest.tables).length,
        rows: rowsOf(manifest),
        files: manifest.files.length,
        secret_key: manifest.secret_key?.source ?? null,
      };
      const text = [
        `wrote ${file} (${megabytes(created.bytes)})`,
        keyValues({
          engine: `${manifest.engine} ${manifest.database_version}`,
          schema: manifest.schema_version,
          installation: manifest.installation_id,
          tables: `${json.tables} (${json.rows} rows)`,
          files: manifest.files.length,
          'secret key': keyNote(manifest),
        }),
      ].join('\n');
      return { text, json, files: [{ path: file, tempPath: created.tempPath, exclusive: true }] };
    },
  },
  {
    noun: 'backup',
    verb: 'restore',
    summary: 'Restore a backup FILE into an empty DATA_DIR (and, with PostgreSQL, an empty database)',
    args: ['FILE'],
    details: RESTORE_DETAILS,
    cliOnly: true,
    async runBare(context, { args }) {
      if (context.inServer)
        throw new CommandError('not_here', 'backup restore runs in the staff CLI, never inside a running server');
      const file = args[0] as string;
      const { manifest, rows } = await refusing(restoreBackup(context.config, file));
      const latest = latestMigration();
      const json = {
        file,
        created_at: manifest.created_at,
        engine: manifest.engine,
        schema_version: manifest.schema_version,
        latest_migration: latest,
        installation_id: manifest.installation_id,
        tables: Object.keys(manifest.tables).length,
        rows,
        files: manifest.files.length,
        data_dir: context.config.dataDir,
      };
      const text = [
        `restored ${file} (made ${manifest.created_at}) into ${context.config.engine === 'pglite' ? 'DATA_DIR' : 'DATABASE_URL and DATA_DIR'}`,
        keyValues({
          'data dir': context.config.dataDir,
          installation: manifest.installation_id,
          schema:
            manifest.schema_version === latest
              ? manifest.schema_version
              : `${manifest.schema_version} (\`npm start\` migrates it to ${latest})`,
          tables: `${json.tables} (${rows} rows), each checked against the backup`,
          files: manifest.files.length,
        }),
        'start it with `npm start`',
      ].join('\n');
      return { text, json };
    },
  },
];
