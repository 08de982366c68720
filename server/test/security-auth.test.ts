// Regression tests for security review findings F1 (login lockout race), F5 (enumeration through
// refunded limits), F6 (per-IP keys of IPv6 addresses) and F7 (CSRF on public form posts).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rateKeyIp } from '../src/core/net/ip.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, loginCode, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { multipart, PNG } from './support/uploads.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const AUTH = '/api/v1/client/auth';
const LOGIN = `${AUTH}/login/`;
const REGISTER = `${AUTH}/register/`;
const OTP = `${AUTH}/otp-login/`;
const DEPOSIT = '/api/v1/client/wallet/deposit/';

let serial = 0;
const registration = (tag: string) => {
  serial += 1;
  const n = `${tag}${serial}${Date.now().toString(36)}`;
  return { name: 'Sec Test', email: `${n}@example.in`, username: n, password: 's3cretpass' };
};

describe('F1: the login lockout cannot be raced', () => {
  test('12 concurrent logins, the right password at index 7: at most 5 guesses are checked, the rest 429', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    const csrf = await browser.bootstrap();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        browser.post(LOGIN, {
          identifier: account.email,
          password: i === 7 ? password : `wrong-${i}-password`,
          csrf_token: csrf,
        }),
      ),
    );
    const statuses = answers.map((r) => `${r.statusCode} ${r.json().code ?? 'ok'}`);
    const checked = answers.filter((r) => r.statusCode !== 429);
    const locked = answers.filter((r) => r.statusCode === 429 && r.json().code === 'locked_out');
    assert.ok(checked.length <= 5, `at most 5 guesses checked: ${statuses.join(', ')}`);
    assert.ok(locked.length >= 7, `at least 7 answers are locked_out: ${statuses.join(', ')}`);
    for (const r of checked) assert.ok([200, 401].includes(r.statusCode), statuses.join(', '));
    // A success inside the five checked gave back its own attempt only: the lock stays.
    const after = await new Browser(t, freshIp()).login(account.email, password);
    assert.equal(after.statusCode, 429);
    assert.equal(after.json().code, 'locked_out');
  });

  test('a success gives back its own attempt without wiping earlier failures', async () => {
    const { account, password } = await createAccount(t);
    for (let i = 0; i < 4; i++)
      assert.equal((await new Browser(t, freshIp()).login(account.username, 'wrong-password-1')).statusCode, 401);
    assert.equal((await new Browser(t, freshIp()).login(account.username, password)).statusCode, 200);
    assert.equal((await new Browser(t, freshIp()).login(account.username, 'wrong-password-1')).statusCode, 401);
    const locked = await new Browser(t, freshIp()).login(account.username, password);
    assert.equal(locked.statusCode, 429, 'the fifth failure locks, even with a success in between');
    assert.equal(locked.json().code, 'locked_out');
  });

  test('a one-time code sign-in does not lift a password lockout', async () => {
    const { account, password } = await createAccount(t);
    for (let i = 0; i < 5; i++) await new Browser(t, freshIp()).login(account.username, 'wrong-password-1');
    await new Browser(t, freshIp()).post(OTP, { action: 'request', identifier: account.email });
    const code = loginCode((await lastMail(t, account.email)).text);
    const signedIn = await new Browser(t, freshIp()).post(OTP, { action: 'verify', identifier: account.email, code });
    assert.equal(signedIn.statusCode, 200, 'the lock does not block one-time codes');
    assert.equal((await new Browser(t, freshIp()).login(account.username, password)).statusCode, 429);
  });
});

