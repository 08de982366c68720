// How a catalog plan (with its regions and live availability) looks, on every surface.

import { Type } from 'typebox';
import type { CatalogPlan } from '../../core/catalog/catalog.service.ts';
import { formatPaise } from '../../core/money.ts';

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
  type: Type.Union([Type.Literal('vps'), Type.Literal('game'), Type.Literal('web'), Type.Literal('baremetal')]),
  specs: Type.Record(Type.String(), Type.Unknown()),
  price: Type.Object({ monthly: Type.String({ description: 'INR, two decimals' }), currency: Type.Literal('INR') }),
  available: Type.Boolean(),
  regions: Type.Array(RegionSchema),
});

export function planView({ plan, regions, available }: CatalogPlan) {
  return {
    id: plan.id,
    label: plan.label,
    name: plan.name,
    type: plan.type,
    specs: plan.specs,
    price: { monthly: formatPaise(plan.price_paise), currency: 'INR' as const },
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
