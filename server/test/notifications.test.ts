// Notifications (spec 4.11), and the ownership battery over the id-bearing client routes of
// this issue: another account's id answers exactly like a missing one and changes nothing.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { notify } from '../src/core/notifications/notification.service.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { receivedPng } from './support/uploads.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const NOTIFICATIONS = '/api/v1/client/notifications/';

describe('notifications', () => {
  test('listed newest first with the unread count; paginated; read marks one; read_all the rest', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    for (let i = 1; i <= 5; i++)
      await notify(t.deps.database.db, account.id, { kind: 'test', title: `Note ${i}`, body: `Body ${i}` });
    const page = await browser.get(`${NOTIFICATIONS}?per_page=2`);
    assert.equal(page.statusCode, 200);
    const body = page.json();
    assert.deepEqual(
      body.notifications.map((n: { title: string }) => n.title),
      ['Note 5', 'Note 4'],
    );
    assert.equal(body.unread, 5);
    assert.deepEqual(body.pagination, { page: 1, per_page: 2, total: 5, pages: 3 });
    const read = await browser.post(NOTIFICATIONS, { action: 'read', id: body.notifications[0].id }, { csrf: true });
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().notification.read, true);
    assert.equal((await browser.get(NOTIFICATIONS)).json().unread, 4);
    assert.equal((await browser.get(`${NOTIFICATIONS}?unread=true`)).json().notifications.length, 4);
    const all = await browser.post(NOTIFICATIONS, { action: 'read_all' }, { csrf: true });
    assert.equal(all.json().marked, 4);
    assert.equal((await browser.get(NOTIFICATIONS)).json().unread, 0);
  });

  test('bad input: unknown action, missing id, bad paging', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    assert.equal((await browser.post(NOTIFICATIONS, { action: 'delete', id: 1 }, { csrf: true })).statusCode, 422);
    assert.equal(
      (await browser.post(NOTIFICATIONS, { action: 'read' }, { csrf: true })).json().errors.id,
      'is required',
    );
    assert.equal((await browser.get(`${NOTIFICATIONS}?per_page=1000`)).statusCode, 422);
    assert.equal((await browser.get(`${NOTIFICATIONS}?page=0`)).statusCode, 422);
  });
});

describe('ownership battery', () => {
  test("another account's notification and deposit ids: the same 404 as a missing id, and nothing changes", async () => {
    const owner = await signedInBrowser(t, freshIp());
    const intruder = await signedInBrowser(t, freshIp());
    const note = await notify(t.deps.database.db, owner.account.id, {
      kind: 'test',
      title: 'Private',
      body: 'Owner only',
    });
    const deposit = await t.deps.deposits.submit(owner.account.id, {
      amount: '10',
      txnRef: `BOLA${owner.account.id}`,
      upload: await receivedPng(t.dataDir),
    });
    const probes: [
      string,
      () => ReturnType<typeof intruder.browser.get>,
      () => ReturnType<typeof intruder.browser.get>,
    ][] = [
      [
        'mark read',
        () => intruder.browser.post(NOTIFICATIONS, { action: 'read', id: note.id }, { csrf: true }),
        () => intruder.browser.post(NOTIFICATIONS, { action: 'read', id: 99_999_999 }, { csrf: true }),
      ],
      [
        'deposit',
        () => intruder.browser.get(`/api/v1/client/wallet/deposit/?id=${deposit.id}`),
        () => intruder.browser.get('/api/v1/client/wallet/deposit/?id=99999999'),
      ],
      [
        'screenshot',
        () => intruder.browser.get(`/api/v1/client/wallet/deposit/?id=${deposit.id}&action=screenshot`),
        () => intruder.browser.get('/api/v1/client/wallet/deposit/?id=99999999&action=screenshot'),
      ],
    ];
    for (const [label, foreign, missing] of probes) {
      const before = await fingerprint(t);
      const a = await foreign();
      const b = await missing();
      assert.equal(a.statusCode, 404, label);
      assert.deepEqual(a.json(), b.json(), label);
      assert.equal(a.json().code, 'not_owner');
      assert.doesNotMatch(a.body, /Private|BOLA/, label);
      assert.deepEqual(await fingerprint(t), before, `${label} changed something`);
    }
    const lists = await Promise.all([
      intruder.browser.get(NOTIFICATIONS),
      intruder.browser.get('/api/v1/client/wallet/deposit/'),
      intruder.browser.get('/api/v1/client/wallet/'),
    ]);
    for (const res of lists) assert.doesNotMatch(res.body, /Private|BOLA/);
  });
});
