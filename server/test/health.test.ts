import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkDatabase } from '../src/core/system/health.ts';
import { markDraining, proxyStopped } from '../src/http/health.routes.ts';
import { createTestApp, onPostgres } from './support/harness.ts';

describe('GET /api/v1/health/', () => {
  test('public, legacy envelope, engine and version, ISO time with offset; both path forms', async () => {
    const t = await createTestApp();
    try {
      for (const url of ['/api/v1/health/', '/api/v1/health']) {
        const res = await t.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.equal(body.status, 'success');
        assert.deepEqual(Object.keys(body.data).sort(), [
          'database',
          'db_version',
          'engine',
          'service',
          'status',
          'timestamp',
        ]);
        assert.equal(body.data.database, 'connected');
        assert.equal(body.data.engine, onPostgres ? 'postgresql' : 'pglite');
        assert.match(body.data.db_version, onPostgres ? /^1[5-9]/ : /^18\./);
        assert.match(body.data.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/);
        assert.equal(body.data.status, 'healthy');
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    } finally {
      await t.close();
    }
  });

  test('database unreachable: 503, unhealthy, same envelope', async () => {
    const t = await createTestApp();
    try {
      await t.deps.database.close();
      const res = await t.inject({ method: 'GET', url: '/api/v1/health/' });
      assert.equal(res.statusCode, 503);
      const body = res.json();
      assert.equal(body.data.status, 'unhealthy');
      assert.equal(body.data.database, 'unreachable');
      assert.equal(body.data.db_version, null);
    } finally {
      await t.close().catch(() => {});
    }
  });

  test('a database that hangs is reported within the timeout, not waited on', async () => {
    const t = await createTestApp();
    try {
      // Hold every connection of the pool, as a stuck transaction would.
      const held = await Promise.all(Array.from({ length: onPostgres ? 10 : 1 }, () => t.deps.database.pool.connect()));
      // The check gives up on its own timeout (it resolves while the pool is still held);
      // how long that takes is not asserted.
      const result = await checkDatabase(t.deps.database, 300);
      assert.equal(result.ok, false);
      for (const client of held) client.release();
    } finally {
      await t.close();
    }
  });
});

describe('GET /livez and GET /readyz (CONTRACT §15)', () => {
  test('live and ready; ready no more once draining; live still', async () => {
    const t = await createTestApp();
    try {
      const live = await t.inject({ method: 'GET', url: '/livez' });
      assert.equal(live.statusCode, 200);
      assert.deepEqual(live.json(), { status: 'ok' });
      assert.equal(live.headers['cache-control'], 'no-store');
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json(), { status: 'ok' });
      markDraining(t.deps);
      const drained = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(drained.statusCode, 503);
      assert.deepEqual(drained.json(), { status: 'draining' });
      assert.equal((await t.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
      // Neither is logged per request (§15), while other routes are.
      const probeLines = t.logs.lines.filter((line) => /\/(livez|readyz)/.test(line));
      assert.deepEqual(probeLines, []);
      await t.inject({ method: 'GET', url: '/api/v1/health/' });
      assert.ok(t.logs.lines.some((line) => line.includes('/api/v1/health/')));
    } finally {
      await t.close();
    }
  });

  test('draining: every answer says Connection: close; the listener waits for a probe to see the 503 (proxyStopped)', async () => {
    const t = await createTestApp();
    try {
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.headers.connection, 'keep-alive');
      markDraining(t.deps);
      // Probed before (a proxy checks this process): the wait ends at the next probe, which answers 503.
      let ended = false;
      const waiting = proxyStopped(t.deps, { maxMs: 60_000, settleMs: 0 }).finally(() => {
        ended = true;
      });
      const health = await t.inject({ method: 'GET', url: '/api/v1/health/' });
      assert.equal(health.statusCode, 200, 'requests are still served while draining');
      assert.equal(health.headers.connection, 'close');
      assert.equal(ended, false, 'a request that is no probe does not end the wait');
      const drained = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(drained.statusCode, 503);
      assert.equal(drained.headers.connection, 'close');
      assert.equal(await waiting, 'probed');
    } finally {
      await t.close();
    }
    // Never probed (`npm start` at a desk, no proxy checking it): nothing to wait for.
    const alone = await createTestApp();
    try {
      markDraining(alone.deps);
      assert.equal(await proxyStopped(alone.deps, { maxMs: 60_000, settleMs: 0 }), 'unprobed');
    } finally {
      await alone.close();
    }
  });

  test('the database unreachable: not ready (503 unavailable), still live', async () => {
    const t = await createTestApp();
    try {
      await t.deps.database.close();
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), { status: 'unavailable' });
      assert.equal((await t.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
    } finally {
      await t.close().catch(() => {});
    }
  });
});
