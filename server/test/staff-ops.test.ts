// The staff console's domain routes (CONTRACT §14, issue 38): the dashboard against known
// fixtures; accounts (search, detail, credit/debit and a refund paid outside with their audit rows
// in the change's transaction — a refused debit or refund leaves neither a ledger row nor an audit
// row —, the customer's activity, suspend, 2FA reset, resend); services (list, detail, suspend/terminate/retry by role);
// nodes (drain); the billing cycle's preview and run; the GSTR-1 export; plans (price, listing).
// The role battery of every row is server/test/staff-roles.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { AuditRow } from '../src/db/tables.ts';
import { createAccount, freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { enableTotp } from './support/privacy.ts';
import { type SignedInStaff, signedInStaff } from './support/staff.ts';

let t: TestApp;
const clock = new ManualClock();
let support: SignedInStaff;
let billing: SignedInStaff;
let admin: SignedInStaff;
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  await seedDemoCatalog(t.deps.database.db);
  support = await signedInStaff(t, clock, 'support', freshIp());
  billing = await signedInStaff(t, clock, 'billing', freshIp());
  admin = await signedInStaff(t, clock, 'admin', freshIp());
});
after(() => t.close());

const db = () => t.deps.database.db;
const cli = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:ops-test');

async function auditRows(action: string, targetId?: number | string): Promise<AuditRow[]> {
  let query = db().selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id');
  if (targetId !== undefined) query = query.where('target_id', '=', String(targetId));
  return query.execute();
}

