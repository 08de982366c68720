// Live availability of a location for a plan type: the location is open, an active node of the
// right kind is not known to be down and has room, and (virtual servers) an IPv4 address is free.
// The reasons are the `unavailable:<reason>` codes orders answer with.

import { type Kysely, sql } from 'kysely';
import type { DB, NodeKind, PlanType } from '../../db/tables.ts';
import type { Product } from '../product-kit/product.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';

export type UnavailableReason = 'plan_inactive' | 'region_closed' | 'no_capacity' | 'no_ipv4' | 'not_sold_here';

export interface LocationStock {
  locationId: number;
  active: boolean;
  ipv4Free: number;
  /** Free service slots on usable nodes, per node kind. */
  slots: Partial<Record<NodeKind, number>>;
}

/** Stock of every location in three queries. Slots are node capacity minus the live services placed on it. */
export async function locationStock(db: Kysely<DB>, products: ProductRegistry): Promise<Map<number, LocationStock>> {
  const locations = await db.selectFrom('locations').select(['id', 'active']).execute();
  const { rows: ips } = await sql<{ location_id: number; free: string }>`
    select location_id, count(*) as free from ipv4_addresses where status = 'free' group by location_id`.execute(db);
  // Kinds whose nodes a service holds whole (bare metal): at most one each, and a failed service
  // still waiting for its clean-up holds it (as the order service counts).
  const exclusive = products.all.filter((p) => p.exclusiveNode).map((p) => p.nodeKind);
  const kinds = exclusive.length > 0 ? exclusive : ['-'];
  const { rows: nodes } = await sql<{ location_id: number; kind: NodeKind; free: string }>`
    select n.location_id, n.kind,
      sum(case when n.kind in (${sql.join(kinds)})
        then greatest(least(n.capacity, 1) - ${usedWhole()}, 0)
        else greatest(n.capacity - ${usedOnNode()}, 0) end) as free
    from nodes n
    where n.active and n.health <> 'down'
    group by n.location_id, n.kind`.execute(db);
  const stock = new Map<number, LocationStock>();
  for (const l of locations) {
    stock.set(l.id, {
      locationId: l.id,
      active: l.active,
      ipv4Free: 0,
      slots: {},
    });
  }
  for (const row of ips) {
    const entry = stock.get(row.location_id);
    if (entry) entry.ipv4Free = Number(row.free);
  }
  for (const row of nodes) {
    const entry = stock.get(row.location_id);
    if (entry) entry.slots[row.kind] = Number(row.free);
  }
  return stock;
}

/** SQL for the services a node carries: every one not terminated or failed. */
function usedOnNode() {
  return sql`(select count(*) from services s where s.node_id = n.id and s.status not in ('terminated', 'failed'))`;
}

/** SQL for the services holding a node whole: every live one, and failed ones awaiting clean-up. */
function usedWhole() {
  return sql`(select count(*) from services s where s.node_id = n.id
    and (s.status not in ('terminated', 'failed') or (s.status = 'failed' and s.config->>'cleanup_pending' = 'true')))`;
}

/** Why a plan of `type` cannot be ordered in a location with this stock, or null when it can. */
export function unavailableReason(
  product: Pick<Product, 'nodeKind' | 'order'>,
  stock: LocationStock | undefined,
): UnavailableReason | null {
  if (!stock?.active) return 'region_closed';
  if ((stock.slots[product.nodeKind] ?? 0) <= 0) return 'no_capacity';
  if (product.order.reservesIpv4 && stock.ipv4Free <= 0) return 'no_ipv4';
  return null;
}

/**
 * Per plan type, whether this location has what an order needs now: a node of the product's kind
 * with room, and a free IPv4 address when the product reserves one (the catalog's `available`).
 */
export function availableTypes(products: ProductRegistry, stock: LocationStock): Record<PlanType, boolean> {
  return products.perType((p) => (stock.slots[p.nodeKind] ?? 0) > 0 && (!p.order.reservesIpv4 || stock.ipv4Free > 0));
}
