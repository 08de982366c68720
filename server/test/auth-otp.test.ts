// One-time login codes (spec 4.3 otp-login; reliability T10).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, loginCode } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

let t: TestApp;
const clock = new ManualClock();
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
});
after(() => t.close());

const OTP = '/api/v1/client/auth/otp-login/';
const request = (identifier: string, ip = freshIp()) => new Browser(t, ip).post(OTP, { action: 'request', identifier });
const verify = (identifier: string, code: string, browser = new Browser(t, freshIp())) =>
  browser.post(OTP, { action: 'verify', identifier, code });
const mailCount = async (to: string) =>
  (await t.deps.database.db.selectFrom('mail_outbox').select('id').where('to_address', '=', to).execute()).length;

describe('otp-login', () => {
  test('request: identical answers for a known and an unknown identifier; only the known one gets mail', async () => {
    const { account } = await createAccount(t);
    const before = await mailCount(account.email);
    const known = await request(account.email);
    const unknown = await request('nobody@example.in');
    assert.equal(known.statusCode, 200);
    assert.equal(unknown.statusCode, known.statusCode);
    assert.deepEqual(unknown.json(), known.json());
    assert.equal(await mailCount(account.email), before + 1);
    const mail = await lastMail(t, account.email);
    assert.equal(mail.row.template, 'login_code');
    assert.match(loginCode(mail.text), /^\d{6}$/);
  });

  test('the right code signs in once; a replay fails; codes are stored keyed-hashed', async () => {
    const { account } = await createAccount(t);
    await request(account.username);
    const code = loginCode((await lastMail(t, account.email)).text);
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const anonymousId = browser.sessionId;
    const ok = await verify(account.username, code, browser);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().account.id, account.id);
    assert.notEqual(browser.sessionId, anonymousId, 'session id rotated');
    assert.equal((await browser.get('/api/v1/client/account/')).statusCode, 200);
    const replay = await verify(account.username, code);
    assert.equal(replay.statusCode, 401);
    const stored = await t.deps.database.db
      .selectFrom('login_codes')
      .select('code_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.ok(stored.every((r) => r.code_hash !== code && /^[0-9a-f]{64}$/.test(r.code_hash)));
  });

  test('ten concurrent verifies of one code: exactly one session', async () => {
    const { account } = await createAccount(t);
    await request(account.email);
    const code = loginCode((await lastMail(t, account.email)).text);
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(account.email, code)));
    assert.equal(results.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(results.every((r) => r.statusCode === 200 || r.statusCode === 401));
    const sessions = await t.deps.database.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(sessions.length, 1);
  });

  test('five wrong tries kill the code: the right one fails afterwards', async () => {
    const { account } = await createAccount(t);
    await request(account.email);
    const code = loginCode((await lastMail(t, account.email)).text);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) assert.equal((await verify(account.email, wrong)).statusCode, 401);
    assert.equal((await verify(account.email, code)).statusCode, 401);
  });

  test('a new code kills the old one', async () => {
    const { account } = await createAccount(t);
    await request(account.email);
    const first = loginCode((await lastMail(t, account.email)).text);
    await request(account.email);
    const second = loginCode((await lastMail(t, account.email)).text);
    if (first !== second) assert.equal((await verify(account.email, first)).statusCode, 401);
    assert.equal((await verify(account.email, second)).statusCode, 200);
  });

  test('a code expires after 10 minutes', async () => {
    const { account } = await createAccount(t);
    await request(account.email);
    const code = loginCode((await lastMail(t, account.email)).text);
    clock.advance(10 * 60 + 1);
    assert.equal((await verify(account.email, code)).statusCode, 401);
  });

  test('unverified and suspended accounts get no code, with the same answer', async () => {
    for (const options of [{ verified: false }, { suspended: true }]) {
      const { account } = await createAccount(t, options);
      const before = await mailCount(account.email);
      const res = await request(account.email);
      assert.equal(res.statusCode, 200);
      assert.equal(await mailCount(account.email), before);
    }
  });

  test('bad input: unknown action, missing or malformed code', async () => {
    const browser = new Browser(t, freshIp());
    const action = await browser.post(OTP, { action: 'steal', identifier: 'x' });
    assert.equal(action.statusCode, 422);
    assert.ok(action.json().errors.action);
    const missing = await browser.post(OTP, { action: 'verify', identifier: 'x' });
    assert.equal(missing.statusCode, 422);
    assert.equal(missing.json().errors.code, 'is required');
    for (const code of ['abc', '12345', '1234567', '12 456', 'abcdef']) {
      const malformed = await verify('x', code);
      assert.equal(malformed.statusCode, 422, code);
      assert.match(malformed.json().errors.code, /6-digit/);
    }
  });

  test('malformed codes do not use up any of the five tries', async () => {
    const { account } = await createAccount(t);
    await request(account.email);
    const code = loginCode((await lastMail(t, account.email)).text);
    for (let i = 0; i < 6; i++) assert.equal((await verify(account.username, 'nope')).statusCode, 422);
    assert.equal((await verify(account.username, code)).statusCode, 200);
  });

  test('requests are limited per identifier: the 4th in 15 minutes is 429', async () => {
    const { account } = await createAccount(t);
    for (let i = 0; i < 3; i++) assert.equal((await request(account.email)).statusCode, 200);
    const refused = await request(account.email.toUpperCase());
    assert.equal(refused.statusCode, 429, 'the key is case-normalised');
    assert.ok(refused.headers['retry-after']);
  });

  test('the generated codes look uniform (no digit position is stuck)', async () => {
    const { issueLoginCode } = await import('../src/core/auth/login-codes.ts');
    const { account } = await createAccount(t);
    const digits = Array.from({ length: 6 }, () => new Set<string>());
    for (let i = 0; i < 60; i++) {
      const code = await issueLoginCode(t.deps.database.db, t.deps.secretKey, clock.now, account.id);
      assert.match(code, /^\d{6}$/);
      for (const [position, d] of [...code].entries()) digits[position]?.add(d);
    }
    for (const seen of digits) assert.ok(seen.size >= 6, `only ${seen.size} distinct digits at a position`);
  });
});
