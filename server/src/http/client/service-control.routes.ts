// Spec 4.8: what runs on a client's service, under /api/v1/client/services/: status/ (the live
// probe), graph/ (metrics time series) and action/ (the product actions exposed there: power
// signals, reinstall; generated from the registry in core/products/). Registered right after
// services.routes.ts, whose paths these continue. Every id is checked against the caller's account.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { actionNames, actionParams, describeActions, listActions } from '../../core/product-kit/action-routes.ts';
import { sessionRoutes } from '../../core/product-kit/actions.ts';
import type { ProductRegistry } from '../../core/product-kit/registry.ts';
import { isoWithOffset } from '../../core/time.ts';
import { sessionErrors } from '../schemas.ts';
import { JobSchema, jobView, orUnknown } from '../views/service.view.ts';
import { signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['services'];
const IdQuery = { id: Type.Integer({ minimum: 1 }) };

const LiveSchema = Type.Object({
  power: Type.String(),
  cpu: orUnknown(Type.Number(), 'fraction of the allotted CPUs, 0–1'),
  cpus: Type.Integer(),
  memory: Type.Object({ used_bytes: orUnknown(Type.Integer()), total_bytes: Type.Integer() }),
  disk: Type.Object({ total_bytes: Type.Integer() }),
  uptime_seconds: orUnknown(Type.Integer()),
  network: Type.Object({ in_bytes: orUnknown(Type.Integer()), out_bytes: orUnknown(Type.Integer()) }),
});

/** A name no product exposes here: the answer these routes have always given. */
const unknownAction = (products: ProductRegistry) =>
  new AppError('bad_signal', {
    message: `Power signals are ${products.signals.join(', ')}.`,
    fields: { action: `must be one of ${products.signals.join(', ')}` },
  });

export async function serviceControlRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/services/status/',
    {
      schema: {
        tags,
        operationId: 'getServiceStatus',
        summary: 'Live power probe of a virtual server (60 a minute per account, both surfaces: then 429)',
        querystring: Type.Object(IdQuery, { additionalProperties: false }),
        response: {
          200: okSchema({ id: Type.Integer(), status: LiveSchema }),
          ...sessionErrors(401, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const { id } = request.query;
      const { status } = await deps.serviceActions.status(session.account.id, id);
      return {
        success: true as const,
        message: `The server is ${status.power}.`,
        id,
        status: {
          power: status.power,
          cpu: status.cpu,
          cpus: status.cpus,
          memory: { used_bytes: status.memoryBytes, total_bytes: status.memoryTotalBytes },
          disk: { total_bytes: status.diskTotalBytes },
          uptime_seconds: status.uptimeSeconds,
          network: { in_bytes: status.netInBytes, out_bytes: status.netOutBytes },
        },
      };
    },
  );

  app.get(
    '/services/graph/',
    {
      schema: {
        tags,
        operationId: 'getServiceGraph',
        summary: 'Metrics time series: timeframe hour, day, week, month or year (20 a minute per account: then 429)',
        querystring: Type.Object(
          { ...IdQuery, timeframe: Type.String({ maxLength: 16 }) },
          { additionalProperties: false },
        ),
        response: {
          200: okSchema({
            id: Type.Integer(),
            timeframe: Type.String(),
            points: Type.Array(
              Type.Object({
                time: Type.String({ format: 'date-time' }),
                cpu: Type.Union([Type.Number(), Type.Null()]),
                memory_bytes: Type.Union([Type.Number(), Type.Null()]),
                net_in_bytes_per_second: Type.Union([Type.Number(), Type.Null()]),
                net_out_bytes_per_second: Type.Union([Type.Number(), Type.Null()]),
                disk_read_bytes_per_second: Type.Union([Type.Number(), Type.Null()]),
                disk_write_bytes_per_second: Type.Union([Type.Number(), Type.Null()]),
              }),
            ),
          }),
          ...sessionErrors(401, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const { id, timeframe } = request.query;
      const points = await deps.serviceActions.graph(session.account.id, id, timeframe);
      return {
        success: true as const,
        message: `${points.length} ${points.length === 1 ? 'point' : 'points'}.`,
        id,
        timeframe,
        points: points.map((p) => ({
          time: isoWithOffset(new Date(p.time * 1000)),
          cpu: p.cpu,
          memory_bytes: p.memoryBytes,
          net_in_bytes_per_second: p.netInBytesPerSecond,
          net_out_bytes_per_second: p.netOutBytesPerSecond,
          disk_read_bytes_per_second: p.diskReadBytesPerSecond,
          disk_write_bytes_per_second: p.diskWriteBytesPerSecond,
        })),
      };
    },
  );

  // Generated from the product action registry (core/products/): every action a product
  // exposes on this route, its parameters in the body, its description in the document.
  app.post(
    '/services/action/',
    {
      schema: {
        tags,
        operationId: 'runServiceAction',
        summary: `${listActions(deps.products, 'session', 'action', ', ')}; 202 with the job`,
        description: describeActions(deps.products, 'session', 'action'),
        body: mutationBody({
          id: Type.Integer({ minimum: 1 }),
          action: Type.String({ maxLength: 32, description: actionNames(deps.products, 'session', 'action') }),
          ...actionParams(deps.products, 'session', 'action'),
        }),
        response: { 202: okSchema({ job: JobSchema }), ...sessionErrors(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const { id, action, csrf_token: _csrf, ...params } = request.body;
      const accountId = session.account.id;
      const { result } = await deps.serviceActions.run(accountId, id, action, params, {
        unknown: () => unknownAction(deps.products),
        exposed: (a) => sessionRoutes(a).includes('action'),
      });
      if (result.kind !== 'job') throw new Error(`${action} answered ${result.kind}`);
      return reply.code(202).send({ success: true as const, message: result.message, job: jobView(result.job) });
    },
  );
}
