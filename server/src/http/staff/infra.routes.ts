// The staff console's infrastructure and catalog (CONTRACT §14; admin): nodes with their health
// and load, drained and undrained (a drained node — `active` false — gets no new service, those on
// it keep running: the flag order placement already reads), and plans, whose price and listing
// change through the catalog core the admin CLI uses, audited with before and after.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { CatalogPlan } from '../../core/catalog/catalog.service.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import { type NodeLoad, nodeLoads } from '../../core/staff/dashboard.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { whoOfStaff } from './context.ts';
import { NodeLoadSchema, nodeLoadView, Reason } from './views.ts';

const PlanSchema = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    name: Type.String(),
    type: Type.String(),
    price_paise: Type.Integer(),
    price: Type.String({ description: 'INR a month, two decimals' }),
    active: Type.Boolean(),
    regions: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

function planView({ plan, regions }: CatalogPlan) {
  return {
    id: plan.id,
    label: plan.label,
    name: plan.name,
    type: plan.type,
    price_paise: Number(plan.price_paise),
    price: formatPaise(plan.price_paise),
    active: plan.active,
    regions: regions.map((r) => r.location.code),
  };
}

export async function staffInfraRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/nodes',
    {
      schema: {
        operationId: 'staffNodes',
        tags: ['staff: infrastructure'],
        summary: 'Every node: health, last error, capacity, load, drained or not (never its credentials)',
        response: { 200: okSchema({ nodes: Type.Array(NodeLoadSchema) }) },
      },
    },
    async () => ({
      success: true as const,
      message: 'Nodes.',
      nodes: (await nodeLoads(deps.database.db)).map(nodeLoadView),
    }),
  );

  app.post(
    '/nodes',
    {
      schema: {
        operationId: 'staffNodeAction',
        tags: ['staff: infrastructure'],
        summary: 'Drain a node (no new service is placed on it) or undrain it',
        description: 'Services on a drained node keep running. 409 when it already is so; a reason is required.',
        body: mutationBody({
          action: Type.Union([Type.Literal('drain'), Type.Literal('undrain')]),
          id: Type.Integer({ minimum: 1 }),
          reason: Reason,
        }),
        response: { 200: okSchema({ node: NodeLoadSchema }), ...sessionErrors(404, 409, 422) },
      },
    },
    async (request) => {
      const { action, id } = request.body;
      const reason = request.body.reason?.trim() ?? '';
      if (reason.length < 3)
        throw AppError.fields({ reason: 'say why (at least 3 characters; kept in the audit log)' });
      await deps.nodes.setActive(id, action === 'undrain', reason, whoOfStaff(request));
      const node = (await nodeLoads(deps.database.db)).find((n) => n.id === id) as NodeLoad;
      return {
        success: true as const,
        message: action === 'drain' ? 'Drained: no new service goes there.' : 'Undrained.',
        node: nodeLoadView(node),
      };
    },
  );

  app.get(
    '/plans',
    {
      schema: {
        operationId: 'staffPlans',
        tags: ['staff: catalog'],
        summary: 'Every plan, active or not, with its regions',
        response: { 200: okSchema({ plans: Type.Array(PlanSchema) }) },
      },
    },
    async () => ({
      success: true as const,
      message: 'Plans.',
      plans: (await deps.catalog.listPlans()).map(planView),
    }),
  );

  app.post(
    '/plans',
    {
      schema: {
        operationId: 'staffPlanAction',
        tags: ['staff: catalog'],
        summary: "Change a plan's monthly price and/or whether it is listed and sold",
        description:
          'New orders and plan changes pay the new price; running services keep the price they were sold at. ' +
          'Audited (plan.update) with the fields that changed, before and after.',
        body: mutationBody({
          action: Type.Literal('update'),
          id: Type.Integer({ minimum: 1 }),
          price_paise: Type.Optional(Type.Integer({ minimum: 1 })),
          active: Type.Optional(Type.Boolean()),
          reason: Reason,
        }),
        response: { 200: okSchema({ plan: PlanSchema }), ...sessionErrors(404, 422) },
      },
    },
    async (request) => {
      const { id, price_paise, active } = request.body;
      await deps.catalog.updatePlan(
        id,
        {
          ...(price_paise === undefined ? {} : { pricePaise: BigInt(price_paise) }),
          ...(active === undefined ? {} : { active }),
        },
        whoOfStaff(request),
        request.body.reason?.trim() || null,
      );
      const found = (await deps.catalog.listPlans()).find((p) => p.plan.id === id) as CatalogPlan;
      return { success: true as const, message: 'Plan updated.', plan: planView(found) };
    },
  );
}
