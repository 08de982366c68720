// The token scope matrix (reliability T8) and the BOLA battery (T3), generated from the OpenAPI
// document: every token-surface route × {no token, each single scope, *}; allowed iff the
// token holds the route's `x-required-scope`, otherwise 403 insufficient_scope and nothing
// changed; and another account's ids answer exactly like missing ones, changing nothing.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fingerprint } from './support/db.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let owner: ApiClient;
let instanceId: number;
let jobId: number;
let operations: { method: string; path: string; scope: string }[];

before(async () => {
  u = await createUpstreamApp();
  owner = await apiClient(u.t, ['*']);
  const deploy = await owner.call('POST', '/api/v1/instances', {
    plan: 'vps-1c-1g',
    server_name: 'scoped',
    eula: true,
    os: 'debian-12',
    idempotency_key: 'scope-1',
  });
  assert.equal(deploy.statusCode, 201, deploy.body);
  instanceId = deploy.json().instance.id;
  jobId = deploy.json().job.id;
  await waitFor('active', async () =>
    (await owner.call('GET', `/api/v1/jobs/${jobId}`)).json().job.status === 'succeeded' ? true : null,
  );
  const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { 'x-required-scope'?: string }>>;
  };
  // The /api/v1 surface's routes; the second token surface has its own matrix (cloud.test.ts).
  operations = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op['x-required-scope'])
        .map(([method, op]) => ({ method: method.toUpperCase(), path, scope: op['x-required-scope'] as string })),
    );
});
after(() => u.close());

/** A concrete URL and a harmless body (one the route refuses before acting, where it could act). */
function request(op: { method: string; path: string }, id = instanceId, job = jobId): { url: string; body?: unknown } {
  const url = op.path
    .replace('{id}', String(op.path.startsWith('/api/v1/jobs') ? job : id))
    .replace('{action}', 'explode');
  if (op.method === 'POST' && op.path === '/api/v1/instances') return { url, body: {} };
  if (op.method === 'POST' && op.path === '/api/v1/quote') return { url, body: { plan: 'vps-1c-1g' } };
  if (op.method === 'DELETE') return { url, body: { confirm: 'not-the-label' } };
  if (op.method === 'POST' || op.method === 'PUT') return { url, body: {} };
  return { url };
}

describe('scope matrix', () => {
  test('the document lists every route of spec 4.1 with its scope', () => {
    const listed = operations.map((o) => `${o.method} ${o.path} ${o.scope}`).sort();
    assert.deepEqual(listed, [
      'DELETE /api/v1/instances/{id} instances.write',
      'GET /api/v1/billing billing.read',
      'GET /api/v1/instances read',
      'GET /api/v1/instances/{id} read',
      'GET /api/v1/instances/{id}/stats read',
      'GET /api/v1/invoices billing.read',
      'GET /api/v1/invoices/{id}/pdf billing.read',
      'GET /api/v1/jobs/{id} read',
      'GET /api/v1/locations read',
      'GET /api/v1/me read',
      'GET /api/v1/os read',
      'GET /api/v1/plans read',
      'GET /api/v1/status read',
      'GET /api/v1/webhooks read',
      'POST /api/v1/instances orders.write',
      'POST /api/v1/instances/{id}/{action} instances.write',
      'POST /api/v1/quote read',
      'PUT /api/v1/instances/{id}/backup-schedule instances.write',
    ]);
  });

  test('every route × every single scope, *, and no token: allowed iff held; otherwise 403 and nothing changed', async () => {
    const tokens = new Map<string, ApiClient>();
    for (const scope of ['read', 'orders.write', 'instances.write', 'billing.read', '*'])
      tokens.set(scope, await apiClient(u.t, [scope], '0', owner.accountId));
    let cells = 0;
    for (const op of operations) {
      const { url, body } = request(op);
      const anonymous = await u.t.inject({ method: op.method as 'GET', url, ...(body ? { payload: body } : {}) });
      assert.equal(anonymous.statusCode, 401, `${op.method} ${op.path} without a token`);
      for (const [scope, client] of tokens) {
        const allowed = scope === '*' || scope === op.scope;
        const before = allowed ? null : await fingerprint(u.t);
        const res = await client.call(op.method, url, body);
        cells++;
        if (allowed) {
          assert.ok(
            ![401, 403].includes(res.statusCode),
            `${op.method} ${op.path} with ${scope}: ${res.statusCode} ${res.body}`,
          );
        } else {
          assert.equal(res.statusCode, 403, `${op.method} ${op.path} with ${scope}`);
          assert.equal(res.json().error, 'insufficient_scope');
          assert.equal(res.json().details.required, op.scope);
          assert.deepEqual(await fingerprint(u.t), before, `${op.method} ${op.path} with ${scope} changed something`);
        }
      }
    }
    assert.equal(cells, operations.length * 5);
  });
});

describe('BOLA battery', () => {
  test("another account's instance and job ids: the same 404 as missing ids on every route, no side effects", async () => {
    const intruder = await apiClient(u.t, ['*']);
    const idRoutes = operations.filter((o) => o.path.includes('{id}'));
    assert.ok(idRoutes.length >= 5);
    for (const op of idRoutes) {
      for (const [label, body] of [
        ['harmless', undefined],
        ['would act', op.method === 'DELETE' ? { confirm: 'scoped' } : op.method === 'POST' ? {} : undefined],
      ] as const) {
        const actUrl = op.path.replace('{action}', 'stop');
        const foreign = request({ ...op, path: actUrl });
        const missing = request({ ...op, path: actUrl }, 987_654, 987_654);
        const before = await fingerprint(u.t);
        const a = await intruder.call(op.method, foreign.url, body ?? foreign.body);
        const b = await intruder.call(op.method, missing.url, body ?? missing.body);
        assert.equal(a.statusCode, 404, `${op.method} ${foreign.url} (${label}): ${a.body}`);
        assert.equal(a.json().error, 'not_owner');
        const { request_id: _a, ...foreignBody } = a.json() as Record<string, unknown>;
        const { request_id: _b, ...missingBody } = b.json() as Record<string, unknown>;
        assert.deepEqual(foreignBody, missingBody, `${op.method} ${op.path}`);
        assert.doesNotMatch(a.body, /scoped|203\.0\.113/);
        assert.deepEqual(await fingerprint(u.t), before, `${op.method} ${op.path} changed something`);
      }
    }
    const list = await intruder.call('GET', '/api/v1/instances');
    assert.equal(list.json().instances.length, 0);
  });
});
