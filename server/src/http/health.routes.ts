// GET /api/v1/health/ (spec 4.2): public, legacy `{status, data}` envelope. 200 while the
// database answers, 503 with `data.status: "unhealthy"` when it does not.

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
}
