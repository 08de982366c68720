// Named rate limits over rate-limiter-flexible. The store follows the deployment: memory when
// embedded (one process by construction), Redis when REDIS_URL is set (exact across processes),
// otherwise PostgreSQL (the UNLOGGED table `rate_limits`, exact across processes, one write per
// counted request). Every limit is declared in LIMITS (./limits.ts) with its numbers, so the
// README's table and the code cannot drift apart.
//
// The parts: ./limits.ts (the limits), ./limiters.ts (the store and a limiter per limit),
// ./leases.ts with ./redis-batch.ts (batched counts and leases on Redis), ./limit-state.ts (what
// a count answers).

import { declareLimits } from '../../metrics/metrics.ts';
import { createLeases } from './leases.ts';
import { consumeOn, refusal, stateOf } from './limit-state.ts';
import { createLimiters, type RateLimitStore } from './limiters.ts';
import { LIMITS, type LimitName, type LimitOverrides, type LimitState, specWith } from './limits.ts';

export type { RateLimitStore } from './limiters.ts';
export { LIMITS, type LimitName, type LimitOverrides, type LimitSpec, type LimitState } from './limits.ts';

declareLimits(Object.keys(LIMITS));

export interface RateLimits {
  /** Count `points` against `key`; throws AppError rate_limited (or `code`) when over the limit. */
  consume(
    name: LimitName,
    key: string,
    options?: { points?: number; code?: 'rate_limited' | 'locked_out' },
  ): Promise<LimitState>;
  /** The current state without counting; throws like consume when already over. */
  check(name: LimitName, key: string, code?: 'rate_limited' | 'locked_out'): Promise<LimitState>;
  /** Give back points counted for a request that turned out not to count (e.g. invalid input). */
  refund(name: LimitName, key: string, points?: number): Promise<void>;
  /** Refuse `key` for `seconds` from now (a lockout that starts at the failure that triggers it). */
  block(name: LimitName, key: string, seconds: number): Promise<void>;
  /** Forget a key (e.g. the failure count after a successful login). */
  reset(name: LimitName, key: string): Promise<void>;
  /**
   * Every key the store holds under this instance's prefix, for audits (no key may hold a session
   * id, token or code: T3-M6): a SCAN of Redis, the `rate_limits` rows, the memory limiters' keys.
   */
  storedKeys(): Promise<string[]>;
  close(): Promise<void>;
}

export function createRateLimits(store: RateLimitStore, keyPrefix = 'hp', overrides: LimitOverrides = {}): RateLimits {
  const specOf = (name: LimitName) => specWith(overrides, name);
  const limiters = createLimiters(store, keyPrefix, specOf);
  const { limiter } = limiters;
  // On Redis, counts are batched and may lease points (./leases.ts).
  const leases =
    limiters.counting === null
      ? null
      : createLeases({ counting: limiters.counting, keyPrefix, insured: limiters.insured });

  return {
    async consume(name, key, options = {}) {
      const points = options.points ?? 1;
      const spec = specOf(name);
      const code = options.code ?? 'rate_limited';
      // Limits with a lockout (blockDuration) keep rate-limiter-flexible's own consume.
      if (leases !== null && spec.blockDuration === undefined) return leases.consume(name, spec, key, points, code);
      return consumeOn(limiter(name), name, spec.points, key, points, code);
    },
    async check(name, key, code = 'rate_limited') {
      const got = await limiter(name).get(key);
      const spec = specOf(name);
      if (got === null) return { limit: spec.points, remaining: spec.points, reset: spec.duration };
      // What this process's lease still holds is counted in the store but not used.
      const held = leases?.heldBy(name, key) ?? 0;
      const res = { remainingPoints: got.remainingPoints + held, msBeforeNext: got.msBeforeNext };
      if (res.remainingPoints <= 0 && res.msBeforeNext > 0) throw refusal(name, spec.points, res, code);
      return stateOf(spec.points, res);
    },
    async refund(name, key, points = 1) {
      // Points of a key with a lease go back to the lease (they stay counted in Redis for this process).
      if (leases?.refund(name, key, points)) return;
      await limiter(name).reward(key, points);
    },
    async block(name, key, seconds) {
      leases?.drop(name, key);
      await limiter(name).block(key, seconds);
    },
    async reset(name, key) {
      leases?.drop(name, key);
      await limiter(name).delete(key);
    },
    storedKeys: () => limiters.storedKeys(),
    async close() {
      await leases?.close();
      await limiters.close();
    },
  };
}
