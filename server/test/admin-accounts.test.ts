// Staff CLI: accounts list|show|verify|suspend|unsuspend, mail list|show (run in-process through
// the same runAdmin the CLI and the admin socket use).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps);
const json = async (...argv: string[]) => {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};

describe('admin accounts', () => {
  test('list and show, with --json', async () => {
    const { account } = await createAccount(t, { verified: false });
    const rows = await json('accounts', 'list', '--status', 'unverified');
    assert.ok(rows.some((r: { id: number }) => r.id === account.id));
    const shown = await json('accounts', 'show', account.username);
    assert.equal(shown.email, account.email);
    assert.equal(shown.status, 'unverified');
    const byEmail = await json('accounts', 'show', account.email.toUpperCase());
    assert.equal(byEmail.id, account.id);
    const text = await admin('accounts', 'list');
    assert.match(text.stdout, /id\s+email\s+username/);
  });

  test('verify lets an unverified account sign in', async () => {
    const { account, password } = await createAccount(t, { verified: false });
    assert.equal((await new Browser(t, freshIp()).login(account.email, password)).statusCode, 403);
    const verified = await json('accounts', 'verify', String(account.id));
    assert.equal(verified.status, 'active');
    assert.equal((await new Browser(t, freshIp()).login(account.email, password)).statusCode, 200);
  });

  test('suspend ends every session at once and blocks sign-in; unsuspend lifts it', async () => {
    const { browser, account, password } = await signedInBrowser(t, freshIp());
    const suspended = await json('accounts', 'suspend', account.email, '--reason', 'chargeback');
    assert.equal(suspended.sessions_ended, 1);
    assert.equal(suspended.suspended_reason, 'chargeback');
    assert.equal((await browser.get('/api/v1/client/account/')).statusCode, 401);
    assert.equal((await new Browser(t, freshIp()).login(account.email, password)).json().code, 'account_suspended');
    const twice = await admin('accounts', 'suspend', account.email);
    assert.equal(twice.exitCode, 1);
    assert.match(twice.stderr, /already suspended/);
    await json('accounts', 'unsuspend', account.email);
    assert.equal((await new Browser(t, freshIp()).login(account.email, password)).statusCode, 200);
    const again = await admin('accounts', 'unsuspend', account.email);
    assert.equal(again.exitCode, 1);
    assert.match(again.stderr, /is not suspended/);
  });

  test('unknown accounts and bad usage: exit 1 and 2 with a message', async () => {
    const missing = await admin('accounts', 'show', 'nobody@nowhere.in');
    assert.equal(missing.exitCode, 1);
    assert.match(missing.stderr, /No account matches/);
    const missingJson = await admin('accounts', 'show', 'nobody@nowhere.in', '--json');
    assert.equal(JSON.parse(missingJson.stdout).error, 'not_found');
    assert.equal((await admin('accounts', 'show')).exitCode, 2);
    assert.equal((await admin('accounts', 'list', '--status', 'weird')).exitCode, 2);
    assert.equal((await admin('accounts', 'list', '--bogus')).exitCode, 2);
  });

  test('mail list and show read the outbox', async () => {
    const { account } = await createAccount(t, { verified: false });
    const rows = await json('mail', 'list', '--to', account.email);
    assert.equal(rows[0].template, 'verify_email');
    const shown = await json('mail', 'show', String(rows[0].id));
    assert.match(shown.text, /verify\?token=/);
    const stored = await json('mail', 'list', '--to', account.email, '--status', 'stored');
    assert.ok(stored.every((r: { status: string }) => r.status === 'stored'));
    // A typo in --status is a usage error, not an empty list.
    const typo = await admin('mail', 'list', '--status', 'delivered');
    assert.equal(typo.exitCode, 2);
    assert.match(typo.stderr, /--status is one of queued, sent, stored, failed/);
    assert.equal((await admin('mail', 'show', '999999')).exitCode, 1);
  });
});
