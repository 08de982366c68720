// The store behind the limits and rate-limiter-flexible's limiters over it, one per limit, made
// when first used: memory when embedded (one process by construction), Redis when REDIS_URL is set
// (exact across processes), otherwise PostgreSQL (the UNLOGGED table `rate_limits`, exact across
// processes, one write per counted request).

import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import {
  type IRateLimiterStoreOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
} from 'rate-limiter-flexible';
import { onFirstUse } from '../on-first-use.ts';
import type { LimitName, LimitSpec } from './limits.ts';

/** ioredis, loaded when a store is Redis (core/on-first-use.ts). */
const ioredis = onFirstUse<typeof IORedis>('ioredis');

export type RateLimitStore =
  | { kind: 'memory' }
  | { kind: 'redis'; url: string }
  /** `owned`: the pool is the store's own, ended by close(). */
  | { kind: 'postgres'; pool: pg.Pool; owned?: boolean };

export interface Limiters {
  /** The connection rate-limiter-flexible's operations use; null when the store is not Redis. */
  redis: Redis | null;
  /** A second connection, for the batched counts (./leases.ts); null when the store is not Redis. */
  counting: Redis | null;
  /** A limit's limiter on the store. */
  limiter(name: LimitName): RateLimiterAbstract;
  /**
   * While Redis is unreachable each process counts alone: one memory limiter per limit, shared by
   * the batched counts and rate-limiter-flexible's own operations (its insuranceLimiter).
   */
  insured(name: LimitName): RateLimiterMemory;
  /** Every key the store holds under this instance's prefix (RateLimits.storedKeys). */
  storedKeys(): Promise<string[]>;
  /** Close the connections, and end the pool if it is the store's own. */
  close(): Promise<void>;
}

/** The Redis connections of a Redis store: one for rate-limiter-flexible, one for the batched counts. */
function connect(url: string): { redis: Redis; counting: Redis } {
  const redis = new (ioredis().Redis)(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: false,
    // Every token-surface request counts here: commands issued in the same tick leave in one
    // write instead of one system call each.
    enableAutoPipelining: true,
    // A Redis that stopped answering: counts fall back to this process alone, not hang.
    commandTimeout: 1_000,
  });
  // An error event with no listener would crash the process; a Redis outage falls back to memory.
  redis.on('error', () => {});
  // The batched counts on a connection of their own, without auto-pipelining (they are one call per
  // round trip already): in ioredis' auto-pipeline, a script sent before Redis had it loaded
  // (NOSCRIPT, then retried) broke the answers of the other commands of that pipeline.
  const counting = redis.duplicate({ enableAutoPipelining: false });
  counting.on('error', () => {});
  return { redis, counting };
}

export function createLimiters(
  store: RateLimitStore,
  keyPrefix: string,
  specOf: (name: LimitName) => LimitSpec,
): Limiters {
  const { redis, counting } = store.kind === 'redis' ? connect(store.url) : { redis: null, counting: null };
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  const insurance = new Map<LimitName, RateLimiterMemory>();
  const baseOf = (name: LimitName) => {
    const spec = specOf(name);
    return {
      points: spec.points,
      duration: spec.duration,
      blockDuration: spec.blockDuration ?? 0,
      keyPrefix: `${keyPrefix}:${name}`,
    };
  };
  const insured = (name: LimitName): RateLimiterMemory => {
    let found = insurance.get(name);
    if (!found) {
      found = new RateLimiterMemory(baseOf(name));
      insurance.set(name, found);
    }
    return found;
  };
  const make = (name: LimitName): RateLimiterAbstract => {
    const base = baseOf(name);
    if (store.kind === 'memory') return new RateLimiterMemory(base);
    if (store.kind === 'redis') {
      const options: IRateLimiterStoreOptions = {
        ...base,
        storeClient: redis,
        // While Redis is unreachable the process counts alone rather than failing every request.
        insuranceLimiter: insured(name),
      };
      return new RateLimiterRedis(options);
    }
    return new RateLimiterPostgres({
      ...base,
      storeClient: store.pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: name === 'csrf_ip', // one sweeper for the shared table is enough
    });
  };

  return {
    redis,
    counting,
    insured,
    limiter(name) {
      let found = limiters.get(name);
      if (found) return found;
      found = make(name);
      limiters.set(name, found);
      return found;
    },
    async storedKeys() {
      // rate-limiter-flexible keeps a memory limiter's counts in a Map it does not expose.
      const inMemory = [...limiters.values(), ...insurance.values()].flatMap((l) => {
        const storage = (l as unknown as { _memoryStorage?: { _storage?: Map<string, unknown> } })._memoryStorage;
        return [...(storage?._storage?.keys() ?? [])];
      });
      if (redis !== null) {
        const found: string[] = [];
        for await (const keys of redis.scanStream({ match: `${keyPrefix}:*`, count: 1000 }))
          found.push(...(keys as string[]));
        return [...found, ...inMemory];
      }
      if (store.kind === 'postgres') {
        const rows = await store.pool.query<{ key: string }>('select key from rate_limits where left(key, $1) = $2', [
          keyPrefix.length + 1,
          `${keyPrefix}:`,
        ]);
        return rows.rows.map((row) => row.key);
      }
      return inMemory;
    },
    async close() {
      redis?.disconnect();
      counting?.disconnect();
      if (store.kind === 'postgres' && store.owned) await store.pool.end();
    },
  };
}