describe('F5: refusals that reveal existing records keep counting', () => {
  for (const field of ['email', 'username'] as const) {
    test(`registrations with a taken ${field} use up register_ip; the 6th overall is 429`, async () => {
      const ip = freshIp();
      const first = registration('taken');
      const ok = await new Browser(t, ip).post(REGISTER, first);
      assert.equal(ok.statusCode, 201);
      assert.equal(ok.headers['ratelimit-remaining'], '4');
      const seen: string[] = [];
      for (let i = 0; i < 9; i++) {
        const res = await new Browser(t, ip).post(REGISTER, { ...registration('probe'), [field]: first[field] });
        seen.push(`${res.statusCode}/${res.headers['ratelimit-remaining']}`);
        if (i < 4) {
          assert.equal(res.statusCode, 422, seen.join(' '));
          assert.ok(res.json().errors[field], seen.join(' '));
          assert.equal(res.headers['ratelimit-remaining'], String(3 - i), seen.join(' '));
        } else {
          assert.equal(res.statusCode, 429, `attempt ${i + 2} overall: ${seen.join(' ')}`);
          assert.equal(res.json().code, 'rate_limited');
        }
      }
    });
  }

  test('a format refusal mixed with a taken e-mail keeps counting too', async () => {
    const ip = freshIp();
    const first = registration('mixed');
    assert.equal((await new Browser(t, ip).post(REGISTER, first)).headers['ratelimit-remaining'], '4');
    const res = await new Browser(t, ip).post(REGISTER, {
      ...registration('m'),
      email: first.email,
      password: 'short',
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['email', 'password']);
    assert.equal(res.headers['ratelimit-remaining'], '3');
    const typo = await new Browser(t, ip).post(REGISTER, { ...registration('m'), password: 'short' });
    assert.equal(typo.statusCode, 422);
    assert.equal(typo.headers['ratelimit-remaining'], '3', 'a refusal for the format alone is still given back');
  });

  test('a deposit with a txn_ref already used keeps counting against deposit_account', async () => {
    const owner = await signedInBrowser(t, freshIp());
    const { browser } = await signedInBrowser(t, freshIp());
    const submit = (b: Browser, txnRef: string) => {
      const form = multipart({ amount: '10', txn_ref: txnRef, csrf_token: b.csrfToken as string }, [
        { field: 'screenshot', filename: 'p.png', contentType: 'image/png', data: PNG },
      ]);
      return b.request('POST', DEPOSIT, { body: form.body, headers: { 'content-type': form.contentType } });
    };
    const usedRef = `UTRSEC${Date.now()}`;
    assert.equal((await submit(owner.browser, usedRef)).statusCode, 201);
    for (let i = 0; i < 5; i++) {
      const res = await submit(browser, usedRef.toLowerCase());
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().errors.txn_ref, 'has already been used');
      assert.equal(res.headers['ratelimit-remaining'], String(4 - i));
    }
    const refused = await submit(browser, `${usedRef}X`);
    assert.equal(refused.statusCode, 429, 'the 6th submission of the hour is refused');
  });
});

describe('F6: per-IP limits key IPv6 clients by their /64', () => {
  test('rateKeyIp: one /64 is one key, whatever the spelling; IPv4 and mapped IPv4 as today', () => {
    const same = [
      '2001:db8:1:2::1',
      '2001:0DB8:0001:0002:0000:0000:0000:0001',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:db8:1:2:a:b:c:d',
      ' 2001:db8:1:2::9 ',
    ];
    for (const ip of same) assert.equal(rateKeyIp(ip), '2001:db8:1:2::/64', ip);
    assert.equal(rateKeyIp('2001:db8:1:3::1'), '2001:db8:1:3::/64');
    assert.notEqual(rateKeyIp('2001:db8:1:2::1'), rateKeyIp('2001:db8:1:3::1'));
    assert.notEqual(rateKeyIp('2001:db8:1:2::1'), rateKeyIp('2001:db9:1:2::1'));
    assert.equal(rateKeyIp('203.0.113.7'), '203.0.113.7');
    assert.equal(rateKeyIp('::ffff:203.0.113.7'), '203.0.113.7');
    assert.notEqual(rateKeyIp('203.0.113.7'), rateKeyIp('203.0.113.8'));
    for (const bad of ['', 'unknown', 'not an ip', '1.2.3', '2001:db8::1::2', 'x'.repeat(500), '[::1]']) {
      const key = rateKeyIp(bad);
      assert.equal(typeof key, 'string', bad);
      assert.ok(key.length <= 100, bad);
    }
  });

  test('registrations from five addresses of one /64 use up its allowance; another /64 is separate', async () => {
    const prefix = `2001:db8:${(Date.now() % 0xffff).toString(16)}:77`;
    for (let i = 1; i <= 5; i++) {
      const res = await new Browser(t, `${prefix}::${i}`).post(REGISTER, registration('v6'));
      assert.equal(res.statusCode, 201, `address ${i}`);
      assert.equal(res.headers['ratelimit-remaining'], String(5 - i));
    }
    const sameNet = await new Browser(t, `${prefix}:ffff:ffff:ffff:ffff`).post(REGISTER, registration('v6'));
    assert.equal(sameNet.statusCode, 429, 'another address of the same /64');
    const otherNet = await new Browser(t, `${prefix.replace(/:77$/, ':78')}::1`).post(REGISTER, registration('v6'));
    assert.equal(otherNet.statusCode, 201, 'another /64');
  });
});

