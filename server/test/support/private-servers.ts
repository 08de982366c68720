// PostgreSQL and Redis servers of a test's own, for failure drills that stop and start them
// (server/test/drills.test.ts). CI's shared servers are used by other test files at the same time
// and must never be stopped; these live in a temporary directory, listen on loopback only, and are
// removed by destroy().
//
// PostgreSQL refuses to run as root: when the tests run as root, initdb and pg_ctl run as the
// `postgres` user (runuser), on a directory handed to it.

import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The first of a few ports from `base` nobody listens on (fixed ports: a restart gets its port back). */
export async function portFrom(base: number, tries = 20): Promise<number> {
  for (let port = base; port < base + tries; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${base}–${base + tries - 1}`);
}

/** The directory of PostgreSQL's server programs, or null when none is installed. */
function postgresBin(): string | null {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    return existsSync(join(dir, 'initdb')) ? dir : null;
  } catch {
    return null;
  }
}

const asRoot = process.getuid?.() === 0;

/** Why a private PostgreSQL cannot be started here, or null when it can. */
export function privatePostgresMissing(): string | null {
  if (postgresBin() === null) return 'no PostgreSQL server programs (initdb) on this machine';
  if (asRoot) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root and there is no `postgres` user to run a private PostgreSQL as';
    }
  }
  return null;
}

export interface PrivatePostgres {
  port: number;
  /** Connection URL of `database` (the default: `postgres`). */
  url(database?: string): string;
  /** A new empty database; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m fast`: sessions are ended, new connections refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(basePort: number): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (bin === null) throw new Error('no PostgreSQL server programs');
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-drill-pg-'));
  const data = join(dir, 'data');
  let as: string[] = [];
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    as = ['runuser', '-u', 'postgres', '--'];
  }
  // Asynchronously: the app under test runs in this process and must keep answering meanwhile.
  const exec = async (program: string, args: string[]) => {
    const [file, ...rest] = [...as, join(bin, program), ...args];
    await run(file as string, rest, { cwd: dir });
  };
  const port = await portFrom(basePort);
  // fsync off: the drills stop the server cleanly (`-m fast` writes a shutdown checkpoint); they
  // never need the data to survive a crash of the machine.
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=60',
  ].join(' ');
  const start = () => exec('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  try {
    await exec('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let running = true;
  return {
    port,
    url,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: url() });
      await admin.connect();
      try {
        await admin.query(`create database "${name}"`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async stop() {
      await exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async destroy() {
      if (running) await exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether redis-server is installed. */
export function privateRedisMissing(): string | null {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'no redis-server on this machine';
  }
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** Stop the server (SIGTERM) and wait for it to exit. */
  stop(): Promise<void>;
  /** Start it again on the same port (with what it persisted). */
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its connections and answers nothing, as a hung one would. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  destroy(): Promise<void>;
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not listen on ${port}`);
}

/**
 * A redis-server child. `persist`: an append-only file written on every change, so that a stop
 * and start keeps the counters (as a Redis with `appendonly` does).
 */
export async function startPrivateRedis(basePort: number, persist: boolean): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-drill-redis-'));
  const port = await portFrom(basePort);
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    ...(persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  let child: ChildProcess | null = null;
  const start = async () => {
    const next = spawn('redis-server', args, { stdio: 'ignore' });
    child = next;
    await listening(port, next);
  };
  const stop = async () => {
    const current = child;
    child = null;
    if (current === null || current.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      current.once('exit', () => resolve());
      current.kill('SIGTERM');
    });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
    async destroy() {
      (child as ChildProcess | null)?.kill('SIGCONT');
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
