// The real entry points, as a user runs them: the server process (embedded and PostgreSQL),
// the data-directory lock between two processes, role flags, bad configuration, SIGTERM,
// and the staff CLI both on its own and through a running server.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { LOCK_FILE } from '../src/db/lock.ts';
import { createTestDatabase, onPostgres } from './support/harness.ts';
import { freePort, runNode, runToEnd, tempDirs, waitForJson } from './support/process.ts';

const MAIN = 'server/src/main.ts';
const ADMIN = 'server/src/admin/main.ts';
const freshDir = tempDirs('hostplane-proc-');

describe('embedded mode (npm start)', () => {
  test('serves health on pglite; a second process on the same DATA_DIR refuses; the CLI runs inside; SIGTERM stops cleanly', async () => {
    const dataDir = freshDir();
    const port = await freePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DEMO: '0' };
    const first = runNode(MAIN, [], env);
    try {
      // How fast it starts is measured by `npm run bench -- startup`, not asserted here.
      const health = await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, first);
      assert.equal((health.data as { engine: string }).engine, 'pglite');

      const second = await runToEnd(MAIN, [], { ...env, PORT: String(await freePort()) });
      assert.equal(second.code, 2);
      assert.match(second.output, /in use by process \d+/);
      const still = await fetch(`http://127.0.0.1:${port}/api/v1/health/`);
      assert.equal(still.status, 200, 'the first keeps serving');

      const info = await runToEnd(ADMIN, ['system', 'info', '--json'], { DATA_DIR: dataDir });
      assert.equal(info.code, 0, info.output);
      const json = JSON.parse(info.output) as { engine: string; migrations: { pending: string[] } };
      assert.equal(json.engine, 'pglite');
      assert.deepEqual(json.migrations.pending, []);

      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);
      assert.match(first.output(), /shutting down/);
      assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'lock released');
    } finally {
      first.child.kill('SIGKILL');
    }
    // With the server gone, the CLI opens the database itself.
    const direct = await runToEnd(ADMIN, ['system', 'info'], { DATA_DIR: dataDir });
    assert.equal(direct.code, 0, direct.output);
    assert.match(direct.output, /engine\s+pglite/);
  });

  test('SIGTERM while still starting stops the process cleanly once it has started', async () => {
    const dataDir = freshDir();
    const env = { DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: 'info', DEMO: '0' };
    const server = runNode(MAIN, [], env);
    try {
      // The first line of a fresh start (created from the migrated template, which `npm test` builds,
      // or migrated): the HTTP port, the worker and the rest are not up yet.
      const first = /database (migrated|created from the migrated template)/;
      for (let i = 0; i < 1200 && !first.test(server.output()); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(server.output(), first);
      server.child.kill('SIGTERM');
      // Before, the signal's default action killed it mid-start (exit code null, lock left behind).
      assert.equal(await server.exited, 0, server.output());
      assert.match(server.output(), /signal while starting/);
      assert.match(server.output(), /"msg":"stopped"/);
      assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'lock released');
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  test('npm run api / worker refuse on the embedded database, saying why', async () => {
    for (const role of ['api', 'worker']) {
      const result = await runToEnd(MAIN, [`--role=${role}`], { DATA_DIR: freshDir() });
      assert.equal(result.code, 2);
      assert.match(result.output, /needs PostgreSQL/);
    }
  });

  test('bad configuration exits non-zero with a clear message', async () => {
    const port = await runToEnd(MAIN, [], { PORT: 'abc', DATA_DIR: freshDir() });
    assert.equal(port.code, 2);
    assert.match(port.output, /PORT="abc": must be a whole number/);
    const url = await runToEnd(MAIN, [], {
      DATABASE_URL: 'mysql://root:pw@localhost/x',
      SECRET_KEY: randomBytes(32).toString('base64'),
    });
    assert.equal(url.code, 2);
    assert.match(url.output, /DATABASE_URL=.*only postgres/);
  });

  test('a database that does not answer at start exits 1 (a service manager retries), not 2', async () => {
    const down = await runToEnd(MAIN, ['--role=api'], {
      DATABASE_URL: 'postgres://hostplane@127.0.0.1:1/hostplane',
      SECRET_KEY: randomBytes(32).toString('base64'),
    });
    assert.equal(down.code, 1);
    assert.match(
      down.output,
      /database does not answer \(postgres:\/\/hostplane@127\.0\.0\.1:1\/hostplane\).*ECONNREFUSED/,
    );
  });
});

describe('staff CLI', () => {
  test('--help lists commands without touching a database; unknown commands are usage errors', async () => {
    const help = await runToEnd(ADMIN, ['--help'], { DATA_DIR: '/nonexistent/never-created' });
    assert.equal(help.code, 0);
    assert.match(help.output, /Usage: npm run admin -- <noun> <verb>/);
    assert.match(help.output, /system info/);
    const unknown = await runToEnd(ADMIN, ['frobnicate', 'now'], { DATA_DIR: freshDir() });
    assert.equal(unknown.code, 2);
    assert.match(unknown.output, /unknown command "frobnicate"/);
  });
});

describe('PostgreSQL mode', { skip: !onPostgres && 'set TEST_DATABASE_URL to run' }, () => {
  test('npm start says postgresql; api and worker run apart', async () => {
    const testDb = await createTestDatabase();
    await testDb.database.close();
    const secret = randomBytes(32).toString('base64');
    const port = await freePort();
    const base = { DATABASE_URL: testDb.url as string, SECRET_KEY: secret, DATA_DIR: freshDir(), LOG_LEVEL: 'info' };
    const all = runNode(MAIN, [], { ...base, PORT: String(port) });
    try {
      const health = await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, all);
      assert.equal((health.data as { engine: string }).engine, 'postgresql');
      const apiPort = await freePort();
      const api = runNode(MAIN, ['--role=api'], { ...base, PORT: String(apiPort) });
      const worker = runNode(MAIN, ['--role=worker'], { ...base, PORT: String(await freePort()) });
      try {
        await waitForJson(`http://127.0.0.1:${apiPort}/api/v1/health/`, api);
        // The limit only guards against a hang.
        for (let waited = 0; !/worker running/.test(worker.output()); waited += 100) {
          assert.ok(waited < 120_000, worker.output());
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        api.child.kill('SIGTERM');
        worker.child.kill('SIGTERM');
        assert.equal(await api.exited, 0);
        assert.equal(await worker.exited, 0);
      }
    } finally {
      all.child.kill('SIGTERM');
      await all.exited;
      await testDb.drop();
    }
  });
});
