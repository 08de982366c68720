// The OpenAPI document as an SDK generator reads it: every operation has a unique operationId
// and declares the security of its surface (bearer on the token surface; the session cookie,
// plus the CSRF header on mutations, on the session surface; nothing on public routes). A route
// without an operationId is refused at boot.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerOpenApi } from '../src/http/plugins/openapi.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
}

let t: TestApp;
let operations: { method: string; path: string; route: string; op: Operation }[];
before(async () => {
  t = await createTestApp();
  const res = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json() as { paths: Record<string, Record<string, Operation>> };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      // The route as Fastify names it.
      route: `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
      op,
    })),
  );
});
after(() => t.close());

/** Session-surface routes that take no session (spec 4.3); login needs the anonymous one. */
const PUBLIC_SESSION_ROUTES = new Set(
  ['auth/csrf/', 'auth/register/', 'auth/otp-login/', 'auth/forgot/', 'auth/reset/', 'auth/verify/'].map(
    (p) => `/api/v1/client/${p}`,
  ),
);
/** Public reads whose POST is a CSRF-checked sign-in, as login's (GET auth/passkey/: the options). */
const PUBLIC_SESSION_READS = new Set(['/api/v1/client/auth/passkey/']);

describe('OpenAPI operations', () => {
  test('every operation has an operationId, unique across the document', () => {
    assert.ok(operations.length >= 41, `${operations.length} operations`);
    const seen = new Map<string, string>();
    for (const { route, op } of operations) {
      assert.ok(op.operationId !== undefined, `${route} has no operationId`);
      assert.match(op.operationId, /^[a-z][A-Za-z0-9]*$/, `${route}: camelCase`);
      assert.equal(seen.get(op.operationId), undefined, `${route} repeats the operationId ${op.operationId}`);
      seen.set(op.operationId, route);
    }
  });

  test('every operation declares the security of its surface', () => {
    for (const { method, path, route, op } of operations) {
      assert.ok(Array.isArray(op.security), `${route} declares no security`);
      let expected: Record<string, string[]>[];
      if (path === '/api/v1/health/' || path === '/livez' || path === '/readyz') expected = [];
      // A payment gateway's webhook proves itself by its body's signature, not a credential.
      else if (path.startsWith('/api/v1/webhooks/')) expected = [];
      // Search answers a session or a bearer token (CONTRACT §8).
      else if (path.replace(/\/$/, '') === '/api/v1/search') expected = [{ session: [] }, { bearer: [] }];
      else if (path.startsWith('/api/v1/client/')) {
        if (PUBLIC_SESSION_ROUTES.has(path) || (method === 'GET' && PUBLIC_SESSION_READS.has(path))) expected = [];
        else if (method === 'GET') expected = [{ session: [] }];
        else expected = [{ session: [], csrf: [] }];
      } else if (path.startsWith('/api/v1/staff/')) {
        // The staff console (CONTRACT §14): its own cookie and CSRF token; only the bootstrap is public.
        if (path === '/api/v1/staff/auth/csrf') expected = [];
        else if (method === 'GET') expected = [{ staffSession: [] }];
        else expected = [{ staffSession: [], staffCsrf: [] }];
      } else expected = [{ bearer: [] }];
      assert.deepEqual(op.security, expected, route);
    }
  });

  test('the token surface names the SDK methods a client expects', () => {
    const ids = Object.fromEntries(operations.map((o) => [o.route, o.op.operationId]));
    assert.equal(ids['POST /api/v1/instances'], 'deployInstance');
    assert.equal(ids['GET /api/v1/instances'], 'listInstances');
    assert.equal(ids['GET /api/v1/instances/:id'], 'getInstance');
    assert.equal(ids['POST /api/v1/client/orders/'], 'placeOrder');
  });

  test('a route without an operationId, or with a taken one, is refused at boot', async () => {
    for (const routes of [
      [{ url: '/x', schema: { summary: 'no id' } }],
      [
        { url: '/a', schema: { operationId: 'same', security: [] } },
        { url: '/b', schema: { operationId: 'same', security: [] } },
      ],
      [{ url: '/c', schema: { operationId: 'noSecurity' } }],
    ]) {
      const app = Fastify();
      registerOpenApi(app, 'http://127.0.0.1');
      await assert.rejects(async () => {
        for (const r of routes) app.get(r.url, { schema: r.schema }, async () => ({}));
        await app.ready();
      }, /operationId|security/);
      await app.close().catch(() => {});
    }
  });
});
