// What a plan's `specs` hold, per type: each product's `specRules` (core/products/). Checked
// when staff add a plan, so the catalog and the provisioning drivers can rely on the shape.

import type { Product } from '../product-kit/product.ts';

/** Problems with a plan's specs, by key; empty when they fit the type exactly. */
export function specProblems(product: Pick<Product, 'type' | 'specRules'>, specs: unknown): Record<string, string> {
  const { type } = product;
  const problems: Record<string, string> = {};
  if (specs === null || typeof specs !== 'object' || Array.isArray(specs)) return { specs: 'must be an object' };
  const value = specs as Record<string, unknown>;
  const rules = product.specRules;
  for (const [key, rule] of Object.entries(rules)) {
    const v = value[key];
    if (v === undefined) {
      if (!('default' in rule && rule.default !== undefined)) problems[key] = 'is required';
    } else if (rule.kind === 'slug' && (typeof v !== 'string' || !/^[a-z0-9][a-z0-9-]{1,47}$/.test(v)))
      problems[key] = 'must be a slug';
    else if (
      rule.kind !== 'slug' &&
      (typeof v !== 'number' || v < rule.min || v > rule.max || (rule.kind === 'int' && !Number.isInteger(v)))
    ) {
      problems[key] = `must be ${rule.kind === 'int' ? 'a whole number' : 'a number'} from ${rule.min} to ${rule.max}`;
    }
  }
  for (const key of Object.keys(value)) if (!(key in rules)) problems[key] = `is not a ${type} spec`;
  return problems;
}
