// The registry of products: one per plan type, composed once by core/deps.ts from
// core/products/index.ts (the only place that names every product) and handed to the orders,
// services, catalog, the worker and the surfaces. Tests build their own (a throwaway product in
// place of one type) instead of changing a global.

import { PLAN_TYPES, type PlanType } from '../../db/tables.ts';
import type { ProductAction } from './actions.ts';
import type { Product } from './product.ts';

/** One product per plan type: the compiler refuses a list that misses a type of PLAN_TYPES. */
export type ProductList = { readonly [T in PlanType]: Product };

export interface ProductRegistry {
  /** The product of a plan type (every plan type has one). */
  of(type: PlanType): Product;
  /** Every product, in plan-type order (PLAN_TYPES). */
  readonly all: readonly Product[];
  /** The action `name` of the products, the service's own first (null: no product has it). */
  findAction(name: string, type?: PlanType): { product: Product; action: ProductAction } | null;
  /** The power signals of every product, each once (`POST /services/power`'s `action`). */
  readonly signals: readonly string[];
  /** A value for each plan type, from its product. */
  perType<T>(value: (product: Product) => T): Record<PlanType, T>;
}

export function createProductRegistry(list: ProductList): ProductRegistry {
  for (const type of PLAN_TYPES) {
    if (list[type].type !== type) throw new Error(`the product registered for ${type} is of type ${list[type].type}`);
  }
  const all = PLAN_TYPES.map((type) => list[type]);
  const of = (type: PlanType): Product => {
    if (!Object.hasOwn(list, type)) throw new Error(`no product is registered for ${type}`);
    return list[type];
  };
  return {
    of,
    all,
    findAction(name, type) {
      const ordered = type ? [of(type), ...all.filter((p) => p.type !== type)] : all;
      for (const product of ordered) {
        const action = product.actions.find((a) => a.name === name);
        if (action) return { product, action };
      }
      return null;
    },
    signals: [...new Set(all.flatMap((p) => Object.keys(p.jobs.power)))],
    perType(value) {
      // Every key of PLAN_TYPES is set: the one cast is what Object.fromEntries cannot say.
      return Object.fromEntries(all.map((p) => [p.type, value(p)])) as Record<PlanType, ReturnType<typeof value>>;
    },
  };
}
