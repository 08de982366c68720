// Staff CLI: deposits list|show|approve|reject, wallet credit|show — the issue-4 walk-through
// (deposit → approval → balance, notification and mail to the paisa).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { freshIp, lastMail, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { multipart, PNG } from './support/uploads.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:priya');
const json = async (...argv: string[]) => {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};

describe('deposits and wallet from the CLI', () => {
  test('a client deposits ₹1,234.56; staff approve; balance, history, notification and mail agree to the paisa', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const form = multipart({ amount: '1234.56', txn_ref: '512345678901', csrf_token: browser.csrfToken as string }, [
      { field: 'screenshot', filename: 'upi.png', contentType: 'image/png', data: PNG },
    ]);
    const submitted = await browser.request('POST', '/api/v1/client/wallet/deposit/', {
      body: form.body,
      headers: { 'content-type': form.contentType },
    });
    assert.equal(submitted.statusCode, 201);
    const pending = await json('deposits', 'list', '--status', 'pending');
    const row = pending.find((d: { txn_ref: string }) => d.txn_ref === '512345678901');
    assert.equal(row.amount, '1234.56');
    assert.equal(row.account, account.email);
    const shown = await json('deposits', 'show', String(row.id));
    assert.match(shown.screenshot.path, /uploads\/deposits\/[0-9a-f]{32}\.png$/);

    const approved = await json('deposits', 'approve', String(row.id));
    assert.equal(approved.status, 'approved');
    assert.equal(approved.reviewed_by, 'staff:priya');
    assert.equal(approved.balance, '1234.56');
    const again = await admin('deposits', 'approve', String(row.id));
    assert.equal(again.exitCode, 1);
    assert.match(again.stderr, /already approved/);

    const wallet = (await browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.wallet.balance, '1234.56');
    assert.equal(wallet.transactions[0].amount, '1234.56');
    assert.equal(wallet.transactions[0].kind, 'deposit');
    assert.match(wallet.transactions[0].public_id, /^pay_/);
    const notes = (await browser.get('/api/v1/client/notifications/')).json();
    assert.equal(notes.unread, 1);
    assert.match(notes.notifications[0].title, /₹1234\.56 approved/);
    const mail = await lastMail(t, account.email);
    assert.equal(mail.row.template, 'deposit_approved');
    assert.match(mail.text, /₹1234\.56/);
    assert.equal((await browser.get(`/api/v1/client/wallet/deposit/?id=${row.id}`)).json().deposit.status, 'approved');
  });

  test('reject with a reason; without one it is a usage error', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const form = multipart({ amount: '50', txn_ref: 'NEFT0000111', csrf_token: browser.csrfToken as string }, [
      { field: 'screenshot', filename: 'x.png', contentType: 'image/png', data: PNG },
    ]);
    const { deposit } = (
      await browser.request('POST', '/api/v1/client/wallet/deposit/', {
        body: form.body,
        headers: { 'content-type': form.contentType },
      })
    ).json();
    assert.equal((await admin('deposits', 'reject', String(deposit.id))).exitCode, 2);
    const rejected = await json(
      'deposits',
      'reject',
      String(deposit.id),
      '--reason',
      'Amount does not match the statement',
    );
    assert.equal(rejected.status, 'rejected');
    assert.equal((await lastMail(t, account.email)).row.template, 'deposit_rejected');
    assert.equal((await browser.get('/api/v1/client/wallet/')).json().wallet.balance, '0.00');
  });

  test('wallet credit adds an adjustment with its note; bad amounts refused; wallet show', async () => {
    const { account } = await signedInBrowser(t, freshIp());
    const credited = await json('wallet', 'credit', account.email, '250.75', '--note', 'goodwill for outage');
    assert.equal(credited.balance, '250.75');
    for (const amount of ['0', '-5', '1.234', '10000000'])
      assert.notEqual((await admin('wallet', 'credit', account.email, amount, '--note', 'x y z')).exitCode, 0, amount);
    assert.equal((await admin('wallet', 'credit', account.email, '5')).exitCode, 2, '--note is required');
    const shown = await json('wallet', 'show', account.username);
    assert.equal(shown.balance, '250.75');
    assert.equal(shown.transactions[0].kind, 'adjustment');
    assert.match(shown.transactions[0].note, /goodwill for outage \(staff:priya\)/);
    assert.equal(typeof shown.transactions[0].id, 'number', 'the same identifiers as the client API');
    assert.match(shown.transactions[0].public_id, /^pay_/);
    const help = await admin('wallet', 'credit', '--help');
    assert.match(help.stdout, /--note NOTE/);
    assert.doesNotMatch(help.stdout, /\[--note/);
  });
});
