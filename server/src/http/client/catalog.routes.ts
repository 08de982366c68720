// Spec 4.5: GET /api/v1/client/catalog/ — active plans with live availability per region,
// the regions, OS templates and games; `?plan_id=` one plan (unknown or retired: 404).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { availableTypes } from '../../core/catalog/availability.ts';
import type { Deps } from '../../core/deps.ts';
import { CURRENCY } from '../../core/money.ts';
import { sessionErrors } from '../schemas.ts';
import { PlanSchema, planView, TypeAvailabilitySchema } from '../views/plan.view.ts';
import { okSchema } from './envelopes.ts';

export async function catalogRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/catalog/',
    {
      schema: {
        operationId: 'getCatalog',
        tags: ['catalog'],
        summary: 'The catalog: plans, availability, regions, pricing (or one plan with ?plan_id=)',
        querystring: Type.Object(
          { plan_id: Type.Optional(Type.Integer({ minimum: 1 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({
              currency: Type.Literal('INR'),
              plans: Type.Array(PlanSchema),
              regions: Type.Array(
                Type.Object({
                  code: Type.String(),
                  name: Type.String(),
                  city: Type.String(),
                  country: Type.String(),
                  ipv4_free: Type.Integer(),
                  available: TypeAvailabilitySchema,
                }),
              ),
              os: Type.Array(
                Type.Object({
                  slug: Type.String(),
                  name: Type.String(),
                  family: Type.String(),
                  version: Type.String(),
                }),
              ),
              games: Type.Array(Type.Object({ slug: Type.String(), name: Type.String() })),
            }),
            okSchema({ plan: PlanSchema }),
          ]),
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request) => {
      const { plan_id: planId } = request.query;
      if (planId !== undefined) {
        return {
          success: true as const,
          message: 'Plan loaded.',
          plan: planView(await deps.catalog.plan(planId), deps.config.invoicing),
        };
      }
      const catalog = await deps.catalog.catalog();
      return {
        success: true as const,
        message: 'Catalog loaded.',
        currency: CURRENCY as 'INR',
        plans: catalog.plans.map((p) => planView(p, deps.config.invoicing)),
        regions: catalog.locations.map(({ location, stock }) => ({
          code: location.code,
          name: location.name,
          city: location.city,
          country: location.country,
          ipv4_free: stock.ipv4Free,
          available: availableTypes(deps.products, stock),
        })),
        os: catalog.os.map((o) => ({ slug: o.slug, name: o.name, family: o.family, version: o.version })),
        games: catalog.games,
      };
    },
  );
}
