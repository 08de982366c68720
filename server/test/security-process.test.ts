// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The server process against its surroundings: a log sink that stops reading or goes away
// must not keep it alive after SIGTERM, and the embedded data directory (F4) is private to
// the user running Hostplane: no group or other permission bit on anything under DATA_DIR.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { freePort, runNode, waitForJson } from './support/process.ts';
import { ROOT } from './support/template.ts';

const MAIN = 'server/src/main.ts';
/** Only guards against a hang: the process is expected to be gone long before. */
const GUARD_MS = 60_000;

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function freshParent(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-sec-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

/** Resolves with the exit code, or with 'hung' when the process is still alive after GUARD_MS. */
function exitOrHang(child: ReturnType<typeof spawn>): Promise<number | string | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode ?? child.signalCode);
    const timer = setTimeout(() => resolve('hung'), GUARD_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
  });
}

async function healthy(url: string): Promise<void> {
  for (let i = 0; i < GUARD_MS / 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no answer from ${url}`);
}

/** Enough requests that their access-log lines overflow the pipe's buffer several times. */
async function traffic(url: string, requests: number): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: 16 }, async () => {
    while (next < requests) {
      next++;
      const res = await fetch(url, { headers: { 'user-agent': 'x'.repeat(200) } });
      await res.arrayBuffer();
    }
  });
  await Promise.all(workers);
}

describe('SIGTERM with a log sink that does not take the log', () => {
  for (const sink of ['full', 'closed'] as const) {
    test(`stdout pipe ${sink === 'full' ? 'full (reader stopped reading)' : 'closed (reader gone)'}: exits 0 on one SIGTERM`, async () => {
      const dataDir = join(freshParent(), 'data');
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', join(ROOT, 'server/src/boot.ts'), join(ROOT, MAIN)], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'debug', DEMO: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // stdout is never read: the pipe fills up once the server has written its buffer's worth.
      child.stderr?.resume();
      try {
        const url = `http://127.0.0.1:${port}/api/v1/health/`;
        await healthy(url);
        if (sink === 'closed') child.stdout?.destroy();
        await traffic(url, 1500);
        child.kill('SIGTERM');
        const result = await exitOrHang(child);
        assert.notEqual(result, 'hung', 'still alive after SIGTERM: it needed a second signal');
        assert.equal(result, 0);
      } finally {
        child.kill('SIGKILL');
        child.stdout?.destroy();
      }
    });
  }
});

/** Every path under `root` (itself included) whose mode has a group or other bit. */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) found.push(`${(stat.mode & 0o777).toString(8)} ${path}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  // A short list keeps a failure readable: the count and the first few.
  return found.length > 5 ? [...found.slice(0, 5), `... ${found.length} in all`] : found;
}

describe('F4: the embedded data directory is private', () => {
  test('a fresh DATA_DIR under a 0755 parent, umask 022: nothing under it has a group/other bit', async () => {
    const dataDir = join(freshParent(), 'data');
    const port = await freePort();
    // runNode starts `node server/src/main.ts` as `npm start` does; the test runner's umask is inherited.
    const previous = process.umask(0o022);
    const server = runNode(MAIN, [], { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DEMO: '0' });
    process.umask(previous);
    try {
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, server, GUARD_MS);
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
    } finally {
      server.child.kill('SIGKILL');
    }
    assert.ok(statSync(join(dataDir, 'pglite', 'PG_VERSION')).isFile(), 'the database was created');
    assert.deepEqual(openToOthers(dataDir), []);
  });

  test('an existing DATA_DIR with 0755 directories and 0666 files is tightened at start, with a warning', async () => {
    const dataDir = join(freshParent(), 'data');
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DEMO: '0' };
    // First start creates the database; then loosen it as an older version left it.
    const first = runNode(MAIN, [], env);
    try {
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, first, GUARD_MS);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0, first.output());
    } finally {
      first.child.kill('SIGKILL');
    }
    const loosen = (path: string) => {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return;
      chmodSync(path, stat.isDirectory() ? 0o755 : 0o666);
      if (stat.isDirectory()) for (const name of readdirSync(path)) loosen(join(path, name));
    };
    loosen(dataDir);
    mkdirSync(join(dataDir, 'pglite', 'extra'), { mode: 0o777 });
    chmodSync(join(dataDir, 'pglite', 'extra'), 0o777);
    writeFileSync(join(dataDir, 'pglite', 'extra', 'file'), 'x', { mode: 0o666 });
    chmodSync(join(dataDir, 'pglite', 'extra', 'file'), 0o666);
    assert.notDeepEqual(openToOthers(dataDir), []);

    const second = runNode(MAIN, [], env);
    try {
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, second, GUARD_MS);
      assert.deepEqual(openToOthers(dataDir), []);
      assert.match(second.output(), /"level":40.*data directory/);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0, second.output());
    } finally {
      second.child.kill('SIGKILL');
    }
    assert.deepEqual(openToOthers(dataDir), []);
  });
});
