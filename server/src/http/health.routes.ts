// GET /api/v1/health/ (spec 4.2): public, legacy `{status, data}` envelope. 200 while the
// database answers, 503 with `data.status: "unhealthy"` when it does not.
// GET /livez and GET /readyz (CONTRACT §15), for orchestrators and proxies: live while the process
// answers; ready while it can serve (the database answers and it is not draining). Neither is
// rate limited nor logged per request, like the health route.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../core/deps.ts';
import { createHealthProbe } from '../core/system/health.ts';
import { isoWithOffset } from '../core/time.ts';

const HealthData = Type.Object({
  database: Type.String({ description: '`connected` or `unreachable`' }),
  engine: Type.Union([Type.Literal('pglite'), Type.Literal('postgresql')]),
  db_version: Type.Union([Type.String(), Type.Null()]),
  timestamp: Type.String({ format: 'date-time' }),
  service: Type.String(),
  status: Type.Union([Type.Literal('healthy'), Type.Literal('unhealthy')]),
});

const HealthEnvelope = (status: 'success' | 'error') => Type.Object({ status: Type.Literal(status), data: HealthData });

/**
 * Request headers over 16 KiB never reach a route: Node's HTTP parser refuses them, for this
 * path as for any other, and the answer carries the fields of both API error envelopes (the
 * surface is unknown then: see clientErrorHandler in server.ts).
 */
const HeadersTooLarge = Type.Union([Type.Ref('TokenError'), Type.Ref('SessionError')], {
  description: 'Request headers too large (over 16 KiB), refused before routing',
});

const Probe = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('draining'), Type.Literal('unavailable')]),
});

/** What one process's readiness probes have seen; main.ts marks it draining before closing the server. */
interface Readiness {
  draining: boolean;
  /** When /readyz was last asked (performance.now()), or null: never. */
  probedAt: number | null;
  /** A probe has been answered `draining`: whoever asked it stops sending requests here. */
  drainingSeen: boolean;
  onDrainingSeen: (() => void)[];
}
const readiness = new WeakMap<Deps, Readiness>();

function readinessOf(deps: Deps): Readiness {
  let state = readiness.get(deps);
  if (state === undefined) {
    state = { draining: false, probedAt: null, drainingSeen: false, onDrainingSeen: [] };
    readiness.set(deps, state);
  }
  return state;
}

/** From now on /readyz answers 503 `draining`, and every answer says `Connection: close`. */
export function markDraining(deps: Deps): void {
  readinessOf(deps).draining = true;
}

export function isDraining(deps: Deps): boolean {
  return readiness.get(deps)?.draining === true;
}

/**
 * After markDraining, until the proxy has stopped sending requests here, so that the listener
 * closes only then. A proxy that health-checks /readyz (deploy/Caddyfile: every 2 s) stops once a
 * probe has been answered 503: this waits for that answer (at most `maxMs`, longer than the proxy's
 * interval), then `settleMs` for requests the proxy had already sent on their way. A
 * process that no probe asked within the last `maxMs` has no such proxy (`npm start` at a desk):
 * at once. Closing earlier, the proxy meets a refused connection or a connection closed under a
 * request, which Caddy before 2.11.2 answers 502 for a request with a body instead of retrying it
 * on another process (caddyserver/caddy#7546).
 */
export async function proxyStopped(
  deps: Deps,
  { maxMs, settleMs }: { maxMs: number; settleMs: number },
): Promise<'probed' | 'unprobed' | 'timeout'> {
  const state = readinessOf(deps);
  if (state.probedAt === null || performance.now() - state.probedAt > maxMs) return 'unprobed';
  const seen =
    state.drainingSeen ||
    (await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), maxMs);
      state.onDrainingSeen.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    }));
  if (!seen) return 'timeout';
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return 'probed';
}

function probed(deps: Deps): boolean {
  const state = readinessOf(deps);
  state.probedAt = performance.now();
  if (state.draining && !state.drainingSeen) {
    state.drainingSeen = true;
    for (const notify of state.onDrainingSeen.splice(0)) notify();
  }
  return state.draining;
}

export async function healthRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const probe = createHealthProbe(deps.database);
  app.get(
    '/api/v1/health/',
    {
      schema: {
        operationId: 'getHealth',
        security: [],
        tags: ['health'],
        summary: 'Service and database health',
        response: { 200: HealthEnvelope('success'), 431: HeadersTooLarge, 503: HealthEnvelope('error') },
      },
    },
    async (_request, reply) => {
      const db = await probe();
      const data = {
        database: db.ok ? 'connected' : 'unreachable',
        engine: deps.database.engine,
        db_version: db.ok ? db.version : null,
        timestamp: isoWithOffset(deps.clock()),
        service: 'hostplane',
        status: db.ok ? ('healthy' as const) : ('unhealthy' as const),
      };
      reply.header('Cache-Control', 'no-store');
      if (!db.ok) return reply.code(503).send({ status: 'error' as const, data });
      return { status: 'success' as const, data };
    },
  );

  app.get(
    '/livez',
    {
      // Probes every few seconds from each proxy and orchestrator: not logged per request (§15).
      logLevel: 'silent',
      schema: {
        operationId: 'getLiveness',
        security: [],
        tags: ['health'],
        summary: 'Liveness: 200 while the process answers (asks nothing else)',
        response: { 200: Probe, 431: HeadersTooLarge },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return { status: 'ok' as const };
    },
  );
  app.get(
    '/readyz',
    {
      // Probes every few seconds from each proxy and orchestrator: not logged per request (§15).
      logLevel: 'silent',
      schema: {
        operationId: 'getReadiness',
        security: [],
        tags: ['health'],
        summary: 'Readiness: 200 when the process can serve; 503 while it drains or the database does not answer',
        response: { 200: Probe, 431: HeadersTooLarge, 503: Probe },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'no-store');
      if (probed(deps)) return reply.code(503).send({ status: 'draining' as const });
      const db = await probe();
      if (!db.ok) return reply.code(503).send({ status: 'unavailable' as const });
      return { status: 'ok' as const };
    },
  );
}
