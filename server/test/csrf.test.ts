// CSRF on every mutation of the session surface (spec §5; reliability T9). The routes come from
// the OpenAPI document, so a route added later is covered without editing this file.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

/** Public routes the spec's access table lists without CSRF. */
const EXEMPT = new Set(['register', 'otp-login', 'forgot', 'reset', 'verify'].map((r) => `/api/v1/client/auth/${r}/`));

let t: TestApp;
let mutations: { method: string; path: string }[];
before(async () => {
  t = await createTestApp();
  const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  mutations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
      .filter(() => path.startsWith('/api/v1/client/') || path.startsWith('/api/v1/search'))
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
});
after(() => t.close());

describe('CSRF matrix', () => {
  test('the matrix is not empty: it covers login, logout and account', () => {
    const covered = mutations.filter((m) => !EXEMPT.has(m.path)).map((m) => m.path);
    for (const path of ['/api/v1/client/auth/login/', '/api/v1/client/auth/logout/', '/api/v1/client/account/']) {
      assert.ok(covered.includes(path), path);
    }
  });

  test("every non-exempt mutation: no token, a wrong token, another session's token → 403 csrf_failed, nothing changed", async () => {
    const victim = await signedInBrowser(t, freshIp());
    const attacker = await signedInBrowser(t, freshIp());
    let checked = 0;
    for (const { method, path } of mutations.filter((m) => !EXEMPT.has(m.path))) {
      for (const [label, token] of [
        ['none', undefined],
        ['wrong', 'A'.repeat(43)],
        ['empty', ''],
        ["other session's", attacker.browser.csrfToken as string],
      ] as const) {
        const before = await fingerprint(t);
        const body = {
          name: 'Changed By CSRF',
          password: 'x',
          identifier: victim.account.email,
          ...(token === undefined ? {} : { csrf_token: token }),
        };
        const res = await victim.browser.request(method as 'POST', path, { body });
        assert.equal(res.statusCode, 403, `${method} ${path} with ${label} token: ${res.body}`);
        assert.equal(res.json().code, 'csrf_failed');
        assert.deepEqual(await fingerprint(t), before, `${method} ${path} with ${label} token changed the database`);
        checked++;
      }
    }
    assert.ok(checked >= 12);
    assert.equal(
      (await victim.browser.get('/api/v1/client/account/')).statusCode,
      200,
      'the victim is still signed in',
    );
  });

  test('a browser that says the request is cross-site is refused on every mutation, exempt ones included', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    for (const { method, path } of mutations) {
      const res = await browser.request(method as 'POST', path, {
        body: { identifier: 'x', csrf_token: browser.csrfToken },
        headers: { 'sec-fetch-site': 'cross-site' },
      });
      assert.equal(res.statusCode, 403, `${method} ${path}`);
    }
  });

  test('GET routes change nothing', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const before = await fingerprint(t);
    for (const url of ['/api/v1/client/account/', '/api/v1/health/', '/api/v1/openapi.json']) await browser.get(url);
    assert.deepEqual(await fingerprint(t), before);
  });

  test('an anonymous caller of a client mutation gets 401 before anything else', async () => {
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const res = await browser.post('/api/v1/client/account/', { name: 'Nobody' }, { csrf: true });
    assert.equal(res.statusCode, 401);
  });
});
