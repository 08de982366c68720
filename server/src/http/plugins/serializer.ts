// Response serialization without a schema validator in the loop (issue 18). fast-json-stringify
// serializes an `anyOf` by running Ajv on the value against each branch until one matches, format
// checks included: a nullable date (`Type.Union([Type.String({ format: 'date-time' }),
// Type.Null()])`) costs a regular-expression validation per field per response. The profile of
// `GET /api/v1/instances` put a tenth of the CPU there. For serializing, a union of plain
// scalars says no more than "one of these JSON types", which fast-json-stringify writes with a
// `typeof` test: so such unions become `type: [...]` in the schema the serializer is built from.
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
    const branches = source[keyword];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const types = branches.map(scalarType);
    if (types.some((t) => t === null)) continue;
    const set = new Set(types as string[]);
    if (set.has('number')) set.delete('integer');
    delete out[keyword];
    delete out.format;
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
    external ??= Object.fromEntries(
      Object.entries(app.getSchemas()).map(([id, s]) => [id, serializationSchema(s) as FjsSchema]),
    );
    return fastJsonStringify(serializationSchema(schema) as FjsSchema, { schema: external });
  });
}
