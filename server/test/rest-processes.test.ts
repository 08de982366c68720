// Two API processes on one PostgreSQL and one Redis (reliability T7, T8): one token's 600 a
// minute is exact across both, and a revocation made through one reaches the other.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { closeDeps, createDeps, type Deps } from '../src/core/deps.ts';
import { openDatabase } from '../src/db/database.ts';
import { createTestDatabase, onPostgres, redisUrl } from './support/harness.ts';
import { freePort, type Running, runNode, waitForJson } from './support/process.ts';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('two API processes', { skip: !(onPostgres && redisUrl) && 'needs TEST_DATABASE_URL and REDIS_URL' }, () => {
  test('600 a minute per token, exact across both; revocation reaches the other process', {
    timeout: 120_000,
  }, async () => {
    const testDb = await createTestDatabase();
    await testDb.database.close();
    const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-2api-'));
    cleanups.push(
      () => rmSync(dataDir, { recursive: true, force: true }),
      () => testDb.drop(),
    );
    const env = {
      DATABASE_URL: testDb.url as string,
      REDIS_URL: redisUrl as string,
      REDIS_PREFIX: `hp-test-${randomBytes(4).toString('hex')}`,
      SECRET_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: dataDir,
      DEMO: '0',
      LOG_LEVEL: 'warn',
    };
    const database = await openDatabase({ engine: 'postgresql', url: env.DATABASE_URL });
    const deps: Deps = await createDeps(loadConfig(env), database, pino({ level: 'silent' }));
    cleanups.push(async () => {
      await closeDeps(deps);
      await database.close();
    });
    const account = await deps.accounts.register({
      name: 'Two Nodes',
      email: 'two@example.in',
      username: 'twonodes',
      password: 'two-nodes-1',
    });
    const { secret } = await deps.tokens.create(account.id, { name: 'busy', scopes: ['read'] });
    const { secret: second, token: secondToken } = await deps.tokens.create(account.id, {
      name: 'revoked later',
      scopes: ['read'],
    });

    const servers: { url: string; process: Running }[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const running = runNode('server/src/main.ts', ['--role=api'], { ...env, PORT: String(port) });
      cleanups.push(() => void running.child.kill('SIGKILL'));
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, running);
      servers.push({ url: `http://127.0.0.1:${port}`, process: running });
    }
    const get = (server: number, token: string) =>
      fetch(`${servers[server]?.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      );

    const statuses = await Promise.all(Array.from({ length: 700 }, (_, i) => get(i % 2, secret)));
    assert.equal(statuses.filter((s) => s === 200).length, 600, 'exactly 600 across the two processes');
    assert.equal(statuses.filter((s) => s === 429).length, 100);
    const redis = new Redis(redisUrl as string);
    const counted = await redis.keys(`${env.REDIS_PREFIX}:token_requests:*`);
    redis.disconnect();
    assert.equal(counted.length, 1, 'the counters live under REDIS_PREFIX, apart from other installations');

    assert.equal(await get(1, second), 200, 'process B has the second token cached');
    await deps.tokens.revoke(account.id, secondToken.id);
    // The revocation reaches B through NOTIFY: wait for it (the deadline only guards against a hang).
    const deadline = Date.now() + 60_000;
    while ((await get(1, second)) !== 401) {
      if (Date.now() > deadline) assert.fail('B still accepts the token revoked elsewhere');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await get(0, second), 401);
  });
});
