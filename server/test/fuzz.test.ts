// Schema-driven fuzzing (reliability T4): every operation of the OpenAPI document, on both
// surfaces, with bodies, queries and path ids built from its own schema and then spoiled —
// wrong types, boundary numbers, NUL and other control characters, long strings, deep nesting,
// prototype keys, extra fields. Whatever arrives: never a 5xx, always the surface's envelope
// with a request id, and no polluted prototype. Seeded, so a failure replays.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { ManualClock } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { type SignedInStaff, signedInStaff } from './support/staff.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
};
interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query: Record<string, Schema>;
  body: Schema | null;
}

let u: UpstreamApp;
let session: { browser: Browser };
/** An admin of the staff console (/api/v1/staff), so its routes are reached past their role check. */
let staff: SignedInStaff;
const staffClock = new ManualClock();
let token: ApiClient;
let operations: Operation[];

before(async () => {
  u = await createUpstreamApp({ worker: false });
  session = await signedInBrowser(u.t, freshIp());
  staff = await signedInStaff(u.t, staffClock, 'admin', freshIp());
  token = await apiClient(u.t, ['*'], '0');
  const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: { in: string; name: string; schema: Schema }[];
          requestBody?: { content: Record<string, { schema: Schema }> };
        }
      >
    >;
  };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => ['get', 'post', 'put', 'delete'].includes(method))
      // Signing out ends the fuzzer's own session; health and the document take no input.
      .filter(() => !/\/auth\/logout\/?$|\/health\/|openapi\.json/.test(path))
      .map(([method, op]) => ({
        method: method.toUpperCase() as Operation['method'],
        path,
        query: Object.fromEntries(
          (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.schema] as const),
        ),
        body: op.requestBody?.content['application/json']?.schema ?? null,
      })),
  );
});
after(() => u.close());

/** Strings a schema accepts as strings, chosen to break what comes after it. */
const nastyString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u202egnp.exe',
  '😀'.repeat(50),
  'x'.repeat(70_000),
  '../../etc/passwd',
  '%00',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  'svc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'pay_ZZZZ',
  '2147483648',
  '-1',
  'NaN',
  '1e309',
  '0x10',
  'true',
);
/** Numbers a schema accepts as integers or numbers, at the edges. */
const edgeInteger = fc.constantFrom(0, -1, 1, 2, 3, 2 ** 31 - 1, 2 ** 31, 2 ** 53, -(2 ** 53));
/** Anything at all, mostly of the wrong type. */
const nasty = fc.oneof(
  nastyString,
  edgeInteger,
  fc.constantFrom<unknown>(
    0.1,
    Number.MAX_VALUE,
    true,
    null,
    [],
    [[[[[[[[[[]]]]]]]]]],
    {},
    JSON.parse('{"__proto__":{"polluted":true}}'),
    { constructor: { prototype: { polluted: true } } },
  ),
);

/** A value of the schema's own type, often at an edge, so requests get past the schema to the core. */
function valueFor(schema: Schema | undefined): fc.Arbitrary<unknown> {
  if (!schema) return nasty;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(valueFor));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
      return fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) }, { weight: 2, arbitrary: edgeInteger });
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), edgeInteger);
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueFor(schema.items), { maxLength: 4 });
    case 'object':
      return objectFor(schema);
    default:
      return fc.oneof(
        { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
        { weight: 4, arbitrary: nastyString },
      );
  }
}

/** An object of the schema's shape; sometimes one field of the wrong type, sometimes an extra field. */
function objectFor(schema: Schema): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const keys = Object.keys(props);
  const shaped = fc.record(Object.fromEntries(keys.map((key) => [key, valueFor(props[key])])), {
    requiredKeys: [],
  }) as fc.Arbitrary<Record<string, unknown>>;
  const spoiled =
    keys.length === 0
      ? shaped
      : fc.tuple(shaped, fc.constantFrom(...keys), nasty).map(([object, key, value]) => ({ ...object, [key]: value }));
  const extra = fc
    .tuple(shaped, fc.string({ minLength: 1, maxLength: 12 }), nasty)
    .map(([object, key, value]) => ({ ...object, [key]: value }));
  return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 2, arbitrary: spoiled }, { weight: 1, arbitrary: extra });
}

