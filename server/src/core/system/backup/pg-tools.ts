// pg_dump and pg_restore, the PostgreSQL client programs a PostgreSQL backup is made and restored
// with (found on PATH; the server's major version or newer). The password travels in PGPASSWORD,
// never on the command line, where other local users could read it (/proc/<pid>/cmdline).

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isDiskFull } from '../../disk.ts';
import { BackupError } from './errors.ts';

/** DATABASE_URL without its password, and the environment that carries it. */
function connection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return {
    dbname: parsed.toString(),
    env: { ...process.env, ...(password === '' ? {} : { PGPASSWORD: password }) },
  };
}

/** Run a client program; resolves when it exits 0, else throws tool_failed with the end of what it printed. */
function run(
  program: 'pg_dump' | 'pg_restore',
  args: string[],
  url: string,
  onStdout?: (stdout: NodeJS.ReadableStream) => Promise<void>,
): Promise<void> {
  const { dbname, env } = connection(url);
  const child = spawn(program, [...args, `--dbname=${dbname}`], {
    env,
    stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const reading = onStdout && child.stdout ? onStdout(child.stdout) : Promise.resolve();
  return Promise.all([exited, reading]).then(
    ([code]) => {
      if (code !== 0) throw new BackupError('tool_failed', `${program} failed (exit ${code}): ${stderr.trim()}`);
    },
    (error: NodeJS.ErrnoException) => {
      child.kill('SIGKILL');
      // Writing what it printed met a full disk: the caller says where (create.ts).
      if (isDiskFull(error)) throw error;
      if (error.code === 'ENOENT')
        throw new BackupError(
          'tool_failed',
          `${program} is not on PATH: install the PostgreSQL client programs (the server's major version or newer)`,
        );
      if (error instanceof BackupError) throw error;
      throw new BackupError('tool_failed', `${program} failed: ${error.message}; ${stderr.trim()}`);
    },
  );
}

/**
 * pg_dump in the custom format (uncompressed: the backup file is compressed whole) of the
 * snapshot `snapshot` (pg_export_snapshot of a transaction kept open meanwhile) into a new
 * file `path` (0600); its size and SHA-256.
 */
export async function pgDump(url: string, snapshot: string, path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await run(
    'pg_dump',
    ['--format=custom', '--compress=0', `--snapshot=${snapshot}`, '--no-unlogged-table-data'],
    url,
    (stdout) => pipeline(stdout, tap, createWriteStream(path, { flags: 'wx', mode: 0o600 })),
  );
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * pg_restore of `path` into the (empty) database of `url`, in one transaction: it lands whole or
 * not at all. Objects are owned by the user of `url` (the dump's owners and grants are not kept:
 * the restoring server may not have those roles).
 */
export function pgRestore(url: string, path: string): Promise<void> {
  return run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', path], url);
}
