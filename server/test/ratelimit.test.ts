// Rate-limit stores: memory (embedded), PostgreSQL (the `rate_limits` table), Redis (REDIS_URL).
// Each must be exact at the boundary and under a parallel burst.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { AppError } from '../src/core/errors.ts';
import { createRateLimits, type RateLimitStore, type RateLimits } from '../src/core/ratelimit/rate-limits.ts';
import { createTestDatabase, redisUrl, type TestDatabase } from './support/harness.ts';
import { waitFor } from './support/wait.ts';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
});
after(() => testDb.drop());

const stores: [string, () => RateLimitStore][] = [
  ['memory', () => ({ kind: 'memory' })],
  ['postgres', () => ({ kind: 'postgres', pool: testDb.database.pool })],
  ...(redisUrl
    ? [['redis', () => ({ kind: 'redis', url: redisUrl as string })] as [string, () => RateLimitStore]]
    : []),
];

for (const [name, store] of stores) {
  describe(`rate limits on ${name}`, () => {
    let limits: RateLimits;
    before(() => {
      limits = createRateLimits(store(), `test:${randomBytes(4).toString('hex')}`);
    });
    after(() => limits.close());

    test('exactly `points` pass, the next is 429 with the window left', async () => {
      for (let i = 4; i >= 0; i--) assert.equal((await limits.consume('register_ip', 'a')).remaining, i);
      await assert.rejects(limits.consume('register_ip', 'a'), (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.status, 429);
        assert.equal(error.code, 'rate_limited');
        assert.ok((error.retryAfter ?? 0) > 3500);
        assert.equal(error.rateLimit?.remaining, 0);
        return true;
      });
      assert.equal((await limits.consume('register_ip', 'b')).remaining, 4, 'other keys are independent');
    });

    test('a parallel burst of 40 lets exactly 5 through', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, () => limits.consume('register_ip', 'burst')),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
    });

    test('block, check and reset', async () => {
      await limits.block('login_fail_account', 'acct', 900);
      await assert.rejects(limits.check('login_fail_account', 'acct', 'locked_out'), /Too many failed attempts/);
      await limits.reset('login_fail_account', 'acct');
      assert.equal((await limits.check('login_fail_account', 'acct')).remaining, 5);
    });
  });
}

