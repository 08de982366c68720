// One database, two engines, one dialect. PostgreSQL is reached through `pg`; embedded mode is
// PGlite (PostgreSQL 18 in WASM) in a thread of its own (db/embedded.ts), reached by `pg` over the
// wire protocol as a server would be, so Kysely, pg-boss and the rate limiter all share the same
// pg.Pool and see identical result types. Embedded mode is single-process: it holds a lock file in
// the data directory for its life.

import { basename } from 'node:path';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { EmbeddedPostgres } from './embedded.ts';
import { beginEmbedded, type EmbeddedTarget, takePrestarted } from './embedded-start.ts';
import { observedPostgresDialect, type WriteObserver } from './observed.ts';
import type { DB } from './tables.ts';
import { survivesLostConnections } from './unavailable.ts';

/** How long a query waits for a free connection before failing (a nested use of the outer `db`
 * inside a transaction on PGlite's single connection would otherwise hang forever). */
export const CONNECTION_TIMEOUT_MS = 10_000;

export type DatabaseTarget =
  | { engine: 'postgresql'; url: string; poolSize?: number }
  | ({ engine: 'pglite' } & EmbeddedTarget);

interface DatabaseBase {
  db: Kysely<DB>;
  pool: pg.Pool;
  /** The tables each committed write of this process changed (in-memory caches listen: db/observed.ts). */
  writes: WriteObserver;
  /** Server version as the server reports it, e.g. `18.6` or `15.20 (Debian 15.20-0+deb12u1)`. */
  serverVersion(): Promise<string>;
  close(): Promise<void>;
}

export type Database =
  | (DatabaseBase & { engine: 'postgresql'; url: string; pglite: null })
  | (DatabaseBase & { engine: 'pglite'; url: null; pglite: EmbeddedPostgres; dataDir: string | null });

export async function openDatabase(target: DatabaseTarget, logger?: Logger): Promise<Database> {
  return target.engine === 'postgresql' ? openPostgres(target, logger) : openEmbedded(target, logger);
}

function openPostgres(target: { url: string; poolSize?: number }, logger?: Logger): Database {
  const pool = new pg.Pool({
    connectionString: target.url,
    max: target.poolSize ?? 10,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: 'hostplane',
  });
  // An idle client losing its server (restart, network) emits here; unhandled it would kill the process.
  pool.on('error', (error) => logger?.warn({ err: error }, 'idle database connection failed'));
  // …and one in use: its statement fails (answered 503, http/plugins/errors.ts), the process lives.
  survivesLostConnections(pool);
  const { dialect, observer: writes } = observedPostgresDialect({ pool });
  const db = new Kysely<DB>({ dialect });
  let closed = false;
  return {
    engine: 'postgresql',
    url: target.url,
    pglite: null,
    db,
    pool,
    writes,
    serverVersion: () => serverVersion(db),
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

async function openEmbedded(target: EmbeddedTarget, logger?: Logger): Promise<Database> {
  // What `npm start` began before its modules loaded (db/embedded-start.ts), else begun now.
  const opening = (await takePrestarted(target)) ?? beginEmbedded(target);
  opening.onFailure = (error) =>
    logger?.error({ err: error }, "the embedded database's thread failed; every query fails until a restart");
  if (opening.tightened > 0)
    logger?.warn(
      { dataDir: target.dataDir, tightened: opening.tightened },
      'the data directory was open to other users; removed group and other permissions',
    );
  const pglite = await opening.opened;
  if (opening.template !== null)
    logger?.info({ template: basename(opening.template) }, 'database created from the migrated template');
  const lock = opening.lock;
  const pool = new pg.Pool({
    stream: () => pglite.socket(),
    user: 'postgres',
    database: 'postgres',
    // PGlite is one session: one connection, kept (a new one costs the session a little memory).
    max: 1,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
  });
  pool.on('error', (error) => logger?.warn({ err: error }, 'embedded database connection failed'));
  const { dialect, observer: writes } = observedPostgresDialect({ pool });
  const db = new Kysely<DB>({ dialect });
  let closed = false;
  return {
    engine: 'pglite',
    url: null,
    pglite,
    dataDir: target.dataDir,
    db,
    pool,
    writes,
    serverVersion: () => serverVersion(db),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.destroy();
        await pglite.close();
      } finally {
        lock?.release();
      }
    },
  };
}

async function serverVersion(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db);
  return rows[0]?.v ?? 'unknown';
}

/** The target described by the configuration (`template`: see EmbeddedTarget). */
export function targetFromConfig(
  config: { databaseUrl: string | null; dataDir: string },
  role: string,
  options: { template?: boolean } = {},
): DatabaseTarget {
  return config.databaseUrl
    ? { engine: 'postgresql', url: config.databaseUrl }
    : { engine: 'pglite', dataDir: config.dataDir, role, ...(options.template === true ? { template: true } : {}) };
}
