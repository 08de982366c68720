// Where the rate limits count (CONTRACT §4): Redis when REDIS_URL is set, else the PostgreSQL
// database on a small pool of its own, else memory (the embedded engine: one process).

import pg from 'pg';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { survivesLostConnections } from '../../db/unavailable.ts';
import type { RateLimitStore } from './limiters.ts';

/** Connections of the PostgreSQL rate-limit store's own pool. */
const RATE_LIMIT_POOL_SIZE = 4;

export function rateLimitStoreFor(config: Config, database: Database): RateLimitStore {
  if (config.redisUrl) return { kind: 'redis', url: config.redisUrl };
  if (database.engine === 'postgresql') {
    // A pool of its own: limits are consumed inside transactions (a deploy counts inside its
    // idempotent run), and on the shared pool every connection could be held by such a
    // transaction waiting for a connection to count on, so no request would finish. The store's
    // statements never wait for anything else, so its own small pool cannot deadlock.
    const pool = new pg.Pool({
      connectionString: database.url,
      max: RATE_LIMIT_POOL_SIZE,
      idleTimeoutMillis: 30_000,
      application_name: 'hostplane-ratelimit',
    });
    pool.on('error', () => {});
    survivesLostConnections(pool);
    return { kind: 'postgres', pool, owned: true };
  }
  return { kind: 'memory' };
}
