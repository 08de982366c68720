// Response serialization without a schema validator in the loop. fast-json-stringify serializes
// an `anyOf` by running Ajv on the value against each branch until one matches, format checks
// included: a nullable date (`Type.Union([Type.String({ format: 'date-time' }), Type.Null()])`)
// costs a regular-expression validation per field per response. For serializing, a union of plain
// scalars says no more than "one of these JSON types", which fast-json-stringify writes with a
// `typeof` test: so such unions — and a union of one object or array with scalars, typically
// `X | null` — become `type: [...]` in the schema the serializer is built from.
// The route's own schema (validation, the OpenAPI document) is left as it is.

import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance } from 'fastify';

type Schema = Record<string, unknown>;

const SCALARS = new Set(['string', 'null', 'integer', 'number', 'boolean']);
/** Keywords a scalar branch may carry that say nothing about how it is written. */
const SCALAR_KEYWORDS = new Set([
  'type',
  'format',
  'description',
  'title',
  'examples',
  'default',
  'enum',
  'const',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  '$comment',
]);

function scalarType(branch: unknown): string | null {
  if (typeof branch !== 'object' || branch === null) return null;
  const b = branch as Schema;
  if (typeof b.type !== 'string' || !SCALARS.has(b.type)) return null;
  for (const key of Object.keys(b)) if (!SCALAR_KEYWORDS.has(key)) return null;
  return b.type;
}

/** An object or array schema that says what it is by `type` alone (no nested union or reference). */
function isPlainStructured(branch: Schema): boolean {
  if (branch.type !== 'object' && branch.type !== 'array') return false;
  return !('anyOf' in branch || 'oneOf' in branch || 'allOf' in branch || '$ref' in branch || 'if' in branch);
}

/**
 * A union of plain objects (a route answering one of several shapes, e.g. a list or one item) as
 * one object holding every branch's properties, when the properties the branches share have the
 * same schema: each value is then written as its own branch would write it, without validating
 * it against each branch first (for a list, that validates the whole page and its dates per
 * response). Required are the properties every branch requires.
 */
function mergedObjects(branches: unknown[]): Schema | null {
  if (branches.length < 2) return null;
  const objects: Schema[] = [];
  for (const branch of branches) {
    if (typeof branch !== 'object' || branch === null) return null;
    const b = branch as Schema;
    if (b.type !== 'object' || !isPlainStructured(b) || 'patternProperties' in b) return null;
    objects.push(b);
  }
  const additional = JSON.stringify(objects[0]?.additionalProperties);
  if (objects.some((o) => JSON.stringify(o.additionalProperties) !== additional)) return null;
  const properties: Record<string, unknown> = {};
  for (const o of objects) {
    for (const [name, property] of Object.entries((o.properties ?? {}) as Record<string, unknown>)) {
      if (name in properties && JSON.stringify(properties[name]) !== JSON.stringify(property)) return null;
      properties[name] = property;
    }
  }
  const requiredBy = (o: Schema) => new Set(Array.isArray(o.required) ? (o.required as string[]) : []);
  const required = [...requiredBy(objects[0] as Schema)].filter((name) =>
    objects.every((o) => requiredBy(o).has(name)),
  );
  const out: Schema = { type: 'object', properties };
  if (required.length > 0) out.required = required;
  if (objects[0]?.additionalProperties !== undefined) out.additionalProperties = objects[0].additionalProperties;
  return out;
}

/** A copy of `schema` with unions of scalars written as type lists (see the top of the file). */
export function serializationSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializationSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const source = schema as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    // Literal values (defaults, examples, enums) are data, not schemas.
    out[key] =
      key === 'default' || key === 'examples' || key === 'enum' || key === 'const' ? value : serializationSchema(value);
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = out[keyword];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const merged = mergedObjects(branches);
    if (merged !== null) {
      delete out[keyword];
      Object.assign(out, merged);
      continue;
    }
    const types = branches.map(scalarType);
    // Besides scalars, one object or one array may be among the branches (`Type.Union([X, Type.Null()])`):
    // the type list then carries that branch's keywords (properties, items…).
    const others = branches.filter((_, i) => types[i] === null);
    if (others.length > 1) continue;
    const structured = others[0] as Schema | undefined;
    if (structured && !isPlainStructured(structured)) continue;
    const set = new Set<string>(types.filter((t): t is string => t !== null));
    if (set.has('number')) set.delete('integer');
    delete out[keyword];
    delete out.format;
    if (structured) {
      for (const [key, value] of Object.entries(structured)) if (key !== 'type' && !(key in out)) out[key] = value;
      set.add(structured.type as string);
    }
    out.type = [...set];
  }
  return out;
}

type FjsSchema = Parameters<typeof fastJsonStringify>[0];

/**
 * Serialize the routes of `app`'s scope from the simplified schemas (call before its routes are
 * added). Shared schemas (`app.addSchema`, e.g. the error envelopes) are simplified the same way.
 */
export function useFastSerializer(app: FastifyInstance): void {
  let external: Record<string, FjsSchema> | null = null;
  app.setSerializerCompiler(({ schema }) => {
    // Built on first use, like the validators (validation.ts): most of an app's hundreds of
    // response schemas are never written by a given process, and building them all cost about
    // 0.35 s of CPU at every start.
    let write: ((data: unknown) => string) | null = null;
    return (data: unknown) => {
      if (write === null) {
        external ??= Object.fromEntries(
          Object.entries(app.getSchemas()).map(([id, s]) => [id, serializationSchema(s) as FjsSchema]),
        );
        write = fastJsonStringify(serializationSchema(schema) as FjsSchema, { schema: external });
      }
      return write(data);
    };
  });
}
