// Rate-limit stores: memory (embedded), PostgreSQL (the `rate_limits` table), Redis (REDIS_URL).
// Each must be exact at the boundary and under a parallel burst.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../src/core/errors.ts';
import { createRateLimits, type RateLimitStore, type RateLimits } from '../src/core/ratelimit/rate-limits.ts';
import { createTestDatabase, redisUrl, type TestDatabase } from './support/harness.ts';

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
