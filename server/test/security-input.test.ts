// Security review F2 and secrets at rest, the loose ends: names a person chose never carry
// text-direction overrides (they reorder what staff read), API token names no control
// characters, and the one-time code never sits in the outbox's clear-text subject.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, loginCode, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

describe('names and stored mail', () => {
  test('a name with a text-direction override is refused at registration and on rename', async () => {
    const res = await new Browser(t, freshIp()).post('/api/v1/client/auth/register/', {
      name: 'Asha \u202Egnp.exe',
      email: 'bidi@example.in',
      username: 'bidiuser',
      password: 's3cretpass',
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.match(res.json().errors.name, /text-direction/);
    const { browser } = await signedInBrowser(t, freshIp());
    const rename = await browser.post('/api/v1/client/account/', { name: 'Ops \u2066Team\u2069' }, { csrf: true });
    assert.equal(rename.statusCode, 422, rename.body);
    assert.match(rename.json().errors.name, /text-direction/);
  });

  test('an API token name with control characters is refused, naming the field', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    for (const name of ['ci\u001b[2K', 'line\rover', 'bell\u0007', 'c1\u009b']) {
      const res = await browser.post('/api/v1/client/tokens/', { name, scopes: ['read'] }, { csrf: true });
      assert.equal(res.statusCode, 422, `${JSON.stringify(name)}: ${res.body}`);
      assert.match(res.json().errors.name, /control characters/);
    }
    const fine = await browser.post('/api/v1/client/tokens/', { name: 'deploy bot', scopes: ['read'] }, { csrf: true });
    assert.equal(fine.statusCode, 201, fine.body);
  });

  test('the sign-in code is in the sealed body only, never in the clear-text subject', async () => {
    const { account } = await createAccount(t);
    const res = await new Browser(t, freshIp()).post('/api/v1/client/auth/otp-login/', {
      action: 'request',
      identifier: account.email,
    });
    assert.equal(res.statusCode, 200, res.body);
    const mail = await lastMail(t, account.email);
    const code = loginCode(mail.text);
    assert.equal(mail.row.template, 'login_code');
    assert.ok(!mail.row.subject.includes(code), mail.row.subject);
    assert.doesNotMatch(mail.row.subject, /\d{6}/);
  });
});
