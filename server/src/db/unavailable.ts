// Telling "the database is away" apart from a bug. A PostgreSQL that restarts, fails over or is
// unreachable fails requests with errors of the connection, not of the statement: nothing of the
// request's transaction was committed by our side (a COMMIT cut short is the one unknown, which
// idempotency keys settle), and the same request can be sent again in a moment. The HTTP error
// handler answers these 503 service_unavailable with Retry-After instead of 500
// (http/plugins/errors.ts); server/test/drills.test.ts stops a PostgreSQL under load to hold it to that.
// A socket error of another dependency that reaches the handler unwrapped gets the same answer,
// which is what 503 says in the OpenAPI document: a dependency is unavailable.

import type pg from 'pg';

/** SQLSTATEs of a server that is shutting down, starting up, or full (no statement was at fault). */
const SERVER_AWAY = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up / shutting down
  '53300', // too_many_connections
  '53100', // disk_full: could not extend file / write (the statement was fine; the disk is not)
  '53200', // out_of_memory
]);

/** Socket errors on the way to the server. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** What `pg` and `pg-pool` throw, without a code, for a connection that ended or never came. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;

/** Whether `error` (or what caused it) says the database could not be reached or dropped the connection. */
export function databaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || error === null || typeof error !== 'object') return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    // Class 08: connection exception (the server refused or lost the session).
    if (code.startsWith('08') || SERVER_AWAY.has(code) || NETWORK.has(code)) return true;
  }
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  if (Array.isArray(errors) && errors.some((e) => databaseUnavailable(e, depth + 1))) return true;
  return databaseUnavailable(cause, depth + 1);
}

/**
 * pg-pool takes its own `error` listener off a client while the client is checked out, so a
 * connection the server ends then (a restart, a terminated backend) emits `error` with nobody
 * listening, and an unhandled `error` event ends the process. The statement in flight fails by
 * itself and the pool drops the client when it is released (it is no longer queryable): this
 * listener only keeps the event handled. Call on every pool the app makes.
 */
export function survivesLostConnections(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
}