describe('F7: public routes take forms only with the CSRF token', () => {
  const codeAttempts = async (accountId: number) =>
    (
      await t.deps.database.db
        .selectFrom('login_codes')
        .select('attempts')
        .where('account_id', '=', accountId)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow()
    ).attempts;

  test('a multipart otp-login verify without a token is 403 before the code check; with it, it signs in', async () => {
    const { account } = await createAccount(t);
    assert.equal(
      (await new Browser(t, freshIp()).post(OTP, { action: 'request', identifier: account.email })).statusCode,
      200,
    );
    const code = loginCode((await lastMail(t, account.email)).text);
    const wrong = code === '000000' ? '111111' : '000000';
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const form = (fields: Record<string, string>) =>
      multipart({ action: 'verify', identifier: account.email, ...fields });
    const attempts: Record<string, string>[] = [{ code: wrong }, { code }, { code, csrf_token: 'A'.repeat(43) }];
    for (const fields of attempts) {
      const body = form(fields);
      const res = await browser.request('POST', OTP, {
        body: body.body,
        headers: { 'content-type': body.contentType },
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().success, false);
      assert.equal(res.json().code, 'csrf_failed');
    }
    assert.equal(await codeAttempts(account.id), 0, 'no try was counted: the code was never checked');
    const withToken = form({ code, csrf_token: browser.csrfToken as string });
    const ok = await browser.request('POST', OTP, {
      body: withToken.body,
      headers: { 'content-type': withToken.contentType },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().account.id, account.id);
    assert.equal((await browser.get('/api/v1/client/account/')).statusCode, 200);
  });

  test('every public POST refuses a form (multipart or text/plain) without the token; JSON needs none', async () => {
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    for (const route of ['register', 'otp-login', 'forgot', 'reset', 'verify', 'login']) {
      const form = multipart({ identifier: 'someone@example.in', action: 'request', token: 'x'.repeat(30) });
      const res = await browser.request('POST', `${AUTH}/${route}/`, {
        body: form.body,
        headers: { 'content-type': form.contentType },
      });
      assert.equal(res.statusCode, 403, `${route} multipart: ${res.body}`);
      assert.equal(res.json().code, 'csrf_failed');
      const text = await browser.request('POST', `${AUTH}/${route}/`, {
        body: JSON.stringify({ identifier: 'someone@example.in' }),
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(text.statusCode, 403, `${route} text/plain: ${text.body}`);
    }
    const json = await new Browser(t, freshIp()).post(`${AUTH}/forgot/`, { identifier: 'someone@example.in' });
    assert.equal(json.statusCode, 200, 'JSON without a token, as the spec has it');
    const formWithToken = multipart({ identifier: 'someone@example.in', csrf_token: browser.csrfToken as string });
    const accepted = await browser.request('POST', `${AUTH}/forgot/`, {
      body: formWithToken.body,
      headers: { 'content-type': formWithToken.contentType },
    });
    assert.equal(accepted.statusCode, 200, accepted.body);
  });
});
