// ci: one engine (the embedded database only; the second engine would run it again unchanged)
// How the embedded database opens at start-up (issue 39; db/embedded-start.ts, db/template.ts):
// an empty DATA_DIR of `npm start` is created from the migrated template — each with its own
// installation id, the demo catalogue seeded, the migrations up to date — or the long way when this
// release has no template; the opening `npm start` begins before its modules load is the one
// openDatabase takes (another data directory's is closed and unlocked; a locked directory is left
// to openDatabase to refuse); a start of an up-to-date database migrates and analyses nothing.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { analyzeEmbedded } from '../src/core/housekeeping.ts';
import { openDatabase } from '../src/db/database.ts';
import { prestartEmbedded } from '../src/db/embedded-start.ts';
import { DataDirLockedError, LOCK_FILE } from '../src/db/lock.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { migrateToLatest } from '../src/db/migrator.ts';
import { cachedTemplate } from '../src/db/template.ts';
import { ensureTemplate } from '../src/db/template-build.ts';
import { freePort, runNode, runToEnd, tempDirs, waitForJson } from './support/process.ts';

const MAIN = 'server/src/main.ts';
const ADMIN = 'server/src/admin/main.ts';
const freshDir = tempDirs('hostplane-start-');

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  return { logger, text: () => lines.join('') };
}

const lockOwner = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')) as { pid: number };

before(async () => {
  await ensureTemplate(); // `npm test` has built it already; a file run alone builds it here
});

describe('a new embedded database', () => {
  // One `npm start` (a process costs CI seconds): that the template carries no installation id
  // of its own, so every database makes its own, is the next test's (the installation table empty).
  test('npm start on an empty DATA_DIR: from the template, an installation id of its own, the demo catalogue seeded', async () => {
    const dataDir = freshDir();
    const port = await freePort();
    const server = runNode(MAIN, [], { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DEMO: '1' });
    try {
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, server);
      assert.match(server.output(), /database created from the migrated template/);
      assert.doesNotMatch(server.output(), /database migrated/, 'nothing left to migrate after the template');
      const plans = await runToEnd(ADMIN, ['plans', 'list', '--json'], { DATA_DIR: dataDir });
      assert.equal(plans.code, 0, plans.output);
      assert.ok((JSON.parse(plans.output) as unknown[]).length > 0, 'the demo catalogue is seeded');
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
    } finally {
      server.child.kill('SIGKILL');
    }
    const id = await runToEnd(ADMIN, ['install-id', 'show', '--json'], { DATA_DIR: dataDir });
    assert.equal(id.code, 0, id.output);
    assert.match((JSON.parse(id.output) as { installation_id: string }).installation_id, /^[a-z2-7]{8}$/);
    const info = await runToEnd(ADMIN, ['system', 'info', '--json'], { DATA_DIR: dataDir });
    assert.equal(info.code, 0, info.output);
    assert.deepEqual((JSON.parse(info.output) as { migrations: { pending: string[] } }).migrations.pending, []);
  });

  test('from the template: migrated, nothing of an installation; opened again, the same database', async () => {
    const dataDir = freshDir();
    const { logger, text } = recordingLogger();
    const target = { engine: 'pglite' as const, dataDir, template: true };
    const database = await openDatabase(target, logger);
    try {
      assert.match(text(), /database created from the migrated template/);
      assert.deepEqual(await migrateToLatest(database.db), []);
      const { rows } = await sql<{ n: string }>`select count(*) as n from installation`.execute(database.db);
      assert.equal(rows[0]?.n, '0');
      await sql`insert into installation (id) values ('abcdefgh')`.execute(database.db);
      const analysed = await analyzeEmbedded(database.db);
      assert.ok(analysed.includes('public.installation'), 'a new database gets its statistics');
      assert.deepEqual(await analyzeEmbedded(database.db), [], 'then only tables without any');
    } finally {
      await database.close();
    }
    const reopened = recordingLogger();
    const again = await openDatabase(target, reopened.logger);
    try {
      assert.doesNotMatch(reopened.text(), /template/, 'an existing database is opened, not replaced');
      const { rows } = await sql<{ id: string }>`select id from installation`.execute(again.db);
      assert.deepEqual(rows, [{ id: 'abcdefgh' }]);
    } finally {
      await again.close();
    }
  });

  test('without a template of this release: initdb and every migration', async () => {
    assert.equal(cachedTemplate(freshDir()), null, "a directory without this release's template has none");
    const { logger, text } = recordingLogger();
    // What openDatabase does when cachedTemplate() finds none: as without `template`.
    const database = await openDatabase({ engine: 'pglite', dataDir: freshDir(), template: false }, logger);
    try {
      assert.doesNotMatch(text(), /template/);
      assert.deepEqual(await migrateToLatest(database.db), Object.keys(migrations).sort());
    } finally {
      await database.close();
    }
  });
});

describe('the opening begun before the modules load', () => {
  test('openDatabase takes the one begun for its data directory', async () => {
    const dataDir = freshDir();
    const target = { dataDir, role: 'early test', template: true };
    assert.equal(prestartEmbedded(target), true);
    assert.equal(lockOwner(dataDir).pid, process.pid, 'the lock is taken at once');
    const database = await openDatabase({ engine: 'pglite', ...target });
    try {
      const { rows } = await sql<{ n: number }>`select 1 as n`.execute(database.db);
      assert.deepEqual(rows, [{ n: 1 }]);
    } finally {
      await database.close();
    }
    assert.throws(() => readFileSync(join(dataDir, LOCK_FILE)), /ENOENT/, 'closed, the lock is released');
  });

  test('one begun for another data directory is closed and unlocked', async () => {
    const begun = freshDir();
    assert.equal(prestartEmbedded({ dataDir: begun, role: 'early test', template: true }), true);
    const other = freshDir();
    const database = await openDatabase({ engine: 'pglite', dataDir: other, role: 'early test', template: true });
    try {
      assert.throws(() => readFileSync(join(begun, LOCK_FILE)), /ENOENT/);
      assert.equal(lockOwner(other).pid, process.pid);
    } finally {
      await database.close();
    }
  });

  test('a data directory another process holds is left alone, for openDatabase to refuse', async () => {
    const dataDir = freshDir();
    const holder = {
      pid: process.ppid,
      host: hostname(),
      started: null,
      role: 'npm start',
      at: new Date().toISOString(),
    };
    writeFileSync(join(dataDir, LOCK_FILE), `${JSON.stringify(holder)}\n`);
    assert.equal(prestartEmbedded({ dataDir, role: 'early test' }), false);
    await assert.rejects(openDatabase({ engine: 'pglite', dataDir, role: 'early test' }), DataDirLockedError);
    assert.equal(lockOwner(dataDir).pid, process.ppid, 'the holder keeps its lock');
  });
});
