// Registration and e-mail verification (spec 4.3 register/, verify/; §2 Account rules).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail, linkToken } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const REGISTER = '/api/v1/client/auth/register/';
const VERIFY = '/api/v1/client/auth/verify/';
const valid = (n: string) => ({
  name: `Priya ${n}`,
  email: `Priya.${n}@Example.in`,
  username: `priya_${n}`,
  password: 'rupee2024x',
});

describe('register', () => {
  test('creates an unverified account and mails a verification link under PUBLIC_URL', async () => {
    const browser = new Browser(t, freshIp());
    const res = await browser.post(REGISTER, valid('a'));
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.success, true);
    assert.match(body.message, /verification link/);
    assert.equal(body.account.email, 'priya.a@example.in', 'stored lower-case');
    assert.equal(body.account.email_verified, false);
    assert.equal(body.account.password_hash, undefined);
    const mail = await lastMail(t, 'priya.a@example.in');
    assert.equal(mail.row.template, 'verify_email');
    assert.match(mail.text, /http:\/\/localhost:8080\/verify\?token=[A-Za-z0-9_-]{43}/);
    assert.match(mail.html, /href="http:\/\/localhost:8080\/verify\?token=/);
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from pgboss.job where name = 'mail.send' and data->>'outboxId' = ${String(mail.row.id)}`.execute(
      t.deps.database.db,
    );
    assert.equal(rows[0]?.n, '1', 'the delivery job was queued with the mail');
  });

  test('every failing field is reported together', async () => {
    const res = await new Browser(t, freshIp()).post(REGISTER, {
      name: 'x',
      email: 'not-mail',
      username: 'A!',
      password: 'password',
    });
    assert.equal(res.statusCode, 422);
    const { code, errors } = res.json();
    assert.equal(code, 'validation_failed');
    assert.deepEqual(Object.keys(errors).sort(), ['email', 'name', 'password', 'username']);
    assert.match(errors.password, /letter and one number/);
  });

  test('a wrong type in one field does not hide the value problems of the others', async () => {
    const res = await new Browser(t, freshIp()).post(REGISTER, {
      name: 5,
      email: 'x',
      username: 'ab',
      password: 'short',
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['email', 'name', 'password', 'username']);
    assert.equal(res.json().errors.name, 'must be string');
  });

  test('registrations refused for their fields do not use up the allowance; RateLimit-Remaining says so', async () => {
    const ip = freshIp();
    for (let i = 0; i < 6; i++) {
      const typo = await new Browser(t, ip).post(REGISTER, { ...valid(`t${i}`), email: 'not-mail' });
      assert.equal(typo.statusCode, 422);
      assert.equal(typo.headers['ratelimit-remaining'], '5');
    }
    assert.equal((await new Browser(t, ip).post(REGISTER, valid('t9'))).headers['ratelimit-remaining'], '4');
  });

  test('missing fields, wrong types and unknown fields are 422 with each field named', async () => {
    const res = await new Browser(t, freshIp()).post(REGISTER, { name: 5, email_verified: true });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), [
      'email',
      'email_verified',
      'name',
      'password',
      'username',
    ]);
  });

  test('e-mail taken (any case) is 422 errors.email; username taken is errors.username; reserved names refused', async () => {
    const ip = freshIp();
    assert.equal((await new Browser(t, ip).post(REGISTER, valid('b'))).statusCode, 201);
    const sameEmail = await new Browser(t, ip).post(REGISTER, { ...valid('c'), email: 'PRIYA.B@EXAMPLE.IN' });
    assert.equal(sameEmail.statusCode, 422);
    assert.deepEqual(sameEmail.json().errors, { email: 'is already registered' });
    const sameUser = await new Browser(t, ip).post(REGISTER, { ...valid('d'), username: 'Priya_B' });
    assert.equal(sameUser.statusCode, 422);
    assert.deepEqual(sameUser.json().errors, { username: 'is already taken' });
    const reserved = await new Browser(t, freshIp()).post(REGISTER, { ...valid('e'), username: 'admin' });
    assert.equal(reserved.json().errors.username, 'is reserved');
  });

  test('two concurrent registrations of one address: exactly one account', async () => {
    const results = await Promise.all(
      ['f1', 'f2', 'f3', 'f4'].map((n) =>
        new Browser(t, freshIp()).post(REGISTER, { ...valid(n), email: 'race@example.in' }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 422, 422, 422]);
    const rows = await t.deps.database.db
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', 'race@example.in')
      .execute();
    assert.equal(rows.length, 1);
  });

  test('rate-limited per IP: the 6th registration within the hour is 429 with Retry-After and RateLimit headers', async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const res = await new Browser(t, ip).post(REGISTER, valid(`g${i}`));
      assert.equal(res.statusCode, 201);
      assert.equal(res.headers['ratelimit-limit'], '5');
      assert.equal(res.headers['ratelimit-remaining'], String(4 - i));
    }
    const refused = await new Browser(t, ip).post(REGISTER, valid('g5'));
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    const otherIp = await new Browser(t, `::ffff:${freshIp()}`).post(REGISTER, valid('g6'));
    assert.equal(otherIp.statusCode, 201);
  });
});

describe('verify', () => {
  test('the link verifies once; login works after it and not before', async () => {
    const ip = freshIp();
    await new Browser(t, ip).post(REGISTER, valid('h'));
    const browser = new Browser(t, ip);
    const before = await browser.login('priya_h', 'rupee2024x');
    assert.equal(before.statusCode, 403);
    assert.equal(before.json().code, 'email_unverified');
    const token = linkToken((await lastMail(t, 'priya.h@example.in')).text, 'verify');
    const ok = await browser.post(VERIFY, { token });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().account.email_verified, true);
    const again = await browser.post(VERIFY, { token });
    assert.equal(again.statusCode, 422);
    assert.equal(again.json().errors.token, 'is invalid, used or expired');
    assert.equal((await browser.login('priya_h', 'rupee2024x')).statusCode, 200);
  });

  test('a link re-sent at login leaves the first one working', async () => {
    const ip = freshIp();
    await new Browser(t, ip).post(REGISTER, valid('i'));
    const first = linkToken((await lastMail(t, 'priya.i@example.in')).text, 'verify');
    await new Browser(t, ip).login('priya_i', 'rupee2024x');
    const second = await lastMail(t, 'priya.i@example.in');
    assert.notEqual(linkToken(second.text, 'verify'), first, 'a new link was sent');
    assert.equal((await new Browser(t, ip).post(VERIFY, { token: first })).statusCode, 200);
  });

  test('garbage and missing tokens are refused in the session envelope', async () => {
    const browser = new Browser(t, freshIp());
    assert.equal((await browser.post(VERIFY, { token: 'x'.repeat(43) })).statusCode, 422);
    assert.equal((await browser.post(VERIFY, { token: '../../etc/passwd' })).statusCode, 422);
    const missing = await browser.post(VERIFY, {});
    assert.equal(missing.statusCode, 422);
    assert.equal(missing.json().errors.token, 'is required');
  });

  test('the /verify and /reset pages mail links open are the panel, with its strict CSP', async () => {
    for (const url of ['/verify?token=abc', '/reset?token=abc']) {
      const res = await t.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /text\/html/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'; script-src 'self'/);
      assert.match(res.body, /<div id="root"><\/div>/);
    }
  });
});