const pathValue = fc.constantFrom(
  '1',
  '1',
  '2',
  '3',
  '1',
  '2',
  '0',
  '-1',
  '2147483648',
  '99999999999999999999',
  'abc',
  '1e3',
  '%00',
  '%E0%A4%A',
  'start',
  'vnc',
);

function encodeQuery(values: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(text.slice(0, 2000))}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

async function send(op: Operation, url: string, body: unknown): Promise<LightMyRequestResponse> {
  const isSession = /^\/api\/v1\/(client|search)/.test(op.path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (op.path.startsWith('/api/v1/staff/')) {
    return staff.browser.request(op.method as 'GET' | 'POST', url, {
      ...(payload === undefined ? {} : { body: payload, headers: { 'content-type': 'application/json' } }),
    });
  }
  if (isSession) {
    return session.browser.request(op.method, url, {
      csrf: true,
      ...(payload === undefined ? {} : { body: payload, headers: { 'content-type': 'application/json' } }),
    });
  }
  return token.call(op.method, url, payload === undefined ? undefined : JSON.parse(payload));
}

describe('schema-driven fuzzing', () => {
  test('every operation: no 5xx, the envelope of its surface, a request id, no prototype pollution', async () => {
    assert.ok(operations.length > 30, `only ${operations.length} operations in the document`);
    const failures: string[] = [];
    const seen = new Map<string, number>();
    for (const op of operations) {
      const input = fc.record({
        params: fc.array(pathValue, { minLength: 2, maxLength: 2 }),
        query: fc.record(Object.fromEntries(Object.entries(op.query).map(([k, s]) => [k, valueFor(s)])), {
          requiredKeys: [],
        }),
        body: op.body
          ? fc.oneof({ weight: 5, arbitrary: objectFor(op.body) }, { weight: 1, arbitrary: nasty })
          : fc.constant(undefined),
      });
      await fc.assert(
        fc.asyncProperty(input, async ({ params, query, body }) => {
          let n = 0;
          const path = op.path.replace(/\{[^}]+\}/g, () => params[n++] ?? '1');
          const url = path + encodeQuery(query as Record<string, unknown>);
          const res = await send(op, url, body);
          // The staff console's API answers in the session envelope too (CONTRACT §14).
          const session = /^\/api\/v1\/(client|search|staff)/.test(op.path);
          const tally = `${op.method} ${op.path} ${res.statusCode}`;
          seen.set(tally, (seen.get(tally) ?? 0) + 1);
          const where = `${op.method} ${url.slice(0, 200)} body=${JSON.stringify(body)?.slice(0, 200)}`;
          if (res.statusCode >= 500) failures.push(`${res.statusCode} ${where}: ${res.body.slice(0, 300)}`);
          if (!res.headers['x-request-id']) failures.push(`no request id: ${where}`);
          if (res.statusCode >= 400) {
            const parsed = res.json() as Record<string, unknown>;
            const ok = session
              ? parsed.success === false && typeof parsed.code === 'string' && typeof parsed.errors === 'object'
              : parsed.ok === false && typeof parsed.error === 'string' && parsed.status === res.statusCode;
            if (!ok) failures.push(`envelope ${res.statusCode} ${where}: ${res.body.slice(0, 300)}`);
            assert.doesNotMatch(res.body, /\bat \S+ \(|node_modules|SELECT |INSERT /, where);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      // A session the fuzzer signed out of, or rotated, is renewed so later operations are reached.
      if ((await session.browser.get('/api/v1/client/account/')).statusCode === 401)
        session = await signedInBrowser(u.t, freshIp());
      if ((await staff.browser.get('/me')).statusCode === 401)
        staff = await signedInStaff(u.t, staffClock, 'admin', freshIp());
    }
    // FUZZ_DEBUG=1 prints what each operation answered, to see how deep the inputs got.
    if (process.env.FUZZ_DEBUG) process.stdout.write(`${[...seen].map(([k, v]) => `${k} ×${v}`).join('\n')}\n`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures`);
  });
});
