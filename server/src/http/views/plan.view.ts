// How a catalog plan (with its regions and live availability) looks, on every surface. The plan
// types come from PLAN_TYPES (db/tables.ts, which the product registry is typed by), never a list
// written out here: a schema that named three
// types made the serializer drop the fourth (`available.baremetal`) from every answer.

import { type TBoolean, Type } from 'typebox';
import type { CatalogPlan } from '../../core/catalog/catalog.service.ts';
import { PLAN_TYPES, type PlanType } from '../../db/tables.ts';
import { PriceSchema, type Pricing, priceView } from './price.view.ts';

/** A plan type: one of the registered products. */
export const PlanTypeSchema = Type.Unsafe<PlanType>(
  Type.Union(
    PLAN_TYPES.map((t) => Type.Literal(t)),
    { description: PLAN_TYPES.join(', ') },
  ),
);

/** Per plan type, whether a location can take an order of it now (core/catalog availableTypes). */
export const TypeAvailabilitySchema = Type.Object(
  Object.fromEntries(PLAN_TYPES.map((t) => [t, Type.Boolean()])) as Record<PlanType, TBoolean>,
  { description: 'one flag per plan type' },
);

const RegionSchema = Type.Object({
  code: Type.String(),
  name: Type.String(),
  city: Type.String(),
  available: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()], {
    description: 'why not orderable: region_closed, no_capacity, no_ipv4',
  }),
});

export const PlanSchema = Type.Object({
  id: Type.Integer(),
  label: Type.String({ description: 'usable instead of the id when ordering' }),
  name: Type.String(),
  type: PlanTypeSchema,
  specs: Type.Record(Type.String(), Type.Unknown()),
  price: PriceSchema,
  available: Type.Boolean(),
  regions: Type.Array(RegionSchema),
});

export function planView({ plan, regions, available }: CatalogPlan, pricing: Pricing) {
  return {
    id: plan.id,
    label: plan.label,
    name: plan.name,
    type: plan.type,
    specs: plan.specs,
    price: priceView(plan.price_paise, pricing),
    available,
    regions: regions.map((r) => ({
      code: r.location.code,
      name: r.location.name,
      city: r.location.city,
      available: r.available,
      reason: r.reason,
    })),
  };
}
