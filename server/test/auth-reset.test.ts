// Forgotten passwords (spec 4.3 forgot/, reset/).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, linkToken } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

let t: TestApp;
const clock = new ManualClock();
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
});
after(() => t.close());

const FORGOT = '/api/v1/client/auth/forgot/';
const RESET = '/api/v1/client/auth/reset/';

async function resetLink(email: string): Promise<string> {
  const res = await new Browser(t, freshIp()).post(FORGOT, { identifier: email });
  assert.equal(res.statusCode, 200);
  const mail = await lastMail(t, email);
  assert.equal(mail.row.template, 'reset_password');
  return linkToken(mail.text, 'reset');
}

describe('forgot and reset', () => {
  test('forgot: the same status and body whether or not the account exists', async () => {
    const { account } = await createAccount(t);
    const known = await new Browser(t, freshIp()).post(FORGOT, { identifier: account.username });
    const unknown = await new Browser(t, freshIp()).post(FORGOT, { identifier: 'nobody-at-all' });
    assert.equal(known.statusCode, 200);
    assert.equal(unknown.statusCode, 200);
    assert.deepEqual(known.json(), unknown.json());
  });

  test('reset sets the password, ends every session, and the link works once', async () => {
    const { account, password } = await createAccount(t);
    const browsers = [new Browser(t, freshIp()), new Browser(t, freshIp())];
    for (const b of browsers) assert.equal((await b.login(account.email, password)).statusCode, 200);
    const token = await resetLink(account.email);
    const res = await new Browser(t, freshIp()).post(RESET, { token, password: 'fresh-start-42' });
    assert.equal(res.statusCode, 200);
    for (const b of browsers) assert.equal((await b.get('/api/v1/client/account/')).statusCode, 401);
    assert.equal((await new Browser(t, freshIp()).login(account.email, password)).statusCode, 401);
    assert.equal((await new Browser(t, freshIp()).login(account.email, 'fresh-start-42')).statusCode, 200);
    const again = await new Browser(t, freshIp()).post(RESET, { token, password: 'another-one-43' });
    assert.equal(again.statusCode, 422);
    assert.equal(again.json().errors.token, 'is invalid, used or expired');
  });

  test('a weak password is refused without spending the link', async () => {
    const { account } = await createAccount(t);
    const token = await resetLink(account.email);
    const weak = await new Browser(t, freshIp()).post(RESET, { token, password: 'onlyletters' });
    assert.equal(weak.statusCode, 422);
    assert.ok(weak.json().errors.password);
    assert.equal((await new Browser(t, freshIp()).post(RESET, { token, password: 'letters-and-1' })).statusCode, 200);
  });

  test('only the newest link works, and only for an hour', async () => {
    const { account } = await createAccount(t);
    const first = await resetLink(account.email);
    const second = await resetLink(account.email);
    assert.equal(
      (await new Browser(t, freshIp()).post(RESET, { token: first, password: 'first-try-11' })).statusCode,
      422,
    );
    clock.advance(3601);
    assert.equal(
      (await new Browser(t, freshIp()).post(RESET, { token: second, password: 'late-try-22' })).statusCode,
      422,
    );
  });

  test('tokens are stored as sha256 only', async () => {
    const { account } = await createAccount(t);
    const token = await resetLink(account.email);
    const rows = await t.deps.database.db
      .selectFrom('account_tokens')
      .select('token_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.ok(rows.length > 0 && rows.every((r) => r.token_hash !== token && /^[0-9a-f]{64}$/.test(r.token_hash)));
  });

  test('forgot is limited per identifier (3 an hour)', async () => {
    const { account } = await createAccount(t);
    for (let i = 0; i < 3; i++)
      assert.equal((await new Browser(t, freshIp()).post(FORGOT, { identifier: account.email })).statusCode, 200);
    assert.equal((await new Browser(t, freshIp()).post(FORGOT, { identifier: account.email })).statusCode, 429);
  });
});
