// Exclusive lock on an embedded data directory. PGlite has no lock of its own and two
// processes on one directory corrupt it silently, so embedded mode must hold this lock for
// its whole life. A lock left by a dead process is taken over; one held by a live process
// refuses with a message naming the holder.

import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const LOCK_FILE = 'hostplane.lock';

export interface LockOwner {
  pid: number;
  host: string;
  /** Process start time from /proc (Linux), so a reused pid is not mistaken for the owner. */
  started: string | null;
  role: string;
  at: string;
}

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly dataDir: string;
  readonly owner: LockOwner;
  constructor(dataDir: string, owner: LockOwner) {
    super(
      `the embedded database in ${dataDir} is in use by process ${owner.pid} (${owner.role}, since ${owner.at}). ` +
        'Embedded mode is single-process: stop that process first, or set DATABASE_URL to use PostgreSQL ' +
        'for several processes.',
    );
    this.dataDir = dataDir;
    this.owner = owner;
  }
}

export interface DataDirLock {
  path: string;
  release(): void;
}

/**
 * Create `dir` (and missing parents) as 0700, or take group and other bits off an existing one.
 * Returns true when an existing directory had to be tightened.
 */
export function ensurePrivateDir(dir: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = lstatSync(dir).mode & 0o777;
  if ((mode & 0o077) === 0) return false;
  chmodSync(dir, mode & 0o700);
  return true;
}

/**
 * Take group and other permission bits off everything under `root` (symbolic links are left
 * alone and not followed). Older versions created the embedded database's files 0666 and its
 * directories 0755; this makes such a data directory private. Returns how many were changed.
 */
export function tightenTree(root: string): number {
  let changed = 0;
  const walk = (path: string) => {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      return; // removed meanwhile
    }
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) {
      chmodSync(path, stat.mode & 0o700);
      changed++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return changed;
}

/** Take the lock or throw DataDirLockedError. `role` is shown to whoever is refused. */
export function acquireDataDirLock(dataDir: string, role: string): DataDirLock {
  ensurePrivateDir(dataDir);
  const path = join(dataDir, LOCK_FILE);
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    started: processStartTime(process.pid),
    role,
    at: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${JSON.stringify(me)}\n`);
      } finally {
        closeSync(fd);
      }
      return { path, release: () => releaseIfMine(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = readText(path);
    if (text === null) continue; // removed between our open and read: try again
    const owner = parseOwner(text);
    if (owner !== null && isAlive(owner)) throw new DataDirLockedError(dataDir, owner);
    // Stale: move it aside atomically, so of two processes taking it over only one wins the rename.
    const aside = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, aside);
    } catch {
      continue;
    }
    if (readText(aside) !== text) {
      // We moved a fresh lock that another process wrote after our read; put it back and lose.
      renameSync(aside, path);
      const fresh = parseOwner(readText(path) ?? '');
      if (fresh !== null) throw new DataDirLockedError(dataDir, fresh);
      continue;
    }
    rmSync(aside, { force: true });
  }
  throw new Error(`could not take the lock ${path}; remove it if no Hostplane process uses ${dataDir}`);
}

/** The current holder of a data directory's lock, or null when it is free or stale. */
export function lockHolder(dataDir: string): LockOwner | null {
  const text = readText(join(dataDir, LOCK_FILE));
  const owner = text === null ? null : parseOwner(text);
  return owner !== null && isAlive(owner) ? owner : null;
}

function releaseIfMine(path: string): void {
  const owner = parseOwner(readText(path) ?? '');
  if (owner?.pid === process.pid) rmSync(path, { force: true });
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid)) return null;
    return {
      pid: value.pid,
      host: String(value.host ?? ''),
      started: typeof value.started === 'string' ? value.started : null,
      role: String(value.role ?? 'unknown'),
      at: String(value.at ?? 'unknown'),
    };
  } catch {
    return null;
  }
}

function isAlive(owner: LockOwner): boolean {
  if (owner.host !== '' && owner.host !== hostname()) return true; // cannot check another host: assume alive
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (owner.started === null) return true;
  const started = processStartTime(owner.pid);
  return started === null || started === owner.started;
}

function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime) counted after the command name, which may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
