// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE, lockHolder } from '../src/db/lock.ts';
import { tempDirs } from './support/process.ts';

const freshDir = tempDirs('hostplane-lock-');

/** The pid of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('data directory lock', () => {
  test('a second holder is refused with a message naming the first', () => {
    const dir = freshDir();
    const lock = acquireDataDirLock(dir, 'npm start');
    assert.throws(
      () => acquireDataDirLock(dir, 'second'),
      (error: unknown) =>
        error instanceof DataDirLockedError && /in use by process \d+ \(npm start/.test(error.message),
    );
    assert.equal(lockHolder(dir)?.pid, process.pid);
    lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    acquireDataDirLock(dir, 'third').release();
  });

  test('a lock left by a dead process is taken over', () => {
    const dir = freshDir();
    const stale = { pid: deadPid(), host: hostname(), started: null, role: 'crashed', at: '2026-01-01T00:00:00Z' };
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(stale));
    assert.equal(lockHolder(dir), null);
    const lock = acquireDataDirLock(dir, 'new owner');
    assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid, process.pid);
    lock.release();
  });

  test('a live pid with another start time (a reused pid) counts as stale', () => {
    const dir = freshDir();
    const reused = { pid: process.pid, host: hostname(), started: '1', role: 'old boot', at: '2026-01-01T00:00:00Z' };
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(reused));
    const lock = acquireDataDirLock(dir, 'after reboot');
    lock.release();
  });

  test('an unreadable lock file is treated as stale', () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), 'garbage');
    acquireDataDirLock(dir, 'x').release();
  });
});
