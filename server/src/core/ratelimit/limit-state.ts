// What a count answers: the state the RateLimit-* headers report, or the refusal (an AppError
// carrying that state, counted in the metrics). Shared by the limiters (./rate-limits.ts) and
// the leases (./leases.ts).

import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { recordRefusal } from '../../metrics/metrics.ts';
import { AppError } from '../errors.ts';
import type { LimitName, LimitState } from './limits.ts';

export type RefusalCode = 'rate_limited' | 'locked_out';

/** The counts of a key as rate-limiter-flexible reports them. */
export type Counts = Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>;

/** The state of a key of a limit of `limit` points. */
export function stateOf(limit: number, res: Counts): LimitState {
  return {
    limit,
    remaining: Math.max(0, res.remainingPoints),
    reset: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}

/** The error refusing a request over `name` (a limit of `limit` points). */
export function refusal(name: LimitName, limit: number, res: Counts, code: RefusalCode): AppError {
  const s = stateOf(limit, res);
  recordRefusal(name);
  return new AppError(code, {
    retryAfter: s.reset,
    details: { limit: s.limit, reset: s.reset },
    rateLimit: { ...s, remaining: 0 },
  });
}

/** Count `points` on `key` with a rate-limiter-flexible limiter; throws the refusal when over. */
export async function consumeOn(
  on: RateLimiterAbstract,
  name: LimitName,
  limit: number,
  key: string,
  points: number,
  code: RefusalCode,
): Promise<LimitState> {
  try {
    return stateOf(limit, await on.consume(key, points));
  } catch (error) {
    if (error instanceof RateLimiterRes) throw refusal(name, limit, error, code);
    throw error;
  }
}
