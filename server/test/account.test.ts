// The signed-in account (spec 4.4).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const ACCOUNT = '/api/v1/client/account/';

describe('account', () => {
  test('GET: the profile and the current CSRF token; never the password hash', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const loginToken = browser.csrfToken;
    const res = await browser.get(ACCOUNT);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.message, 'Account loaded.');
    assert.deepEqual(Object.keys(body.account).sort(), [
      'created_at',
      'deletion_scheduled_for',
      'email',
      'email_verified',
      'id',
      'name',
      'username',
    ]);
    assert.equal(body.account.id, account.id);
    assert.equal(body.csrf_token, loginToken);
    assert.doesNotMatch(res.body, /argon2/);
  });

  test('anonymous: 401 unauthenticated', async () => {
    const res = await new Browser(t, freshIp()).get(ACCOUNT);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'unauthenticated');
  });

  test('rename (trimmed); bad names are 422', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const ok = await browser.post(ACCOUNT, { name: '  Ravi Kumar  ' }, { csrf: true });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().account.name, 'Ravi Kumar');
    const short = await browser.post(ACCOUNT, { name: 'R' }, { csrf: true });
    assert.equal(short.statusCode, 422);
    assert.ok(short.json().errors.name);
    const nothing = await browser.post(ACCOUNT, {}, { csrf: true });
    assert.equal(nothing.statusCode, 422);
  });

  test('a wrong type in one field does not hide the problems of the others', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await browser.post(ACCOUNT, { name: 'A', password: 'short', current_password: 5 }, { csrf: true });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['current_password', 'name', 'password']);
  });

  test('password change needs the current password and ends the other sessions, not this one', async () => {
    const { browser, account, password } = await signedInBrowser(t, freshIp());
    const other = new Browser(t, freshIp());
    await other.login(account.email, password);
    const missing = await browser.post(ACCOUNT, { password: 'next-pass-99' }, { csrf: true });
    assert.equal(missing.statusCode, 422);
    assert.equal(missing.json().errors.current_password, 'is required to change the password');
    const wrong = await browser.post(ACCOUNT, { current_password: 'nope-nope-1', password: 'x' }, { csrf: true });
    assert.deepEqual(Object.keys(wrong.json().errors).sort(), ['current_password', 'password']);
    const ok = await browser.post(ACCOUNT, { current_password: password, password: 'next-pass-99' }, { csrf: true });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().sessions_ended, 1);
    assert.equal((await browser.get(ACCOUNT)).statusCode, 200, 'this session stays');
    assert.equal((await other.get(ACCOUNT)).statusCode, 401, 'the other one ended');
    assert.equal((await new Browser(t, freshIp()).login(account.email, 'next-pass-99')).statusCode, 200);
  });
});