describe('Redis: counts go in batches, on the keys every other operation uses', {
  skip: !redisUrl && 'REDIS_URL not set',
}, () => {
  let limits: RateLimits;
  let prefix: string;
  before(() => {
    prefix = `test:${randomBytes(4).toString('hex')}`;
    limits = createRateLimits({ kind: 'redis', url: redisUrl as string }, prefix);
  });
  after(() => limits.close());

  test('a burst of counts on many keys is one script call, each key exact', async () => {
    const redis = new Redis(redisUrl as string);
    try {
      await limits.consume('token_requests', 'warm'); // the script is loaded by now
      const calls = async () => {
        const stats = await redis.info('commandstats');
        return (
          Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
          Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)
        );
      };
      const before = await calls();
      const results = await Promise.allSettled(
        Array.from({ length: 90 }, (_, i) => limits.consume('register_ip', `k${i % 3}`)),
      );
      // Other clients may use the same Redis meanwhile (another test file): at most a few calls, not 90.
      assert.ok((await calls()) - before < 10, 'the 90 counts left in a handful of script calls');
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 15, '5 for each of the 3 keys');
      assert.equal(Number(await redis.get(`${prefix}:register_ip:k0`)), 30, 'the key rate-limiter-flexible reads');
      assert.ok((await redis.pttl(`${prefix}:register_ip:k0`)) > 3_500_000, "the window is the limit's hour");
    } finally {
      redis.disconnect();
    }
  });

  test('more counts at once than one call carries: each answered, in several calls', async () => {
    const results = await Promise.all(
      Array.from({ length: 4500 }, (_, i) => limits.consume('token_requests', `many:${i % 1500}`)),
    );
    const remaining = results.map((r) => r.remaining).sort((a, b) => a - b);
    assert.equal(remaining.filter((r) => r === 597).length, 1500, 'three counts of each of the 1,500 keys');
    assert.equal(remaining.filter((r) => r === 599).length, 1500);
  });

  test('refund, check, block and reset act on what the batch counted', async () => {
    for (let i = 4; i >= 0; i--) assert.equal((await limits.consume('register_ip', 'ops')).remaining, i);
    await limits.refund('register_ip', 'ops', 2);
    assert.equal((await limits.check('register_ip', 'ops')).remaining, 2);
    assert.equal((await limits.consume('register_ip', 'ops')).remaining, 1);
    await limits.reset('register_ip', 'ops');
    assert.equal((await limits.consume('register_ip', 'ops')).remaining, 4);
    await limits.block('register_ip', 'ops', 600);
    await assert.rejects(limits.consume('register_ip', 'ops'), (error: unknown) => {
      assert.ok(error instanceof AppError && error.status === 429);
      assert.ok((error.retryAfter ?? 0) > 500 && (error.retryAfter ?? 0) <= 600, String(error.retryAfter));
      return true;
    });
  });

  test('leases: a burst on one key asks Redis once per lease, each answer exact; two processes let exactly the limit through', async () => {
    const redis = new Redis(redisUrl as string);
    const other = createRateLimits({ kind: 'redis', url: redisUrl as string }, prefix);
    try {
      await limits.consume('token_requests', 'warm-lease');
      const calls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
      // One request after another (each answer awaited): 21 points a count (1 + a lease of 20)
      // while the first half of the window has room, so about five counts for 100 requests.
      const before = await calls();
      for (let i = 0; i < 100; i++) assert.equal((await limits.consume('token_requests', 'one')).remaining, 599 - i);
      // Other test files may use the same Redis meanwhile: far fewer than one call a request.
      assert.ok((await calls()) - before < 50, 'a count per lease, not per request');
      const counted = Number(await redis.get(`${prefix}:token_requests:one`));
      assert.ok(counted >= 100 && counted <= 120, `Redis counted the requests and at most one lease: ${counted}`);
      // A burst: each answer still counts the ones before it.
      const burst = await Promise.all(Array.from({ length: 110 }, () => limits.consume('token_requests', 'one')));
      assert.deepEqual(
        burst.map((r) => r.remaining).sort((a, b) => b - a),
        Array.from({ length: 110 }, (_, i) => 499 - i),
      );

      // Two processes on one key: the lease of one never lets the other through over the limit.
      const shared = await Promise.allSettled(
        Array.from({ length: 700 }, (_, i) => (i % 2 === 0 ? limits : other).consume('token_requests', 'shared')),
      );
      assert.equal(shared.filter((r) => r.status === 'fulfilled').length, 600);
    } finally {
      redis.disconnect();
      await other.close();
    }
  });

  test('leases: a refund goes back to the lease; an idle lease and a closing process give theirs back', async () => {
    const redis = new Redis(redisUrl as string);
    const closing = createRateLimits({ kind: 'redis', url: redisUrl as string }, prefix);
    let closed = false;
    try {
      assert.equal((await limits.consume('token_requests', 'refunded')).remaining, 599);
      assert.equal((await limits.consume('token_requests', 'refunded')).remaining, 598);
      await limits.refund('token_requests', 'refunded');
      assert.equal((await limits.check('token_requests', 'refunded')).remaining, 599);
      assert.equal((await limits.consume('token_requests', 'refunded')).remaining, 598);

      assert.equal((await limits.consume('token_requests', 'idle')).remaining, 599);
      assert.equal(Number(await redis.get(`${prefix}:token_requests:idle`)), 21, 'one count and a lease of 20');
      await waitFor(
        'the idle lease given back',
        async () => Number(await redis.get(`${prefix}:token_requests:idle`)) === 1,
      );

      await closing.consume('token_requests', 'closed');
      assert.equal(Number(await redis.get(`${prefix}:token_requests:closed`)), 21);
      closed = true;
      await closing.close();
      assert.equal(Number(await redis.get(`${prefix}:token_requests:closed`)), 1);
    } finally {
      redis.disconnect();
      if (!closed) await closing.close();
    }
  });

  test('with Redis unreachable, the process counts alone rather than failing', async () => {
    const down = createRateLimits({ kind: 'redis', url: 'redis://127.0.0.1:1' }, prefix);
    try {
      for (let i = 4; i >= 0; i--) assert.equal((await down.consume('register_ip', 'offline')).remaining, i);
      await assert.rejects(down.consume('register_ip', 'offline'), (error: unknown) => {
        assert.ok(error instanceof AppError && error.status === 429);
        return true;
      });
    } finally {
      await down.close();
    }
  });
});
