// Leases (Redis only): points of a key's window that Redis has already counted for this process,
// handed out here without a round trip. Every token-surface request counts its token; with a
// lease, one request in (lease + 1) asks Redis, and an answer no longer waits for the count calls
// in flight before it. Never more than the limit passes: the points were counted in Redis before
// any is handed out, and a lease ends with its window. What a lease still holds is counted for
// every process, so another process could refuse a few points early while this one still holds
// them: only leases of the window's first half exist (./redis-batch.ts BATCH_SCRIPT), so the
// second half is counted one by one, exactly, by every process, and a lease unused for
// LEASE_IDLE_MS gives its points back to the window (a client that moved to another process).

import type { Redis } from 'ioredis';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { consumeOn, type RefusalCode, refusal, stateOf } from './limit-state.ts';
import type { LimitName, LimitSpec, LimitState } from './limits.ts';
import { batchedCounter, type Counted, leaseReturner } from './redis-batch.ts';

/** Points a count may lease for this process: a thirtieth of the limit, at most 20 (token_requests: 20 of 600). */
const leaseSize = (spec: LimitSpec): number => Math.min(20, Math.floor(spec.points / 30));
/** Keys with a lease held at once; past it the leases are forgotten (their points count, unused). */
const LEASES_MAX = 100_000;
/** A lease unused this long gives its points back (and leases are swept this often). */
const LEASE_IDLE_MS = 1_000;

interface Lease {
  /** Points still to hand out. */
  points: number;
  /** The key's count in Redis when the lease was last topped up. */
  consumed: number;
  /** When the key's window ends (ms since the epoch). */
  until: number;
  /** When a point was last handed out or leased. */
  used: number;
}

type LeaseMap = Map<string, Lease>;

/** A key's lease while its window lasts; an ended one is forgotten. */
function liveLease(leases: LeaseMap, full: string, now: number): Lease | undefined {
  const lease = leases.get(full);
  if (lease === undefined || lease.until > now) return lease;
  leases.delete(full);
  return undefined;
}

/** Take idle leases (all of them: `everything`) out, with what they hold to give back; ended ones are forgotten. */
function takeIdle(leases: LeaseMap, everything: boolean, now: number): { keys: string[]; points: number[] } {
  const keys: string[] = [];
  const points: number[] = [];
  for (const [full, lease] of leases) {
    if (lease.until <= now) leases.delete(full);
    else if (everything || now - lease.used >= LEASE_IDLE_MS) {
      leases.delete(full);
      // Not in a window's last moments: the key may be gone and made anew by then.
      if (lease.points > 0 && lease.until - now > LEASE_IDLE_MS) {
        keys.push(full);
        points.push(lease.points);
      }
    }
  }
  return { keys, points };
}

/** Keep what a count leased (`asked`: when it was asked for). */
function keepLease(leases: LeaseMap, full: string, asked: number, counted: Counted): void {
  if (leases.size >= LEASES_MAX) leases.clear();
  const held = liveLease(leases, full, asked);
  // Two counts of a key answered in one batch: the second's lease adds to the first's.
  if (held !== undefined) {
    held.points += counted.leased;
    held.consumed = Math.max(held.consumed, counted.consumed);
  } else
    leases.set(full, {
      points: counted.leased,
      consumed: counted.consumed,
      until: asked + counted.msBeforeNext,
      used: asked,
    });
}

export interface Leases {
  /** Count `points` on `key` from this process's lease when it can serve them, else in Redis (leasing more). */
  consume(name: LimitName, spec: LimitSpec, key: string, points: number, code: RefusalCode): Promise<LimitState>;
  /** What this process's lease of a key still holds (counted in the store but not used). */
  heldBy(name: LimitName, key: string): number;
  /** Give points back to a key's lease (they stay counted in Redis for this process); false when it has none. */
  refund(name: LimitName, key: string, points: number): boolean;
  /** Forget a key's lease (its key is blocked or reset). */
  drop(name: LimitName, key: string): void;
  /** Stop sweeping and give back what every lease holds. */
  close(): Promise<void>;
}

export function createLeases(options: {
  /** The connection the batched counts use (not auto-pipelined: ./rate-limits.ts says why). */
  counting: Redis;
  keyPrefix: string;
  /** While Redis is unreachable a count goes to this process's memory limiter of its limit. */
  insured(name: LimitName): RateLimiterAbstract;
}): Leases {
  const { keyPrefix, insured } = options;
  const count = batchedCounter(options.counting);
  const giveBack = leaseReturner(options.counting);
  const leases: LeaseMap = new Map();
  /** Counts on their way to Redis, by key: whether they brought a lease. */
  const claims = new Map<string, Promise<boolean>>();
  /** The Redis key of a limit's key (rate-limiter-flexible's, so its operations act on the same). */
  const keyOf = (name: LimitName, key: string) => `${keyPrefix}:${name}:${key}`;
  const fromLease = (spec: LimitSpec, full: string, points: number): LimitState | null => {
    const now = Date.now();
    const lease = liveLease(leases, full, now);
    if (lease === undefined || lease.points < points) return null;
    lease.points -= points;
    lease.used = now;
    return stateOf(spec.points, {
      remainingPoints: spec.points - (lease.consumed - lease.points),
      msBeforeNext: lease.until - now,
    });
  };
  const returnLeases = async (everything: boolean): Promise<void> => {
    const { keys, points } = takeIdle(leases, everything, Date.now());
    if (keys.length > 0) await giveBack(keys, points);
  };
  const sweep = setInterval(() => void returnLeases(false), LEASE_IDLE_MS);
  sweep.unref();

  return {
    async consume(name, spec, key, points, code) {
      const full = keyOf(name, key);
      // A count of the same key already on its way may bring a lease: wait for it, and ask Redis
      // only when no count is on its way and the lease cannot serve this one (a burst on one key
      // is one count in (lease + 1), not a count each that leases what nobody uses).
      for (;;) {
        const served = fromLease(spec, full, points);
        if (served !== null) return served;
        const claiming = claims.get(full);
        // A count that leased nothing (the window is nearly used up): count directly, in the
        // batch with the others, rather than one after another.
        if (claiming === undefined || !(await claiming)) break;
      }
      const asked = Date.now();
      const claim = count(full, points, spec.duration, leaseSize(spec), spec.points);
      const settled = claim.then(
        (counted) => counted.leased > 0,
        () => false,
      );
      claims.set(full, settled);
      let counted: Counted;
      try {
        counted = await claim;
      } catch {
        return consumeOn(insured(name), name, spec.points, key, points, code);
      } finally {
        if (claims.get(full) === settled) claims.delete(full);
      }
      if (counted.leased > 0) keepLease(leases, full, asked, counted);
      // This process's requests so far, seen from here: the count less what the lease still holds.
      const used = counted.consumed - counted.leased;
      const res = { remainingPoints: spec.points - used, msBeforeNext: counted.msBeforeNext };
      if (used > spec.points) throw refusal(name, spec.points, res, code);
      return stateOf(spec.points, res);
    },
    heldBy: (name, key) => liveLease(leases, keyOf(name, key), Date.now())?.points ?? 0,
    refund(name, key, points) {
      const lease = liveLease(leases, keyOf(name, key), Date.now());
      if (lease === undefined) return false;
      lease.points += points;
      return true;
    },
    drop(name, key) {
      leases.delete(keyOf(name, key));
    },
    async close() {
      clearInterval(sweep);
      await returnLeases(true);
    },
  };
}
