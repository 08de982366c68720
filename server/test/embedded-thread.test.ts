// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The embedded database in its own thread (db/embedded.ts, db/pglite-thread.ts; issue 18): pg
// talks to it over the wire protocol as to a server; statements run beside the event loop, not in
// it; notifications arrive once each, whichever path sent them; errors come back as PostgreSQL's;
// a dump loads back; a closed database fails what asks it instead of hanging.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../src/db/database.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let open: Database | null = null;
after(async () => {
  await open?.close();
});

async function embedded(loadDataDir?: Blob) {
  const database = await openDatabase({ engine: 'pglite', dataDir: null, ...(loadDataDir ? { loadDataDir } : {}) });
  if (database.engine !== 'pglite') throw new Error('expected the embedded engine');
  return database;
}

test('statements run in the database thread while the event loop goes on', { timeout: 60_000 }, async () => {
  const database = await embedded();
  open = database;
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    // In the server's thread (before issue 18's change) no timer could fire until the statement ended.
    await sql`select pg_sleep(2)`.execute(database.db);
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks > 0, 'the event loop ran while PostgreSQL slept');
});

test('results, parameters, errors and transactions go through pg as from a server', { timeout: 60_000 }, async () => {
  const database = open as Database;
  const { rows } = await sql<{ n: number; t: string; j: unknown }>`
    select ${41}::int + 1 as n, ${'héllo "quoted" \\ text'}::text as t, ${JSON.stringify({ a: [1, 2] })}::jsonb as j`.execute(
    database.db,
  );
  assert.deepEqual(rows, [{ n: 42, t: 'héllo "quoted" \\ text', j: { a: [1, 2] } }]);
  await assert.rejects(sql`select 1 / 0`.execute(database.db), (error: Error & { code?: string }) => {
    assert.equal(error.code, '22012');
    assert.match(error.message, /division by zero/);
    return true;
  });
  // The session is usable after an error, and a rolled-back transaction leaves nothing.
  await sql`create table thread_probe (id int primary key, note text)`.execute(database.db);
  await assert.rejects(
    database.db.transaction().execute(async (trx) => {
      await sql`insert into thread_probe values (1, 'rolled back')`.execute(trx);
      await sql`insert into thread_probe values (1, 'duplicate')`.execute(trx);
    }),
    (error: Error & { code?: string }) => error.code === '23505',
  );
  await database.db.transaction().execute(async (trx) => {
    await sql`insert into thread_probe values (2, 'kept')`.execute(trx);
  });
  const kept = await sql<{ id: number; note: string }>`select id, note from thread_probe order by id`.execute(
    database.db,
  );
  assert.deepEqual(kept.rows, [{ id: 2, note: 'kept' }]);
  // A large answer (several of PGlite's output chunks) arrives whole.
  const big = await sql<{ n: number; pad: string }>`
    select g as n, repeat('x', 200) as pad from generate_series(1, 20000) g`.execute(database.db);
  assert.equal(big.rows.length, 20_000);
  assert.equal(big.rows[19_999]?.n, 20_000);
  assert.equal(big.rows[0]?.pad.length, 200);
});

