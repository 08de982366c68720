// Counting for many Redis keys in one round trip (the Redis store of ./rate-limits.ts): the counts
// asked for while a call is out leave together as one call of a Lua script, and unused leased
// points go back the same way (./leases.ts says what a lease is).

import type { Redis } from 'ioredis';

/**
 * Counting for many keys in one round trip to Redis. Every token-surface request counts its token
 * here; through rate-limiter-flexible each count was its own script call (command objects, a
 * pipeline and a promise chain per request, and the garbage they made), a large share of a light
 * request's cost. The counts asked for meanwhile (see flush) leave as one call of a script that
 * does, per key, what rate-limiter-flexible's does (create the key for its window if absent,
 * INCRBY, PTTL), on the same keys, so every other operation (refund, block, reset, check) still
 * goes through it. Exact as before: each key is counted by Redis, atomically, before the answer.
 *
 * Leases: a count may also take up to `lease` more points of the key's window for this process to
 * hand out without asking Redis again (./leases.ts). Only in the first half of the window's limit,
 * and never more than an eighth of what is left of that half, so the second half is counted one by
 * one and a lease never lets a request through over the limit.
 */
const BATCH_SCRIPT = `local out = {}
for i = 1, #KEYS do
  local points = tonumber(ARGV[4 * i - 3])
  local seconds = ARGV[4 * i - 2]
  redis.call('set', KEYS[i], 0, 'EX', seconds, 'NX')
  local room = math.floor(tonumber(ARGV[4 * i]) / 2) - tonumber(redis.call('get', KEYS[i])) - points
  local lease = 0
  if room > 0 then lease = math.min(tonumber(ARGV[4 * i - 1]), math.floor(room / 8)) end
  local consumed = redis.call('incrby', KEYS[i], points + lease)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], seconds)
    ttl = 1000 * seconds
  end
  out[3 * i - 2] = consumed
  out[3 * i - 1] = ttl
  out[3 * i] = lease
end
return out`;

export interface Counted {
  /** The key's count after this one, the lease included. */
  consumed: number;
  msBeforeNext: number;
  /** Points taken for this process beyond `points` (a lease); 0 when the window had no room. */
  leased: number;
}

interface PendingCount {
  key: string;
  points: number;
  seconds: number;
  lease: number;
  limit: number;
  resolve: (counted: Counted) => void;
  reject: (error: unknown) => void;
}

/**
 * Count `points` on a Redis key with a window of `seconds` (the key is created for it), taking up
 * to `lease` points more while the window of a `limit` has room for them.
 */
export type BatchedCount = (
  key: string,
  points: number,
  seconds: number,
  lease: number,
  limit: number,
) => Promise<Counted>;

/** Keys in one call at most (a script's arguments are spread onto the stack). */
const BATCH_MAX = 2000;
const CONNECT_WAIT_MS = 2_000;

/** Give unused leased points back to the windows they were taken from, if those still exist. */
const RETURN_SCRIPT = `for i = 1, #KEYS do
  if redis.call('exists', KEYS[i]) == 1 then redis.call('decrby', KEYS[i], ARGV[i]) end
end
return #KEYS`;

/** The batched count on a connection of its own (see BATCH_SCRIPT). */
export function batchedCounter(redis: Redis): BatchedCount {
  redis.defineCommand('hpCountBatch', { lua: BATCH_SCRIPT });
  const send = (redis as unknown as { hpCountBatch(n: number, ...args: (string | number)[]): Promise<number[]> })
    .hpCountBatch;
  let pending: PendingCount[] = [];
  // One call in flight at a time (a group commit): what is asked meanwhile leaves in the next,
  // so under load a call carries every count of a round trip (each call is a system call each
  // way, as dear as the client's answer), and an idle server still sends a count at once.
  let sending = false;
  // The first counts wait for the connection being made (at most CONNECT_WAIT_MS) rather than
  // being counted in memory while it is: a window's counts then all live in one place.
  let connected: Promise<void> | null = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const event of ['ready', 'error', 'end'] as const) redis.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, CONNECT_WAIT_MS);
    timer.unref();
    if (redis.status === 'ready') done();
    else for (const event of ['ready', 'error', 'end'] as const) redis.once(event, done);
  });
  const flush = (): void => {
    if (sending || pending.length === 0) return;
    if (connected !== null) {
      sending = true;
      void connected.then(() => {
        connected = null;
        sending = false;
        flush();
      });
      return;
    }
    sending = true;
    // At most BATCH_MAX a call (a script's arguments are spread onto the stack).
    const batch = pending.length <= BATCH_MAX ? pending : pending.splice(0, BATCH_MAX);
    if (batch === pending) pending = [];
    const args: (string | number)[] = batch.map((p) => p.key);
    for (const p of batch) args.push(p.points, p.seconds, p.lease, p.limit);
    // Through a promise even if the client throws at once: `sending` must always be cleared.
    Promise.resolve()
      .then(() => send.call(redis, batch.length, ...args))
      .then(
        (out) => {
          for (let i = 0; i < batch.length; i++)
            batch[i]?.resolve({
              consumed: Number(out[3 * i]),
              msBeforeNext: Number(out[3 * i + 1]),
              leased: Number(out[3 * i + 2]),
            });
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      )
      .finally(() => {
        sending = false;
        flush();
      });
  };
  return (key, points, seconds, lease, limit) =>
    new Promise<Counted>((resolve, reject) => {
      if (pending.length === 0 && !sending) setImmediate(flush);
      pending.push({ key, points, seconds, lease, limit, resolve, reject });
    });
}

/**
 * Give leased points back to their keys' windows (`points[i]` to `keys[i]`), in calls of at most
 * BATCH_MAX keys. A Redis that is away leaves them counted until the window ends.
 */
export function leaseReturner(redis: Redis): (keys: string[], points: number[]) => Promise<void> {
  redis.defineCommand('hpReturnLeases', { lua: RETURN_SCRIPT });
  const send = (redis as unknown as { hpReturnLeases(n: number, ...args: (string | number)[]): Promise<number> })
    .hpReturnLeases;
  return async (keys, points) => {
    for (let at = 0; at < keys.length; at += BATCH_MAX) {
      const some = keys.slice(at, at + BATCH_MAX);
      await send.call(redis, some.length, ...some, ...points.slice(at, at + BATCH_MAX)).catch(() => undefined);
    }
  };
}