const ledgerCount = async (accountId: number) =>
  Number(
    (
      await db()
        .selectFrom('wallet_transactions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).n,
  );

async function aService(accountId: number, label: string, status: 'active' | 'suspended' = 'active') {
  const plan = await db().selectFrom('plans').selectAll().where('label', '=', 'vps-2c-4g').executeTakeFirstOrThrow();
  const location = await db().selectFrom('locations').select('id').where('code', '=', 'mum1').executeTakeFirstOrThrow();
  return db()
    .insertInto('services')
    .values({
      account_id: accountId,
      plan_id: plan.id,
      order_id: null,
      location_id: location.id,
      node_id: null,
      price_paise: plan.price_paise,
      type: 'vps',
      label,
      status,
      config: JSON.stringify({}),
      external: null,
      ...(status === 'suspended' ? { suspended_at: clock.now(), suspend_reason: 'staff' as const } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function aFailedJob(accountId: number, serviceId: number, type: 'power' | 'suspend' = 'suspend') {
  return db()
    .insertInto('jobs')
    .values({
      account_id: accountId,
      service_id: serviceId,
      type,
      status: 'failed',
      error_code: 'node_unreachable',
      error_message: 'The node did not answer.',
      params: JSON.stringify({ error_detail: 'connect ECONNREFUSED' }),
      finished_at: clock.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function aNode(name: string, capacity: number) {
  return t.deps.nodes.add({
    name,
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'https://127.0.0.1:18241',
    credentials: { token_id: 'root@pam!t', token_secret: 'x' },
    settings: { node: 'pve' },
    capacity,
  });
}

describe('dashboard', () => {
  test('today in IST: money in and out, failed jobs, nodes in trouble, deposits waiting', async () => {
    const read = async () => {
      const res = await support.browser.get('/dashboard');
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const base = await read();
    const customer = await createAccount(t);
    const id = customer.account.id;
    const proof = { screenshot_file: 'proof.png', screenshot_type: 'png' as const, screenshot_bytes: 68 };
    // Money in: a manual deposit approved in the console, and an online payment captured today.
    const credited = await billing.browser.post('/accounts', {
      action: 'credit',
      id,
      amount_paise: 100_000,
      reason: 'opening balance for the test',
    });
    assert.equal(credited.statusCode, 200, credited.body);
    await db()
      .insertInto('deposits')
      .values([
        {
          public_id: `dep_ops_manual_${id}`,
          account_id: id,
          amount_paise: 50_000n,
          method: 'manual',
          txn_ref: `61${id}000000001`,
          ...proof,
          status: 'approved',
          reviewed_by: 'staff:1',
          reviewed_at: clock.now(),
        },
        {
          public_id: `dep_ops_online_${id}`,
          account_id: id,
          amount_paise: 25_050n,
          method: 'razorpay',
          txn_ref: null,
          gateway_order_id: `order_ops${id}`,
          gateway_payment_id: `pay_ops${id}`,
          status: 'approved',
          reviewed_by: 'razorpay',
          reviewed_at: clock.now(),
        },
        {
          public_id: `dep_ops_pending_${id}`,
          account_id: id,
          amount_paise: 10_000n,
          method: 'manual',
          txn_ref: `61${id}000000002`,
          ...proof,
          status: 'pending',
          created_at: new Date(clock.now().getTime() - 3 * 3600_000),
        },
      ])
      .execute();
    // Money out: ₹300.00 paid back outside the platform (the CLI's wallet refund).
    assert.equal((await cli('wallet', 'refund', customer.account.email, '300', '--note', 'UPI back')).exitCode, 0);
    // A failed job, a node down and a node over capacity.
    const svc = await aService(id, 'dash-vps');
    await aFailedJob(id, svc.id);
    const down = await aNode('dash-down', 10);
    await t.deps.nodes.setHealth(down.id, 'down', 'connect ECONNREFUSED');
    const full = await aNode('dash-full', 0);
    await db().updateTable('services').set({ node_id: full.id }).where('id', '=', svc.id).execute();
    await aNode('dash-fine', 5);

    const now = await read();
    const delta = (path: (d: typeof now) => string) => (Number(path(now)) - Number(path(base))).toFixed(2);
    assert.equal(
      delta((d) => d.money_in.deposits.amount),
      '500.00',
    );
    assert.equal(now.money_in.deposits.count - base.money_in.deposits.count, 1);
    assert.equal(
      delta((d) => d.money_in.online.amount),
      '250.50',
    );
    assert.equal(now.money_in.online.count - base.money_in.online.count, 1);
    assert.equal(
      delta((d) => d.money_out.withdrawals.amount),
      '300.00',
    );
    assert.equal(
      delta((d) => d.money_out.refunds.amount),
      '0.00',
    );
    assert.equal(now.failed_jobs.today - base.failed_jobs.today, 1);
    assert.equal(now.failed_jobs.latest[0].service_id, svc.id);
    assert.equal(now.failed_jobs.latest[0].error_detail, 'connect ECONNREFUSED');
    const names = now.nodes.map((n: { name: string }) => n.name);
    assert.ok(names.includes('dash-down') && names.includes('dash-full'), names.join());
    assert.ok(!names.includes('dash-fine'));
    const fullNode = now.nodes.find((n: { name: string }) => n.name === 'dash-full');
    assert.equal(fullNode.used, 1);
    assert.equal(now.nodes.find((n: { name: string }) => n.name === 'dash-down').last_error, 'connect ECONNREFUSED');
    assert.equal(now.deposits_waiting.count - base.deposits_waiting.count, 1);
    assert.ok(now.deposits_waiting.oldest_age_seconds >= 3 * 3600 - 5);
    // The day is IST's: it starts at 18:30 UTC.
    assert.match(now.day.from, /T18:30:00\.000\+00:00$/);
  });
});

describe('accounts', () => {
  test('search by e-mail, name and id; the detail has services, ledger and activity', async () => {
    const { account } = await createAccount(t, { name: 'Kavya Search' });
    const byEmail = (await support.browser.get(`/accounts?q=${encodeURIComponent(account.email)}`)).json();
    assert.deepEqual(
      byEmail.accounts.map((a: { id: number }) => a.id),
      [account.id],
    );
    const byName = (await support.browser.get('/accounts?q=kavya%20search')).json();
    assert.ok(byName.accounts.some((a: { id: number }) => a.id === account.id));
    const byId = (await support.browser.get(`/accounts?q=${account.id}`)).json();
    assert.equal(byId.accounts[0].id, account.id);
    const page = (await support.browser.get('/accounts?limit=1')).json();
    assert.equal(page.accounts.length, 1);
    assert.equal(page.next_cursor, '1');
    const next = (await support.browser.get(`/accounts?limit=1&cursor=${page.next_cursor}`)).json();
    assert.notEqual(next.accounts[0].id, page.accounts[0].id);

    await aService(account.id, 'detail-vps');
    const detail = await support.browser.get(`/accounts/${account.id}`);
    assert.equal(detail.statusCode, 200, detail.body);
    assert.equal(detail.json().account.email, account.email);
    assert.equal(detail.json().services[0].label, 'detail-vps');
    assert.equal(detail.json().balance, '0.00');
    const missing = await support.browser.get('/accounts/987654');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().success, false);
    const bad = await support.browser.get('/accounts/abc');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'validation_failed');
  });

  test('two_factor: off, on once the customer turns it on, off again after a staff reset', async () => {
    const customer = await signedInBrowser(t, freshIp());
    const id = customer.account.id;
    const read = async () => {
      const res = await support.browser.get(`/accounts/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().two_factor;
    };
    assert.equal(await read(), false);
    await enableTotp(customer.browser, clock.now);
    clock.advance(30);
    assert.equal(await read(), true);
    const reset = await support.browser.post('/accounts', { action: 'reset_2fa', id });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal(await read(), false);
  });

  test('a credit: the wallet, an audit row with before/after, reason and IP, and the customer’s activity', async () => {
    const customer = await signedInBrowser(t, freshIp());
    const id = customer.account.id;
    const res = await billing.browser.post('/accounts', {
      action: 'credit',
      id,
      amount_paise: 12_345,
      reason: 'goodwill for the outage',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().balance, '123.45');
    const [row] = await auditRows('wallet.credit', id);
    assert.ok(row);
    assert.equal(row.actor, `staff:${billing.id}`);
    assert.equal(row.role, 'billing');
    assert.equal(row.ip, billing.browser.ip);
    assert.equal(row.reason, 'goodwill for the outage');
    assert.deepEqual(row.before, { balance: '0.00' });
    assert.equal((row.after as { balance: string }).balance, '123.45');

    const activity = (await customer.browser.get('/api/v1/client/account/activity/')).json();
    const credit = activity.events.find((a: { type: string }) => a.type === 'staff_wallet_credited');
    assert.ok(credit, JSON.stringify(activity));
    const detail = (await support.browser.get(`/accounts/${id}`)).json();
    assert.equal(detail.ledger[0].amount, '123.45');
    const staffRow = detail.activity.find((a: { type: string }) => a.type === 'staff_wallet_credited');
    assert.equal(staffRow.staff_name, 'Hostplane staff');
  });

  test('a debit beyond the balance is refused and leaves no ledger row and no audit row; one within it is audited', async () => {
    const { account } = await createAccount(t);
    const id = account.id;
    await billing.browser.post('/accounts', { action: 'credit', id, amount_paise: 5_000, reason: 'test money' });
    const ledger = await ledgerCount(id);
    const audits = (await auditRows('wallet.debit', id)).length;
    const refused = await billing.browser.post('/accounts', {
      action: 'debit',
      id,
      amount_paise: 5_001,
      reason: 'oops',
    });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'insufficient_funds');
    assert.equal(refused.json().success, false);
    assert.equal(await ledgerCount(id), ledger);
    assert.equal((await auditRows('wallet.debit', id)).length, audits);

    const ok = await billing.browser.post('/accounts', {
      action: 'debit',
      id,
      amount_paise: 2_000,
      reason: 'double credit',
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().balance, '30.00');
    const [row] = await auditRows('wallet.debit', id);
    assert.deepEqual(row?.before, { balance: '50.00' });
    assert.equal((row?.after as { balance: string }).balance, '30.00');
    assert.equal(row?.reason, 'double credit');
    const activity = await db()
      .selectFrom('account_activity')
      .selectAll()
      .where('account_id', '=', id)
      .where('type', '=', 'staff_wallet_debited')
      .executeTakeFirstOrThrow();
    assert.equal(activity.staff_name, 'Hostplane staff');
  });

  test('a refund paid outside: a withdrawal row, the balance, the audit row and the activity; never beyond the balance', async () => {
    const customer = await signedInBrowser(t, freshIp());
    const id = customer.account.id;
    await billing.browser.post('/accounts', { action: 'credit', id, amount_paise: 10_000, reason: 'test money' });
    const ledger = await ledgerCount(id);
    const audits = async () => (await auditRows('wallet.refund', id)).length;

    // Refused, nothing written: over the balance (the message says it), no reference, a bad amount, support.
    const over = await billing.browser.post('/accounts', {
      action: 'refund_outside',
      id,
      amount_paise: 10_001,
      reason: 'UPI ref 123456789012',
    });
    assert.equal(over.statusCode, 422, over.body);
    assert.equal(over.json().success, false);
    assert.equal(over.json().code, 'insufficient_funds');
    assert.match(over.json().message, /holds ₹100\.00/);
    assert.equal(over.json().details.balance, '100.00');
    const noReference = await billing.browser.post('/accounts', { action: 'refund_outside', id, amount_paise: 100 });
    assert.equal(noReference.statusCode, 422, noReference.body);
    assert.match(noReference.json().errors.reason, /bank or UPI reference/);
    const noAmount = await billing.browser.post('/accounts', { action: 'refund_outside', id, reason: 'NEFT N123' });
    assert.equal(noAmount.statusCode, 422, noAmount.body);
    assert.equal(noAmount.json().errors.amount_paise, 'is required');
    for (const amount_paise of [0, -5, 1.5, '100']) {
      const bad = await billing.browser.post('/accounts', {
        action: 'refund_outside',
        id,
        amount_paise,
        reason: 'NEFT N1',
      });
      assert.equal(bad.statusCode, 422, `${amount_paise}: ${bad.body}`);
      assert.equal(bad.json().success, false);
    }
    const byRole = await support.browser.post('/accounts', {
      action: 'refund_outside',
      id,
      amount_paise: 100,
      reason: 'NEFT N123',
    });
    assert.equal(byRole.statusCode, 403, byRole.body);
    assert.equal(byRole.json().code, 'forbidden_role');
    assert.equal(byRole.json().details.required, 'billing');
    assert.equal(await ledgerCount(id), ledger);
    assert.equal(await audits(), 0);
    assert.equal((await support.browser.get(`/accounts/${id}`)).json().balance, '100.00');

    // All of it (the account may then be deleted): the same core as `wallet refund`.
    const ok = await billing.browser.post('/accounts', {
      action: 'refund_outside',
      id,
      amount_paise: 10_000,
      reason: ' UPI ref 123456789012 ',
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().balance, '0.00');
    assert.equal(ok.json().message, '₹100.00 recorded as paid back outside the platform.');
    const entry = await db()
      .selectFrom('wallet_transactions')
      .selectAll()
      .where('account_id', '=', id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(entry.kind, 'withdrawal');
    assert.equal(String(entry.amount_paise), '-10000');
    assert.equal(String(entry.balance_after_paise), '0');
    assert.equal(entry.note, 'UPI ref 123456789012');
    const [row] = await auditRows('wallet.refund', id);
    assert.ok(row);
    assert.equal(row.actor, `staff:${billing.id}`);
    assert.equal(row.role, 'billing');
    assert.equal(row.ip, billing.browser.ip);
    assert.equal(row.reason, 'UPI ref 123456789012');
    assert.deepEqual(row.before, { balance: '100.00' });
    assert.deepEqual(row.after, { balance: '0.00', transaction: entry.public_id });
    const activity = (await customer.browser.get('/api/v1/client/account/activity/')).json();
    const refunded = activity.events.find((a: { type: string }) => a.type === 'staff_wallet_refunded');
    assert.ok(refunded, JSON.stringify(activity));
    assert.match(refunded.summary, /paid ₹100\.00 of your wallet back to you/);
    const detail = (await support.browser.get(`/accounts/${id}`)).json();
    assert.equal(detail.balance, '0.00');
    assert.equal(detail.ledger[0].kind, 'withdrawal');
    assert.equal(detail.ledger[0].amount, '-100.00');
    const again = await billing.browser.post('/accounts', {
      action: 'refund_outside',
      id,
      amount_paise: 1,
      reason: 'UPI ref 123456789012',
    });
    assert.equal(again.statusCode, 422, again.body);
    assert.match(again.json().message, /holds ₹0\.00/);
    assert.equal((await auditRows('wallet.refund', id)).length, 1);
  });

  test('roles per action and validation in the envelope', async () => {
    const { account } = await createAccount(t, { verified: false });
    const id = account.id;
    const refused = await support.browser.post('/accounts', { action: 'credit', id, amount_paise: 100, reason: 'no' });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'forbidden_role');
    assert.equal(refused.json().details.required, 'billing');
    const noAmount = await billing.browser.post('/accounts', { action: 'credit', id });
    assert.equal(noAmount.statusCode, 422);
    assert.equal(noAmount.json().code, 'validation_failed');
    assert.ok(noAmount.json().errors.amount_paise && noAmount.json().errors.reason);
    const badAction = await billing.browser.post('/accounts', { action: 'delete', id });
    assert.equal(badAction.statusCode, 422);
    assert.equal(badAction.json().success, false);

    const resent = await support.browser.post('/accounts', { action: 'resend_verification', id });
    assert.equal(resent.statusCode, 200, resent.body);
    assert.equal((await auditRows('account.resend_verification', id)).length, 1);
    const reset = await support.browser.post('/accounts', { action: 'reset_2fa', id });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal((await auditRows('account.two_factor_reset', id)).length, 1);

    const noReason = await billing.browser.post('/accounts', { action: 'suspend', id });
    assert.equal(noReason.statusCode, 422);
    const suspended = await billing.browser.post('/accounts', { action: 'suspend', id, reason: 'chargeback' });
    assert.equal(suspended.statusCode, 200, suspended.body);
    assert.equal(suspended.json().account.status, 'suspended');
    const [row] = await auditRows('account.suspend', id);
    assert.equal(row?.reason, 'chargeback');
    assert.equal((row?.before as { suspended: boolean }).suspended, false);
    const again = await billing.browser.post('/accounts', { action: 'suspend', id, reason: 'chargeback' });
    assert.equal(again.statusCode, 409);
    const lifted = await billing.browser.post('/accounts', { action: 'unsuspend', id });
    assert.equal(lifted.statusCode, 200);
    assert.equal((await auditRows('account.unsuspend', id)).length, 1);
  });
});

describe('deposits', () => {
  test('sort=oldest: the one waiting longest first; newest first by default', async () => {
    const { account } = await createAccount(t);
    const hoursAgo = (h: number) => new Date(clock.now().getTime() - h * 3600_000);
    const rows = await db()
      .insertInto('deposits')
      .values(
        [1, 5, 2].map((h, i) => ({
          public_id: `dep_sort_${account.id}_${i}`,
          account_id: account.id,
          amount_paise: 10_000n + BigInt(i),
          method: 'manual' as const,
          txn_ref: `63${account.id}0000000${i}`,
          screenshot_file: 'proof.png',
          screenshot_type: 'png' as const,
          screenshot_bytes: 68,
          status: 'pending' as const,
          created_at: hoursAgo(h),
        })),
      )
      .returning(['id', 'public_id'])
      .execute();
    const [oneHour, fiveHours, twoHours] = rows.map((r) => r.public_id);
    const mine = (list: { public_id: string; account: { id: number } }[]) =>
      list.filter((d) => d.account.id === account.id).map((d) => d.public_id);
    const oldest = await support.browser.get('/deposits?sort=oldest&limit=200');
    assert.equal(oldest.statusCode, 200, oldest.body);
    assert.deepEqual(mine(oldest.json().deposits), [fiveHours, twoHours, oneHour]);
    const times = oldest.json().deposits.map((d: { created_at: string }) => Date.parse(d.created_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      'the whole queue is oldest first',
    );
    const newest = await support.browser.get('/deposits?limit=200');
    assert.deepEqual(mine(newest.json().deposits), [twoHours, fiveHours, oneHour], 'newest: the latest reported');
    const bad = await support.browser.get('/deposits?sort=sideways');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'validation_failed');
  });
});

describe('services', () => {
  test('q: part of the label (any case), part of the owner’s e-mail, or the id', async () => {
    const { account } = await createAccount(t, { name: 'Qadir Query' });
    const other = await createAccount(t);
    const a = await aService(account.id, 'query-web-alpha');
    const b = await aService(account.id, 'query-db-beta');
    const c = await aService(other.account.id, 'unrelated-gamma');
    const ids = async (q: string) => {
      const res = await support.browser.get(`/services?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().services.map((s: { id: number }) => s.id);
    };
    assert.deepEqual(await ids('QUERY-WEB'), [a.id]);
    assert.deepEqual(await ids('query-'), [b.id, a.id], 'newest first');
    assert.deepEqual(await ids(account.email), [b.id, a.id]);
    assert.ok((await ids(String(c.id))).includes(c.id), 'by its id');
    assert.deepEqual(await ids('no-such-label-anywhere'), []);
    const long = await support.browser.get(`/services?q=${'x'.repeat(201)}`);
    assert.equal(long.statusCode, 422);
  });

  test('list, detail, and suspend/unsuspend/terminate/retry by role, each audited', async () => {
    const { account } = await createAccount(t);
    const a = await aService(account.id, 'ops-a');
    const b = await aService(account.id, 'ops-b', 'suspended');
    const list = (await support.browser.get(`/services?account_id=${account.id}&status=suspended&type=vps`)).json();
    assert.deepEqual(
      list.services.map((s: { id: number }) => s.id),
      [b.id],
    );
    const badType = await support.browser.get('/services?type=spaceship');
    assert.equal(badType.statusCode, 422);
    assert.ok(badType.json().errors.type);

    const refused = await support.browser.post('/services', { action: 'suspend', id: a.id, reason: 'abuse report' });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'forbidden_role');
    const noReason = await billing.browser.post('/services', { action: 'suspend', id: a.id });
    assert.equal(noReason.statusCode, 422);
    assert.ok(noReason.json().errors.reason);
    const suspended = await billing.browser.post('/services', { action: 'suspend', id: a.id, reason: 'abuse report' });
    assert.equal(suspended.statusCode, 200, suspended.body);
    assert.equal(suspended.json().job.type, 'suspend');
    const [row] = await auditRows('service.suspend', a.id);
    assert.equal(row?.reason, 'abuse report');
    assert.deepEqual(row?.before, { status: 'active' });
    assert.equal((row?.after as { job: number }).job, suspended.json().job.id);

    const detail = (await support.browser.get(`/services/${a.id}`)).json();
    assert.equal(detail.service.label, 'ops-a');
    assert.equal(detail.jobs[0].id, suspended.json().job.id);
    assert.ok(detail.events.some((e: { kind: string }) => e.kind === 'suspend_by_staff'));

    const unsuspended = await billing.browser.post('/services', { action: 'unsuspend', id: b.id, reason: 'paid up' });
    assert.equal(unsuspended.statusCode, 200, unsuspended.body);
    assert.equal((await auditRows('service.unsuspend', b.id))[0]?.reason, 'paid up');

    const c = await aService(account.id, 'ops-c');
    const byBilling = await billing.browser.post('/services', { action: 'terminate', id: c.id, reason: 'fraud' });
    assert.equal(byBilling.statusCode, 403);
    assert.equal(byBilling.json().details.required, 'admin');
    const terminated = await admin.browser.post('/services', { action: 'terminate', id: c.id, reason: 'fraud' });
    assert.equal(terminated.statusCode, 200, terminated.body);
    assert.equal((await auditRows('service.terminate', c.id)).length, 1);
    const busy = await admin.browser.post('/services', { action: 'terminate', id: c.id, reason: 'fraud' });
    assert.equal(busy.statusCode, 409);

    const d = await aService(account.id, 'ops-d');
    const failed = await aFailedJob(account.id, d.id, 'power');
    const noJob = await billing.browser.post('/services', { action: 'retry_job', id: d.id, reason: 'node back' });
    assert.equal(noJob.statusCode, 422);
    const otherService = await billing.browser.post('/services', {
      action: 'retry_job',
      id: a.id,
      job_id: failed.id,
      reason: 'node back',
    });
    assert.equal(otherService.statusCode, 404);
    const retried = await billing.browser.post('/services', {
      action: 'retry_job',
      id: d.id,
      job_id: failed.id,
      reason: 'node back',
    });
    assert.equal(retried.statusCode, 200, retried.body);
    assert.equal(retried.json().job.status, 'queued');
    const [retry] = await auditRows('job.retry', d.id);
    assert.equal((retry?.before as { status: string }).status, 'failed');
    assert.equal(retry?.reason, 'node back');
  });
});

describe('nodes, billing, export, plans', () => {
  test('nodes: drain keeps a node out of placement, audited; twice is 409', async () => {
    const node = await aNode('ops-drain', 4);
    const list = (await admin.browser.get('/nodes')).json();
    const listed = list.nodes.find((n: { id: number }) => n.id === node.id);
    assert.equal(listed.active, true);
    assert.equal(listed.capacity, 4);
    assert.equal(listed.used, 0);
    assert.ok(!('credentials_sealed' in listed));
    const drained = await admin.browser.post('/nodes', { action: 'drain', id: node.id, reason: 'disk replacement' });
    assert.equal(drained.statusCode, 200, drained.body);
    assert.equal(drained.json().node.active, false);
    const [row] = await auditRows('node.drain', node.id);
    assert.deepEqual(row?.before, { active: true });
    assert.deepEqual(row?.after, { active: false });
    assert.equal(row?.reason, 'disk replacement');
    const twice = await admin.browser.post('/nodes', { action: 'drain', id: node.id, reason: 'disk replacement' });
    assert.equal(twice.statusCode, 409);
    const undrained = await admin.browser.post('/nodes', { action: 'undrain', id: node.id, reason: 'disk replaced' });
    assert.equal(undrained.json().node.active, true);
    const missing = await admin.browser.post('/nodes', { action: 'drain', id: 987654, reason: 'no such node' });
    assert.equal(missing.statusCode, 404);
  });

  test('billing: a preview changes nothing and is not audited; a run is', async () => {
    const before = (await auditRows('billing.run')).length;
    const preview = await billing.browser.post('/billing', { action: 'preview' });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.equal(preview.json().dry_run, true);
    assert.equal((await auditRows('billing.run')).length, before);
    const run = await billing.browser.post('/billing', { action: 'run', reason: 'month end check' });
    assert.equal(run.statusCode, 200, run.body);
    assert.equal(run.json().dry_run, false);
    const rows = await auditRows('billing.run');
    assert.equal(rows.length, before + 1);
    assert.equal(rows.at(-1)?.reason, 'month end check');
    assert.equal((rows.at(-1)?.after as { actions: number }).actions, run.json().actions.length);
    const bad = await billing.browser.post('/billing', { action: 'explode' });
    assert.equal(bad.statusCode, 422);
  });

  test('invoice export: the GSTR-1 CSV of a month, as the CLI writes it; JSON; a bad month is 422', async () => {
    const month = clock.now().toISOString().slice(0, 7);
    const csv = await billing.browser.get(`/invoices/export?month=${month}`);
    assert.equal(csv.statusCode, 200, csv.body);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(String(csv.headers['content-disposition']), new RegExp(`gstr1-${month}\\.csv`));
    const out = await cli('invoices', 'export', '--month', month, '--format', 'gstr1-csv');
    assert.equal(out.exitCode, 0, out.stderr);
    assert.equal(csv.body.trim(), out.stdout.trim());
    const json = await billing.browser.get(`/invoices/export?month=${month}&format=json`);
    assert.equal(json.statusCode, 200);
    assert.ok(json.json().export.reconciliation);
    const bad = await billing.browser.get('/invoices/export?month=2026-13');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'validation_failed');
  });

  test('plans: a price change and a retirement, audited with before and after', async () => {
    const plans = (await admin.browser.get('/plans')).json().plans;
    const plan = plans.find((p: { label: string }) => p.label === 'vps-1c-1g');
    assert.ok(plan);
    const res = await admin.browser.post('/plans', {
      action: 'update',
      id: plan.id,
      price_paise: plan.price_paise + 10_000,
      reason: 'new hardware',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().plan.price_paise, plan.price_paise + 10_000);
    const [row] = await auditRows('plan.update', plan.id);
    assert.deepEqual(row?.before, { price: plan.price });
    assert.deepEqual(row?.after, { price: res.json().plan.price });
    assert.equal(row?.reason, 'new hardware');
    const retired = await admin.browser.post('/plans', { action: 'update', id: plan.id, active: false });
    assert.equal(retired.json().plan.active, false);
    const [, second] = await auditRows('plan.update', plan.id);
    assert.deepEqual(second?.before, { active: true });
    await admin.browser.post('/plans', { action: 'update', id: plan.id, active: true, price_paise: plan.price_paise });
    const zero = await admin.browser.post('/plans', { action: 'update', id: plan.id, price_paise: 0 });
    assert.equal(zero.statusCode, 422);
    const nothing = await admin.browser.post('/plans', { action: 'update', id: plan.id });
    assert.equal(nothing.statusCode, 422);
    const missing = await admin.browser.post('/plans', { action: 'update', id: 987654, active: true });
    assert.equal(missing.statusCode, 404);
  });
});
