// {ALT_BASE_PATH}/v1/images, /plans, /regions: what a deploy names, so that one is composed from
// this surface alone. The catalog of every surface (core/catalog/), narrowed to the products
// this surface deploys and named as it names them (kvm, baremetal).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { availableTypes } from '../../core/catalog/availability.ts';
import type { Deps } from '../../core/deps.ts';
import { okSchema } from '../rest/envelopes.ts';
import { tokenErrors } from '../schemas.ts';
import { PlanSchema, planView } from '../views/plan.view.ts';
import { INSTANCE_TYPES, type InstanceType, instanceType } from './views.ts';

const tags = ['cloud: catalog'];
const TYPES = Object.keys(INSTANCE_TYPES) as InstanceType[];
const sold = (planType: string) => (Object.values(INSTANCE_TYPES) as string[]).includes(planType);

const TypeFlags = Type.Object(
  Object.fromEntries(TYPES.map((t) => [t, Type.Boolean()])) as Record<InstanceType, ReturnType<typeof Type.Boolean>>,
);

export async function cloudCatalogRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/plans',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListPlans',
        tags,
        summary: 'KVM and bare-metal plans: specs, monthly INR price, regions with live availability',
        response: {
          200: okSchema({
            plans: Type.Array(
              Type.Object({
                ...PlanSchema.properties,
                type: Type.String({ description: 'kvm or baremetal: the `type` a deploy of it names' }),
                plan_type: Type.String({ description: 'vps or baremetal' }),
              }),
            ),
          }),
          ...tokenErrors(),
        },
      },
    },
    async () => {
      const { plans } = await deps.catalog.catalog();
      return {
        ok: true as const,
        plans: plans
          .filter((p) => sold(p.plan.type))
          .map((p) => ({
            ...planView(p, deps.config.invoicing),
            type: instanceType(p.plan.type),
            plan_type: p.plan.type,
          })),
      };
    },
  );

  app.get(
    '/regions',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListRegions',
        tags,
        summary: 'Regions (node locations) and whether each instance type can be deployed there now',
        response: {
          200: okSchema({
            regions: Type.Array(
              Type.Object({
                code: Type.String(),
                name: Type.String(),
                city: Type.String(),
                country: Type.String(),
                available: TypeFlags,
              }),
            ),
          }),
          ...tokenErrors(),
        },
      },
    },
    async () => {
      const { locations } = await deps.catalog.catalog();
      return {
        ok: true as const,
        regions: locations.map(({ location, stock }) => {
          const available = availableTypes(deps.products, stock) as Record<string, boolean>;
          return {
            code: location.code,
            name: location.name,
            city: location.city,
            country: location.country,
            available: Object.fromEntries(TYPES.map((t) => [t, available[INSTANCE_TYPES[t]] ?? false])) as Record<
              InstanceType,
              boolean
            >,
          };
        }),
      };
    },
  );

  app.get(
    '/images',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListImages',
        tags,
        summary: 'OS images: the `image` of a deploy, and the instance types each installs on',
        response: {
          200: okSchema({
            images: Type.Array(
              Type.Object({
                id: Type.String({ description: 'what a deploy names as image' }),
                name: Type.String(),
                family: Type.String(),
                version: Type.String(),
                types: Type.Array(Type.String(), { description: 'kvm, and baremetal when it has an install image' }),
              }),
            ),
          }),
          ...tokenErrors(),
        },
      },
    },
    async () => ({
      ok: true as const,
      images: (await deps.catalog.listOs())
        .filter((o) => o.active)
        .map((o) => ({
          id: o.slug,
          name: o.name,
          family: o.family,
          version: o.version,
          types: ['kvm', ...(o.image_url ? ['baremetal'] : [])],
        })),
    }),
  );
}
