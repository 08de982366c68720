// The live power and utilisation of many services at once, for lists: one cached probe per node
// (core/product-kit/live.ts), never a live read per service, so a list never counts against the
// live-read allowance. Each product's live state is built on first use and kept for the process.

import type { Kysely } from 'kysely';
import type { DB, NodeRow, Service } from '../../db/tables.ts';
import type { PowerState } from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import * as nodes from '../nodes/node.repository.ts';
import type { LiveState, ProductLive } from '../product-kit/live.ts';
import type { Product } from '../product-kit/product.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import type { Drivers } from './drivers.ts';
import type { ReadCache } from './list-cache.ts';

/** What a list shows of a service whose product reports no utilisation. */
const NOT_REPORTED: LiveState = { power: null, utilisation: null, gap: 'not_reported', measuredAt: null };

export interface LiveStates {
  /** The product's live state (null: the product has none). */
  liveOf(product: Product): ProductLive | null;
  /**
   * Power and utilisation of many services at once: from each node's cached probe (its
   * product's `states`); a product without `states` shows power only.
   */
  liveStates(list: Service[]): Promise<Map<number, LiveState>>;
}

export function createLiveStates(options: {
  db: Kysely<DB>;
  drivers: Drivers;
  bus: Bus;
  clock: () => Date;
  products: ProductRegistry;
  /** Where the node rows a list's live states need are cached (key space of account 0); none: read each time. */
  nodeCache?: ReadCache<NodeRow[]> | undefined;
}): LiveStates {
  const { db, drivers, bus, clock, products, nodeCache } = options;
  const lives = new Map<Product, ProductLive>();
  function liveOf(product: Product): ProductLive | null {
    if (!product.live) return null;
    let live = lives.get(product);
    if (!live) {
      live = product.live({ db, drivers, bus, clock });
      lives.set(product, live);
    }
    return live;
  }

  async function nodeRowsOf(list: Service[]): Promise<NodeRow[]> {
    const nodeIds = [...new Set(list.map((s) => s.node_id).filter((id): id is number => id !== null))];
    nodeIds.sort((a, b) => a - b);
    if (nodeIds.length === 0) return [];
    return nodeCache
      ? nodeCache.read(0, nodeIds.join(','), () => nodes.findByIds(db, nodeIds))
      : nodes.findByIds(db, nodeIds);
  }

  async function liveStates(list: Service[]): Promise<Map<number, LiveState>> {
    const out = new Map<number, LiveState>();
    const nodeRows = await nodeRowsOf(list);
    const byProduct = new Map<Product, Service[]>();
    for (const service of list) {
      const product = products.of(service.type);
      byProduct.set(product, [...(byProduct.get(product) ?? []), service]);
    }
    await Promise.all(
      [...byProduct].map(async ([product, group]) => {
        const live = liveOf(product);
        if (live?.states) {
          const states = await live.states(group, nodeRows);
          for (const service of group) out.set(service.id, states.get(service.id) ?? NOT_REPORTED);
          return;
        }
        const powers = live ? await live.powerStates(group, nodeRows) : new Map<number, PowerState | null>();
        for (const service of group) out.set(service.id, { ...NOT_REPORTED, power: powers.get(service.id) ?? null });
      }),
    );
    return out;
  }

  return { liveOf, liveStates };
}
