// Cache invalidation across processes: NOTIFY on the shared database, LISTEN in every process.
// A message published inside a transaction is delivered when (and only if) it commits. The
// publishing process also applies it locally at once, so its own next request never sees the
// stale entry; other processes drop theirs within milliseconds. On a lost LISTEN connection
// every subscriber is told to drop everything (messages may have been missed).

import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/tables.ts';

const CHANNEL = 'hostplane_invalidate';
/** The longest wait between attempts to get the LISTEN connection back. */
const RECONNECT_MAX_MS = 10_000;

export type BusMessage =
  | { topic: 'token'; id: number }
  | { topic: 'account'; id: number }
  /** The account's live access ends now: suspension, password change or reset (consoles close). */
  | { topic: 'access_revoked'; id: number }
  | { topic: 'service'; id: number }
  /** What the account's service lists show changed (a trigger of migration 0015 sends it). */
  | { topic: 'account_services'; id: number }
  /** A node was added, changed or removed (a trigger of migration 0015 sends it). */
  | { topic: 'nodes' }
  /** A session or account row changed (a trigger of migration 0015 sends it): cached sessions drop. */
  | { topic: 'sessions' }
  | { topic: 'catalog' }
  /** Webhook deliveries were queued (core/webhooks/outbox.ts): the dispatcher looks now. */
  | { topic: 'webhooks' }
  | { topic: 'all' };

export interface Bus {
  /** Send through `executor` (a transaction delivers on commit), and apply locally now. */
  publish(executor: Kysely<DB>, message: BusMessage): Promise<void>;
  subscribe(handler: (message: BusMessage) => void): void;
  close(): Promise<void>;
}

/**
 * Send a message through `executor` only, for code that holds no Bus (a transaction delivers it on
 * commit). Every process's subscribers get it then, this process's too, through its LISTEN.
 */
export async function notifyOnCommit(executor: Kysely<DB>, message: BusMessage): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(message)})`.execute(executor);
}

export async function createBus(database: Database, logger: Logger): Promise<Bus> {
  const handlers: ((message: BusMessage) => void)[] = [];
  const deliver = (message: BusMessage) => {
    for (const handler of handlers) handler(message);
  };
  const onPayload = (payload: string | undefined) => {
    try {
      deliver(JSON.parse(payload ?? '') as BusMessage);
    } catch {
      deliver({ topic: 'all' });
    }
  };

  let stop: () => Promise<void>;
  if (database.engine === 'pglite') {
    const unlisten = await database.pglite.listen(CHANNEL, onPayload);
    stop = () => unlisten();
  } else {
    let client: pg.Client | null = null;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    /** Reconnect attempts since the connection was lost (the wait doubles, up to RECONNECT_MAX_MS). */
    let attempts = 0;
    // Until it is back, tries again and again: a database that takes longer than one wait to
    // return (a restart) must not leave the process deaf to other processes' invalidations.
    const reconnect = () => {
      if (closed) return;
      clearTimeout(retry);
      const wait = Math.min(RECONNECT_MAX_MS, 1000 * 2 ** Math.min(attempts, 5));
      attempts++;
      retry = setTimeout(() => {
        connect().then(
          () => {
            attempts = 0;
            // Messages sent while it was away are lost: every cache drops what it holds.
            deliver({ topic: 'all' });
            logger.info('invalidation listener reconnected');
          },
          (error: unknown) => {
            logger.warn({ err: error, attempt: attempts }, 'invalidation listener could not reconnect; trying again');
            reconnect();
          },
        );
      }, wait);
    };
    const connect = async (): Promise<void> => {
      const next = new pg.Client({ connectionString: database.url, application_name: 'hostplane-bus' });
      next.on('notification', (msg) => onPayload(msg.payload));
      next.on('error', (error) => {
        next.end().catch(() => {});
        // Only the live listener reconnects (a client that failed to connect is retried by reconnect()).
        if (closed || client !== next) return;
        logger.warn({ err: error }, 'invalidation listener lost its connection; reconnecting');
        client = null;
        deliver({ topic: 'all' });
        reconnect();
      });
      try {
        await next.connect();
        await next.query(`listen ${CHANNEL}`);
      } catch (error) {
        await next.end().catch(() => {});
        throw error;
      }
      if (closed) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
    };
    await connect();
    stop = async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    };
  }

  return {
    async publish(executor, message) {
      await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(message)})`.execute(executor);
      deliver(message);
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    close: () => stop(),
  };
}
