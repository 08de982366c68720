// Security review F10: account recovery cuts every other way in. A password reset ends the
// sessions (auth-reset.test.ts) and also revokes the account's API tokens, so an intruder's
// token stops working; another account's tokens are untouched.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail, linkToken } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { apiClient } from './support/rest.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

describe('F10: a password reset revokes API tokens', () => {
  test("the account's tokens stop working at once, other accounts' do not, and the answer says how many", async () => {
    const victim = await apiClient(t, ['*'], '0');
    const second = await apiClient(t, ['read'], '0', victim.accountId);
    const bystander = await apiClient(t, ['*'], '0');
    for (const c of [victim, second, bystander])
      assert.equal((await c.call('GET', '/api/v1/instances')).statusCode, 200);

    const forgot = await new Browser(t, freshIp()).post('/api/v1/client/auth/forgot/', { identifier: victim.email });
    assert.equal(forgot.statusCode, 200);
    const token = linkToken((await lastMail(t, victim.email)).text, 'reset');
    const reset = await new Browser(t, freshIp()).post('/api/v1/client/auth/reset/', {
      token,
      password: 'recovered-at-last-7',
    });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.match(reset.json().message, /2 API tokens revoked/);

    for (const c of [victim, second]) {
      const refused = await c.call('GET', '/api/v1/instances');
      assert.equal(refused.statusCode, 401, refused.body);
    }
    assert.equal((await bystander.call('GET', '/api/v1/instances')).statusCode, 200);
    const rows = await t.deps.database.db
      .selectFrom('api_tokens')
      .select(['account_id', 'revoked_at'])
      .where('account_id', 'in', [victim.accountId, bystander.accountId])
      .execute();
    for (const row of rows) assert.equal(row.revoked_at !== null, row.account_id === victim.accountId);
  });
});
