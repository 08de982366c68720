// Liveness of the parts a request depends on, for the health route and `admin system info`.

import type { Database } from '../../db/database.ts';

export type DatabaseHealth =
  | { ok: true; engine: Database['engine']; version: string; latencyMs: number }
  | { ok: false; engine: Database['engine']; error: string };

/** Ask the database for its version, giving up after `timeoutMs`. Never throws. */
export async function checkDatabase(database: Database, timeoutMs = 2_000): Promise<DatabaseHealth> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const version = await Promise.race([
      database.serverVersion(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, engine: database.engine, version, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, engine: database.engine, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A probe for the health route: concurrent callers share the one query in flight, so a
 * burst of health checks (load balancers, monitors) costs the database one round trip.
 * Every answer is still fresh: nothing is reused once its query has finished.
 */
export function createHealthProbe(database: Database, timeoutMs = 2_000): () => Promise<DatabaseHealth> {
  let inFlight: Promise<DatabaseHealth> | null = null;
  return () => {
    inFlight ??= checkDatabase(database, timeoutMs).finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
}
