// GET /locations, /plans, /os and POST /quote (read). /plans is served from a per-process copy
// that staff changes to plans invalidate through the bus (it is the most-called route); the
// others read live (availability and IPv4 stock change with every order).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { availableTypes } from '../../core/catalog/availability.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { PLAN_TYPES } from '../../db/tables.ts';
import { tokenErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { PlanSchema, planView, TypeAvailabilitySchema } from '../views/plan.view.ts';
import { PriceSchema, priceView } from '../views/price.view.ts';
import { okSchema } from './envelopes.ts';

const tags = ['token: catalog'];
const PLAN_TYPE_LIST = PLAN_TYPES.join(', ');
/** How long /plans' copy is served before it is refreshed. */
const PLANS_FRESH_MS = 5_000;
const OsSchema = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  family: Type.String(),
  version: Type.String(),
});

export async function catalogRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  // The body of /plans, kept for PLANS_FRESH_MS (availability is part of each plan) and dropped
  // at once when a catalog change arrives through the bus. One refresh at a time, so that the
  // requests in flight when the copy ages do not each compute the catalog: the first one refreshes
  // it and the rest are answered from the copy meanwhile. After a catalog change there is no copy
  // to answer from, and the requests wait for the one refresh.
  let plansBody: string | null = null;
  let plansAt = 0;
  /** Bumped by every catalog change: a refresh begun before one does not keep its answer. */
  let generation = 0;
  let refreshing: Promise<string> | null = null;
  deps.bus.subscribe((message) => {
    if (message.topic !== 'catalog' && message.topic !== 'all') return;
    generation++;
    plansBody = null;
    refreshing = null;
  });
  const refreshPlans = (): Promise<string> => {
    if (refreshing !== null) return refreshing;
    const started = generation;
    const refresh = (async () => {
      const { plans } = await deps.catalog.catalog();
      const body = JSON.stringify({ ok: true, plans: plans.map((p) => planView(p, deps.config.invoicing)) });
      if (started === generation) {
        plansBody = body;
        plansAt = Date.now();
      }
      return body;
    })().finally(() => {
      if (refreshing === refresh) refreshing = null;
    });
    refreshing = refresh;
    return refresh;
  };

  app.get(
    '/plans',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPlans',
        tags,
        summary: `Every active plan (${PLAN_TYPE_LIST}) with specs and the monthly INR price`,
        response: { 200: okSchema({ plans: Type.Array(PlanSchema) }), ...tokenErrors() },
      },
    },
    async (request, reply) => {
      let body = plansBody;
      if (body === null) body = await refreshPlans();
      else if (Date.now() - plansAt > PLANS_FRESH_MS)
        refreshPlans().catch((error: unknown) =>
          request.log.warn({ err: error }, 'plans not refreshed; the previous copy is served'),
        );
      return sendAsIs(reply.type('application/json; charset=utf-8'), body);
    },
  );

  app.get(
    '/locations',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listLocations',
        tags,
        summary: 'Zones with live availability per service type, free IPv4 addresses, and the OS list',
        response: {
          200: okSchema({
            locations: Type.Array(
              Type.Object({
                code: Type.String(),
                name: Type.String(),
                city: Type.String(),
                country: Type.String(),
                ipv4_free: Type.Integer(),
                available: TypeAvailabilitySchema,
              }),
            ),
            os: Type.Array(OsSchema),
          }),
          ...tokenErrors(),
        },
      },
    },
    async () => {
      const catalog = await deps.catalog.catalog();
      return {
        ok: true as const,
        locations: catalog.locations.map(({ location, stock }) => ({
          code: location.code,
          name: location.name,
          city: location.city,
          country: location.country,
          ipv4_free: stock.ipv4Free,
          available: availableTypes(deps.products, stock),
        })),
        os: catalog.os.map((o) => ({ slug: o.slug, name: o.name, family: o.family, version: o.version })),
      };
    },
  );

  app.get(
    '/os',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listOsTemplates',
        tags,
        summary: 'The OS template catalogue',
        response: { 200: okSchema({ os: Type.Array(OsSchema) }), ...tokenErrors() },
      },
    },
    async () => ({
      ok: true as const,
      os: (await deps.catalog.listOs())
        .filter((o) => o.active)
        .map((o) => ({ slug: o.slug, name: o.name, family: o.family, version: o.version })),
    }),
  );

  app.post(
    '/quote',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getQuote',
        tags,
        summary: 'Price and spec of a plan, by `plan_id` or by `plan` (its label)',
        body: Type.Object(
          { plan_id: Type.Optional(Type.Integer({ minimum: 1 })), plan: Type.Optional(Type.String({ maxLength: 64 })) },
          { additionalProperties: false },
        ),
        response: {
          200: okSchema({
            plan: PlanSchema,
            price: PriceSchema,
          }),
          ...tokenErrors(404, 422),
        },
      },
    },
    async (request) => {
      const body = request.body;
      if (body.plan_id === undefined && body.plan === undefined)
        throw AppError.fields({ plan: 'plan_id or plan (a label) is required' }, 'Send plan_id or plan.');
      if (body.plan_id !== undefined && body.plan !== undefined)
        throw AppError.fields({ plan: 'send plan_id or plan (a label), not both' });
      const found = await deps.catalog.findPlan(body.plan_id ?? (body.plan as string));
      if (!found?.plan.active) throw new AppError('not_found', { message: 'No such plan.' });
      return {
        ok: true as const,
        plan: planView(found, deps.config.invoicing),
        price: priceView(found.plan.price_paise, deps.config.invoicing),
      };
    },
  );
}
