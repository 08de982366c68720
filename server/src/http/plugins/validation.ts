// Request validation. Bodies are validated strictly (no type coercion: `"5"` is not 5, and an
// unknown field is refused rather than silently dropped); query strings, params and headers
// are coerced, since on the wire they are always text. Every failing field is reported.
//
// Two rules hold for every schema without each route spelling them out, because the database
// would otherwise refuse the value with a 500: an integer is a PostgreSQL `integer` unless its
// schema says otherwise (at most 2^31 − 1), and no string carries a NUL character.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

export const INT4_MAX = 2_147_483_647;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  // ajv-formats is CommonJS with a default export; under NodeNext its default import is the module.
  (formats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
  return ajv;
}

/** A copy of `schema` in which every integer without a maximum gets the database's. */
function withIntegerBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withIntegerBounds);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = withIntegerBounds(value);
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes('integer') && out.maximum === undefined && out.exclusiveMaximum === undefined) {
    out.maximum = INT4_MAX;
  }
  return out;
}

/** Every string in `data` that holds a NUL, as ajv-style issues (PostgreSQL text cannot hold one). */
function nulIssues(data: unknown, path = '', depth = 0): ErrorObject[] {
  if (typeof data === 'string') {
    return data.includes('\u0000')
      ? [{ keyword: 'nul', instancePath: path, schemaPath: '', params: {}, message: 'must not contain NUL characters' }]
      : [];
  }
  if (data === null || typeof data !== 'object' || depth > 8) return [];
  const issues: ErrorObject[] = [];
  for (const [key, value] of Object.entries(data)) {
    issues.push(...nulIssues(value, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1));
  }
  return issues;
}

/**
 * Text parts (query, params) are coerced by ajv with JavaScript's Number(), which also takes
 * `0x2`, `2e0` and ` 2`. An integer on the wire is written in decimal digits, and nothing else.
 */
function looseIntegers(schema: unknown, data: unknown): ErrorObject[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  if (!properties || data === null || typeof data !== 'object') return [];
  const issues: ErrorObject[] = [];
  for (const [key, sub] of Object.entries(properties)) {
    const value = (data as Record<string, unknown>)[key];
    if (sub?.type === 'integer' && typeof value === 'string' && !/^-?\d+$/.test(value)) {
      issues.push({ keyword: 'type', instancePath: `/${key}`, schemaPath: '', params: {}, message: 'must be integer' });
    }
  }
  return issues;
}

/** The properties of `data` its schema declares (the rest is checked by whoever takes them). */
function declaredPart(schema: object, data: unknown): unknown {
  const properties = (schema as { properties?: Record<string, unknown> }).properties;
  if (!properties || data === null || typeof data !== 'object') return data;
  return Object.fromEntries(Object.entries(data).filter(([key]) => key in properties));
}

type Check = ((data: unknown) => boolean) & { errors: ErrorObject[] | null };

let shared: { body: Ajv; text: Ajv } | null = null;

/**
 * The validator of one schema, with this file's rules: `text` for query strings, params and
 * headers (coerced), else a body (strict). On failure its `errors` hold every issue.
 */
export function compileValidator(schema: object, text: boolean, options: { nulInDeclaredOnly?: boolean } = {}): Check {
  // Compiled on first use: an app has hundreds of schemas and a process (a worker, a test, a
  // staff command) uses few of them; compiling all of them cost about 0.4 s of CPU at every start.
  let validate: ValidateFunction | null = null;
  const check = ((data: unknown): boolean => {
    if (validate === null) {
      shared ??= { body: makeAjv(false), text: makeAjv(true) };
      validate = (text ? shared.text : shared.body).compile(withIntegerBounds(schema) as object);
    }
    // Before ajv: coercion replaces the text with the number.
    const loose = text ? looseIntegers(schema, data) : [];
    const valid = validate(data);
    const extra = [...loose, ...nulIssues(options.nulInDeclaredOnly ? declaredPart(schema, data) : data)];
    if (valid && extra.length === 0) return true;
    check.errors = [...(validate.errors ?? []), ...extra];
    return false;
  }) as Check;
  check.errors = null;
  return check;
}

export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    compileValidator(schema as object, httpPart !== 'body'),
  );
}

/**
 * In `app`'s scope, no body at all reads as an empty object: actions that take none accept a bare
 * POST, and routes with required fields name them instead of saying "must be a JSON object" (the
 * token surfaces). A callback hook: no promise per request.
 */
export function emptyBodyAsObject(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined || request.body === null) request.body = {};
    done();
  });
}
