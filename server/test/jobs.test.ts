// The job queue on the app's own database: transactional enqueue and retries.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { JobQueue, type QueueDefinition } from '../src/core/jobs/queue.ts';
import { createTestDatabase, silentLogger, type TestDatabase } from './support/harness.ts';
import { waitFor } from './support/wait.ts';

type TestJobs = { 'test.echo': { n: number }; 'test.flaky': { n: number }; 'test.long': { n: number } };
const policy: QueueDefinition = {
  retryLimit: 2,
  retryDelay: 0,
  retryBackoff: false,
  expireInSeconds: 30,
  concurrency: 2,
};

let testDb: TestDatabase;
/** test.long jobs wait on this until a test lets them go. */
let releaseLong: () => void = () => {};
const longHeld = new Promise<void>((resolve) => {
  releaseLong = resolve;
});
const longSeen: number[] = [];
let queue: JobQueue<TestJobs>;

before(async () => {
  testDb = await createTestDatabase();
  queue = new JobQueue<TestJobs>(
    testDb.database,
    // A long-running queue, as service.provision is: a heartbeat, several at once.
    { 'test.echo': policy, 'test.flaky': policy, 'test.long': { ...policy, heartbeatSeconds: 15, concurrency: 3 } },
    silentLogger,
  );
  await queue.start();
});
after(async () => {
  await queue.stop();
  await testDb.drop();
});

async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(25);
  }
}

describe('job queue', () => {
  test('a job sent in a rolled-back transaction never exists; a committed one runs once', async () => {
    const { db } = testDb.database;
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await queue.enqueue(trx, 'test.echo', { n: 1 });
        throw new Error('roll back');
      }),
      /roll back/,
    );
    let committedId: string | null = null;
    await db.transaction().execute(async (trx) => {
      committedId = await queue.enqueue(trx, 'test.echo', { n: 2 });
    });
    const { rows } = await sql<{ count: string }>`select count(*) from pgboss.job where name = 'test.echo'`.execute(db);
    assert.equal(rows[0]?.count, '1');

    const seen: number[] = [];
    await queue.work({
      'test.echo': async (payload) => {
        seen.push(payload.n);
      },
      'test.flaky': async (payload, context) => {
        if (context.retryCount < 2) throw new Error(`attempt ${context.retryCount} fails`);
        seen.push(payload.n);
      },
      'test.long': async (payload) => {
        longSeen.push(payload.n);
        if (payload.n === 1) await longHeld;
      },
    });
    await until(() => seen.includes(2));
    assert.deepEqual(seen, [2]);
    assert.ok(committedId);
  });

  test('a failing job is retried and completes on a later attempt', async () => {
    const id = await queue.enqueue(testDb.database.db, 'test.flaky', { n: 7 });
    assert.ok(id);
    await waitFor('the flaky job to complete', async () => (await queue.find('test.flaky', id))?.state === 'completed');
  });

  test('a long job holds one slot of its queue: the jobs sent after it run meanwhile', async () => {
    const { db } = testDb.database;
    const first = await queue.enqueue(db, 'test.long', { n: 1 });
    await until(() => longSeen.includes(1));
    const later = [await queue.enqueue(db, 'test.long', { n: 2 }), await queue.enqueue(db, 'test.long', { n: 3 })];
    for (const id of later) {
      assert.ok(id);
      await waitFor('a later job to complete', async () => (await queue.find('test.long', id))?.state === 'completed');
    }
    assert.ok(first);
    assert.equal((await queue.find('test.long', first))?.state, 'active', 'the first is still running');
    releaseLong();
    await waitFor(
      'the long job to complete',
      async () => (await queue.find('test.long', first))?.state === 'completed',
    );
  });
});
