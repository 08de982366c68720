// The auth plugins are reusable: a second token surface at another prefix (as {ALT_BASE_PATH}/v1/
// will be) and the session surface outside /api/v1/client (/api/v1/search/, which also answers a
// bearer token in the token envelope) get the same auth by registering the plugin, and every call of a known token to a token-auth route, or to an
// unknown route under a token-auth prefix, goes to the request log, whatever the prefix.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { principalOf, tokenAuth } from '../src/http/plugins/token-auth.ts';
import { tokenErrors } from '../src/http/schemas.ts';
import { signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';

const ALT = '/alt/v1';

let t: TestApp;
let api: ApiClient;
before(async () => {
  t = await createTestApp({
    extend: (app, deps) => {
      app.register(
        async (alt) => {
          await alt.register(tokenAuth, { deps });
          const response = { 200: Type.Object({ ok: Type.Literal(true), account: Type.Integer() }), ...tokenErrors() };
          alt.get(
            '/whoami',
            { config: { scope: 'read' }, schema: { operationId: 'altWhoami', response } },
            async (request) => ({ ok: true as const, account: principalOf(request).accountId }),
          );
        },
        { prefix: ALT },
      );
    },
  });
  api = await apiClient(t, ['read']);
});
after(() => t.close());

async function logged(path: string): Promise<{ status: number; token_id: number | null }[]> {
  await t.deps.requestLog.flush();
  const { rows } = await sql<{ status: number; token_id: number | null }>`
    select status, token_id from api_request_log where path = ${path} order by id`.execute(t.deps.database.db);
  return rows;
}

describe('token auth at another prefix', () => {
  test('authenticates with the same Bearer rules and envelope', async () => {
    const ok = await api.call('GET', `${ALT}/whoami`);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().account, api.accountId);
    assert.ok(ok.headers['ratelimit-limit'], 'the per-token limit applies');
    const none = await t.inject({ method: 'GET', url: `${ALT}/whoami` });
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().error, 'invalid_token');
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
  });

  test('its calls with a known token are in the request log, unknown routes included; anonymous ones are not', async () => {
    await api.call('GET', `${ALT}/whoami`);
    await api.call('GET', `${ALT}/no/such/route`);
    await t.inject({ method: 'GET', url: `${ALT}/whoami?anonymous` });
    const whoami = await logged(`${ALT}/whoami`);
    assert.ok(
      whoami.length >= 1 && whoami.every((r) => r.token_id !== null && r.status === 200),
      JSON.stringify(whoami),
    );
    assert.deepEqual(
      (await logged(`${ALT}/no/such/route`)).map((r) => r.status),
      [404],
    );
  });

  test('the OpenAPI document declares bearer security on it', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    assert.deepEqual(doc.paths[`${ALT}/whoami`].get.security, [{ bearer: [] }]);
    assert.equal(doc.paths[`${ALT}/whoami`].get['x-required-scope'], 'read');
  });
});

describe('session auth at another prefix: /api/v1/search/', () => {
  test('needs a signed-in session, in the session envelope; a bearer token gets the token surface', async () => {
    const anonymous = await t.inject({ method: 'GET', url: '/api/v1/search/?q=x' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().code, 'unauthenticated');
    const { browser } = await signedInBrowser(t);
    const res = await browser.get('/api/v1/search/?q=x');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().success, true);
    const token = await api.call('GET', '/api/v1/search/?q=x');
    assert.equal(token.statusCode, 200, token.body);
    assert.equal(token.json().ok, true);
    const badToken = await t.inject({
      method: 'GET',
      url: '/api/v1/search/?q=x',
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(badToken.statusCode, 401);
    assert.equal(badToken.json().ok, false, 'the token envelope');
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const search = doc.paths['/api/v1/search/'] ?? doc.paths['/api/v1/search'];
    assert.deepEqual(search.get.security, [{ session: [] }, { bearer: [] }]);
  });
});
