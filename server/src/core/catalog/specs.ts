// What a plan's `specs` hold, per type: each product's `specs` schema (core/products/<type>/).
// Checked when staff add a plan, so the catalog and the provisioning steps can rely on the shape;
// every problem is named at once, by key, in words staff read (not the schema's own).

import type { TSchema } from 'typebox';
import type { Product } from '../product-kit/product.ts';

/** Why `v` is not what the spec `schema` (a whole number, a number or a slug) takes, or null. */
function problemOf(
  schema: TSchema & { type?: unknown; minimum?: number; maximum?: number },
  v: unknown,
): string | null {
  if (schema.type === 'string')
    return typeof v === 'string' && new RegExp(String((schema as { pattern?: string }).pattern ?? '')).test(v)
      ? null
      : 'must be a slug';
  const whole = schema.type === 'integer';
  const min = schema.minimum ?? Number.NEGATIVE_INFINITY;
  const max = schema.maximum ?? Number.POSITIVE_INFINITY;
  if (typeof v === 'number' && v >= min && v <= max && (!whole || Number.isInteger(v))) return null;
  return `must be ${whole ? 'a whole number' : 'a number'} from ${min} to ${max}`;
}

/** Problems with a plan's specs, by key; empty when they fit the type exactly. */
export function specProblems(product: Pick<Product, 'type' | 'specs'>, specs: unknown): Record<string, string> {
  if (specs === null || typeof specs !== 'object' || Array.isArray(specs)) return { specs: 'must be an object' };
  const problems: Record<string, string> = {};
  const value = specs as Record<string, unknown>;
  const { properties } = product.specs;
  const required: readonly string[] = product.specs.required ?? [];
  for (const [key, schema] of Object.entries(properties)) {
    const v = value[key];
    if (v === undefined) {
      if (required.includes(key)) problems[key] = 'is required';
      continue;
    }
    const problem = problemOf(schema, v);
    if (problem !== null) problems[key] = problem;
  }
  for (const key of Object.keys(value)) if (!(key in properties)) problems[key] = `is not a ${product.type} spec`;
  return problems;
}