test('a notification reaches each listener once, from pg statements and direct ones alike', {
  timeout: 60_000,
}, async () => {
  const database = open as Database;
  if (database.engine !== 'pglite') throw new Error('expected the embedded engine');
  const got: string[] = [];
  const other: string[] = [];
  const unlisten = await database.pglite.listen('hp_thread_test', (payload) => got.push(payload));
  const unlistenOther = await database.pglite.listen('hp_thread_test', (payload) => other.push(`b:${payload}`));
  await sql`select pg_notify('hp_thread_test', 'outside a transaction')`.execute(database.db);
  await database.db.transaction().execute(async (trx) => {
    await sql`select pg_notify('hp_thread_test', 'committed')`.execute(trx);
  });
  await database.db
    .transaction()
    .execute(async (trx) => {
      await sql`select pg_notify('hp_thread_test', 'rolled back')`.execute(trx);
      throw new Error('roll back');
    })
    .catch(() => {});
  await database.pglite.query(`select pg_notify('hp_thread_test', 'direct')`);
  await sql`select pg_notify('hp_thread_other', 'not listened to')`.execute(database.db);
  // Delivery is a message from the thread: give it a turn of the event loop.
  for (let i = 0; i < 100 && got.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(got, ['outside a transaction', 'committed', 'direct']);
  assert.deepEqual(other, ['b:outside a transaction', 'b:committed', 'b:direct']);
  await unlistenOther();
  await sql`select pg_notify('hp_thread_test', 'after one left')`.execute(database.db);
  await unlisten();
  await sql`select pg_notify('hp_thread_test', 'after both left')`.execute(database.db);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(got, ['outside a transaction', 'committed', 'direct', 'after one left']);
  assert.equal(other.length, 3);
});

test('a connection dropped mid-transaction ends it; the next one starts clean', { timeout: 60_000 }, async () => {
  const database = open as Database;
  const client = await database.pool.connect();
  await client.query('begin');
  await client.query('insert into thread_probe values (3, $1)', ['never committed']);
  await assert.rejects(client.query('select 1 / 0'));
  // pg-pool discards a client released with an error: as a server would, the session rolls back.
  client.release(new Error('dropped'));
  const { rows } = await sql<{ id: number }>`select id from thread_probe order by id`.execute(database.db);
  assert.deepEqual(rows, [{ id: 2 }]);
  // And the same for a client ended with its transaction open.
  const second = await database.pool.connect();
  await second.query('begin');
  await second.query('insert into thread_probe values (4, $1)', ['never committed']);
  second.release(true);
  const after = await sql<{ id: number }>`select id from thread_probe order by id`.execute(database.db);
  assert.deepEqual(after.rows, [{ id: 2 }]);
});

test('LISTEN asked for during a transaction that rolls back still hears; names keep their case', {
  timeout: 60_000,
}, async () => {
  const database = open as Database;
  if (database.engine !== 'pglite') throw new Error('expected the embedded engine');
  const got: string[] = [];
  let listening: Promise<() => Promise<void>> | null = null;
  await database.db
    .transaction()
    .execute(async (trx) => {
      await sql`select 1`.execute(trx);
      listening = database.pglite.listen('"Mixed Case-Channel"', (payload) => got.push(payload));
      // Give the thread the message while the transaction is open.
      await new Promise((r) => setTimeout(r, 50));
      await sql`select 2`.execute(trx);
      throw new Error('roll back');
    })
    .catch(() => {});
  const unlisten = await (listening as unknown as Promise<() => Promise<void>>);
  await sql`select pg_notify('Mixed Case-Channel', 'heard')`.execute(database.db);
  for (let i = 0; i < 100 && got.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(got, ['heard']);
  await unlisten();
});

test('a node flag a thread may not have does not keep the database from opening', { timeout: 60_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hp-thread-flags-'));
  try {
    const run = spawnSync(
      process.execPath,
      ['--max-old-space-size=512', join(ROOT, 'server/src/admin/main.ts'), 'system', 'info', '--json'],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8', timeout: 55_000 },
    );
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
    assert.equal((JSON.parse(run.stdout) as { engine: string }).engine, 'pglite');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a dump of the data directory loads back; closing is clean, and a closed database refuses at once', {
  timeout: 60_000,
}, async () => {
  const database = open as Database;
  if (database.engine !== 'pglite') throw new Error('expected the embedded engine');
  const dump = await database.pglite.dumpDataDir('gzip');
  // Closing with the pool's connection idle is a clean end, not a failed connection (a warning at
  // every shutdown before).
  const failures: unknown[] = [];
  database.pool.on('error', (error) => failures.push(error));
  await database.close();
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(failures, []);
  open = null;
  await assert.rejects(sql`select 1`.execute(database.db));
  const copy = await embedded(dump);
  open = copy;
  const { rows } = await sql<{ note: string }>`select note from thread_probe`.execute(copy.db);
  assert.deepEqual(rows, [{ note: 'kept' }]);
  await copy.close();
  open = null;
  await assert.rejects(copy.pglite.query('select 1'), /closed/);
});
