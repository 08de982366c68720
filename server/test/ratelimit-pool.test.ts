// On PostgreSQL without Redis, rate limits are counted in the database. A deploy counts its
// allowance inside its transaction, so the store must not share the connection pool the
// transactions hold: with more concurrent deploys than pooled connections, every connection was
// held by a transaction waiting for one more to count on, and no deploy finished (connection
// timeouts, 500s). The store now has a pool of its own.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const CONCURRENT = 30; // three times the default pool of 10

describe('rate limits in PostgreSQL under concurrent deploys', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let u: UpstreamApp;
  let clients: ApiClient[];
  before(async () => {
    u = await createUpstreamApp({ worker: false, redis: false, capacity: 1000 });
    clients = [];
    for (let i = 0; i < CONCURRENT; i++) clients.push(await apiClient(u.t, ['*'], '1000'));
  });
  after(() => u?.close());

  test(`${CONCURRENT} accounts deploy at once: every deploy is placed`, { timeout: 120_000 }, async () => {
    assert.equal(u.t.config.redisUrl, null, 'counted in PostgreSQL, not Redis');
    const answers = await Promise.all(
      clients.map((c, i) =>
        c.call('POST', '/api/v1/instances', {
          plan: 'vps-1c-1g',
          server_name: `pool${i}`,
          eula: true,
          idempotency_key: `pool-${i}`,
        }),
      ),
    );
    const statuses = answers.map((a) => a.statusCode);
    assert.deepEqual(
      statuses,
      clients.map(() => 201),
      answers.find((a) => a.statusCode !== 201)?.body,
    );
  });
});
