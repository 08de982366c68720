// {ALT_BASE_PATH}/v1/instances/{id}/snapshots (CONTRACT §9): the snapshot actions of the
// instance's product (core/products/vps/snapshots.ts), run by the same dispatcher as every
// product action (ownership → parameters → state → the node). A product that has no snapshots
// (bare metal) answers 422 not_supported; another account's instance or snapshot answers exactly
// like a missing one (404).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import type { ActionResult } from '../../core/product-kit/actions.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { IdParams, okSchema } from '../rest/envelopes.ts';
import { tokenErrors } from '../schemas.ts';
import { JobSchema, jobView } from '../views/service.view.ts';
import { CLOUD_SCOPE, instanceType } from './views.ts';

const tags = ['cloud: snapshots'];

/** The product actions behind the routes (core/products/vps/snapshots.ts). */
const ACTIONS = {
  list: 'snapshots',
  create: 'snapshot_create',
  restore: 'snapshot_restore',
  delete: 'snapshot_delete',
};

const SnapshotSchema = Type.Object({
  id: Type.String({ description: 'its name: what restore and DELETE take' }),
  name: Type.String(),
  description: Type.String(),
  created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  parent: Type.Union([Type.String(), Type.Null()], { description: 'the snapshot this one was taken after' }),
  automatic: Type.Optional(
    Type.Boolean({ description: 'taken by scheduled backups (not counted against the limit; pruned to its keep)' }),
  ),
});

export async function cloudSnapshotRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const jobUrl = (id: number) => `${root.prefix}/jobs/${id}`;

  /** Run a snapshot action on the caller's instance; 422 not_supported when its product has none. */
  async function run(accountId: number, id: number, name: string, params: Record<string, unknown>) {
    const service = await deps.services.own(accountId, id, CLOUD_SCOPE);
    const product = deps.products.of(service.type);
    if (!product.actions.some((a) => a.name === name)) {
      throw new AppError('not_supported', {
        message: product.unsupported?.[name] ?? `A ${instanceType(service.type)} instance has no snapshots.`,
      });
    }
    const { result } = await deps.serviceActions.run(accountId, id, name, params, {
      unknown: () => new AppError('not_supported'),
      ...CLOUD_SCOPE,
    });
    return result;
  }

  function accepted(result: ActionResult) {
    if (result.kind !== 'job') throw new Error(`a snapshot change answered ${result.kind}`);
    return result.job;
  }

  app.get(
    '/instances/:id/snapshots',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListSnapshots',
        tags,
        summary: "The instance's disk snapshots, oldest first, and how many its plan keeps",
        params: IdParams,
        response: {
          200: okSchema({ snapshots: Type.Array(SnapshotSchema), limit: Type.Integer() }),
          ...tokenErrors(404, 409, 422, 503),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const result = await run(accountId, request.params.id, ACTIONS.list, {});
      if (result.kind !== 'data') throw new Error(`snapshots answered ${result.kind}`);
      const { snapshots, limit } = result.data as { snapshots: unknown[]; limit: number };
      return { ok: true as const, snapshots: snapshots as never[], limit };
    },
  );

  app.post(
    '/instances/:id/snapshots',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'cloudChangeSnapshots',
        tags,
        summary: 'Take a snapshot ({action: "create", name}) or restore one ({action: "restore", snapshot_id}); 202',
        description:
          'create: a disk snapshot of the running instance (RAM is not saved); 409 limit_reached past the plan’s ' +
          '`snapshots` (3 unless the plan says; details.limit). restore: the instance is stopped, its disks and ' +
          'config rolled back, and started again if it was running. A snapshot of another instance is 404 like a ' +
          'missing one. Bare metal: 422 not_supported. 409 locked while another job of the instance runs.',
        params: IdParams,
        body: Type.Object(
          {
            action: Type.Union([Type.Literal('create'), Type.Literal('restore')]),
            name: Type.Optional(
              Type.String({ maxLength: 64, description: 'create: a letter, then letters, digits, _ or -' }),
            ),
            description: Type.Optional(Type.String({ maxLength: 500, description: 'create' })),
            snapshot_id: Type.Optional(Type.String({ maxLength: 64, description: 'restore' })),
          },
          { additionalProperties: false },
        ),
        response: { 202: okSchema({ job: JobSchema }), ...tokenErrors(404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { action, ...rest } = request.body;
      const params: Record<string, unknown> =
        action === 'create'
          ? { name: rest.name, ...(rest.description === undefined ? {} : { description: rest.description }) }
          : { snapshot_id: rest.snapshot_id };
      const wrong = action === 'create' ? rest.snapshot_id : (rest.name ?? rest.description);
      if (wrong !== undefined) {
        throw AppError.fields(
          action === 'create'
            ? { snapshot_id: 'is for restore' }
            : { [rest.name !== undefined ? 'name' : 'description']: 'is for create' },
        );
      }
      const job = accepted(await run(accountId, request.params.id, ACTIONS[action], params));
      return reply
        .code(202)
        .header('Location', jobUrl(job.id))
        .send({ ok: true as const, job: jobView(job) });
    },
  );

  app.delete(
    '/instances/:id/snapshots/:sid',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'cloudDeleteSnapshot',
        tags,
        summary: 'Delete a snapshot; 202 with the job',
        params: Type.Object(
          { id: Type.Integer({ minimum: 1 }), sid: Type.String({ maxLength: 64 }) },
          { additionalProperties: false },
        ),
        response: { 202: okSchema({ job: JobSchema }), ...tokenErrors(404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id, sid } = request.params;
      const job = accepted(await run(accountId, id, ACTIONS.delete, { snapshot_id: sid }));
      return reply
        .code(202)
        .header('Location', jobUrl(job.id))
        .send({ ok: true as const, job: jobView(job) });
    },
  );
}
