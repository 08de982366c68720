// The billing cycle (issue 14, CONTRACT §7), driven with `billing run --at` on a real VPS on the
// Proxmox emulator: reminder, renewal from the wallet, no money → unpaid → grace → suspended on
// the emulator → money in → paid and unsuspended; and the path to termination. The ledger sum
// equals the balance throughout; runs at once bill a period once.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { loadConfig } from '../src/config.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WAIT = 60_000;
const DAY = 86_400_000;
let u: UpstreamApp;
let n = 0;

before(async () => {
  u = await createUpstreamApp();
});
after(() => u.close());

const db = () => u.t.deps.database.db;
const admin = (...argv: string[]) => runAdmin(argv, async () => u.t.deps, 'staff:test');

interface Customer {
  browser: Browser;
  accountId: number;
  email: string;
}

async function customer(rupees: string): Promise<Customer> {
  const signed = await signedInBrowser(u.t, freshIp());
  if (rupees !== '0') await u.t.deps.wallet.credit(signed.account.id, rupees, 'test float');
  return { browser: signed.browser, accountId: signed.account.id, email: signed.account.email };
}

async function settled(jobId: number) {
  return waitFor(
    `job ${jobId}`,
    async () => {
      const j = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
}

/** A vps-1c-1g (₹299 a month) ordered and running; its service row. */
async function vps(c: Customer) {
  const plan = await db().selectFrom('plans').select('id').where('label', '=', 'vps-1c-1g').executeTakeFirstOrThrow();
  const res = await c.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { server_name: `bill${++n}`, region: 'mum1' }, idempotency_key: `bill-${n}` },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const job = await settled(res.json().job.id);
  assert.equal(job.status, 'succeeded');
  return service(res.json().service.id);
}

const service = (id: number) => db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function ledgerMatches(accountId: number): Promise<void> {
  const sum = await db()
    .selectFrom('wallet_transactions')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('amount_paise'), eb.val('0')).as('sum'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const wallet = await db()
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  assert.equal(BigInt(sum.sum), BigInt(wallet?.balance_paise ?? '0'), 'the ledger sums to the balance');
}

const run = (at: Date) => u.t.deps.billing.run({ at });
const renewalOrders = (serviceId: number) =>
  db()
    .selectFrom('orders')
    .selectAll()
    .where('service_id', '=', serviceId)
    .where('kind', '=', 'renewal')
    .orderBy('id')
    .execute();
const vmOf = (svc: { external: unknown }) => (svc.external as { vmid: number }).vmid;

describe('the whole timeline of one service', () => {
  test('reminder, renewal, unpaid, grace, suspended on the node, money in, paid and unsuspended', async () => {
    const c = await customer('598');
    const svc = await vps(c);
    const paidUntil = svc.period_end as Date;

    // Three days before: one reminder (notification and mail), however often the cycle runs.
    const early = await run(new Date(paidUntil.getTime() - 2 * DAY));
    assert.deepEqual(
      early.filter((a) => a.service === svc.id).map((a) => a.action),
      ['reminded'],
    );
    assert.deepEqual(
      (await run(new Date(paidUntil.getTime() - DAY))).filter((a) => a.service === svc.id),
      [],
    );
    const reminders = await db()
      .selectFrom('notifications')
      .select('kind')
      .where('account_id', '=', c.accountId)
      .where('kind', '=', 'renewal_reminder')
      .execute();
    assert.equal(reminders.length, 1);
    const mails = await db()
      .selectFrom('mail_outbox')
      .select('subject')
      .where('account_id', '=', c.accountId)
      .execute();
    assert.ok(
      mails.some((m) => /renews on/.test(m.subject)),
      JSON.stringify(mails),
    );

    // At paid_until: renewed from the wallet.
    const renewed = await run(paidUntil);
    assert.deepEqual(
      renewed.filter((a) => a.service === svc.id).map((a) => a.action),
      ['renewed'],
    );
    const after1 = await service(svc.id);
    assert.ok((after1.period_end as Date) > paidUntil);
    assert.equal((await renewalOrders(svc.id))[0]?.status, 'paid');
    await ledgerMatches(c.accountId);

    // A month on, the wallet is empty: an unpaid order, overdue; /billing shows it.
    const second = after1.period_end as Date;
    const unpaid = await run(second);
    assert.deepEqual(
      unpaid.filter((a) => a.service === svc.id).map((a) => a.action),
      ['unpaid'],
    );
    const orders = await renewalOrders(svc.id);
    assert.deepEqual(
      orders.map((o) => o.status),
      ['paid', 'unpaid'],
    );
    const wallet = (await c.browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.billing.unpaid.total.amount, '299.00');
    assert.equal(wallet.billing.unpaid.orders[0].service.id, svc.id);

    // Within the grace days nothing happens; after them the service is suspended on its node.
    assert.deepEqual(
      (await run(new Date(second.getTime() + 2 * DAY))).filter((a) => a.service === svc.id),
      [],
    );
    const suspend = await run(new Date(second.getTime() + 3 * DAY + 1000));
    assert.deepEqual(
      suspend.filter((a) => a.service === svc.id).map((a) => a.action),
      ['suspended'],
    );
    const suspendJob = await db()
      .selectFrom('jobs')
      .selectAll()
      .where('service_id', '=', svc.id)
      .where('type', '=', 'suspend')
      .executeTakeFirstOrThrow();
    assert.equal((await settled(suspendJob.id)).status, 'succeeded');
    const suspended = await service(svc.id);
    assert.equal(suspended.status, 'suspended');
    assert.equal(suspended.suspend_reason, 'overdue');
    assert.equal(u.pve.state.vms.get(vmOf(suspended))?.status, 'stopped');
    const detail = (await c.browser.get(`/api/v1/client/services/?id=${svc.id}`)).json().service;
    assert.equal(detail.suspend_reason, 'overdue');
    assert.equal(detail.overdue, true);

    // Staff credit the wallet: the order is paid at once and the suspension lifted.
    await u.t.deps.wallet.credit(c.accountId, '299', 'customer paid by bank transfer');
    assert.deepEqual(
      (await renewalOrders(svc.id)).map((o) => o.status),
      ['paid', 'paid'],
    );
    const unsuspend = await db()
      .selectFrom('jobs')
      .selectAll()
      .where('service_id', '=', svc.id)
      .where('type', '=', 'unsuspend')
      .executeTakeFirstOrThrow();
    assert.equal((await settled(unsuspend.id)).status, 'succeeded');
    const back = await service(svc.id);
    assert.equal(back.status, 'active');
    assert.equal(back.suspend_reason, null);
    assert.ok((back.period_end as Date) > second);
    assert.equal(u.pve.state.vms.get(vmOf(back))?.status, 'running');
    await ledgerMatches(c.accountId);
  });

  test('no money until TERMINATE_DAYS: terminated, gone from the node, its unpaid order cancelled', async () => {
    const c = await customer('299');
    const svc = await vps(c);
    const vmid = vmOf(svc);
    const due = svc.period_end as Date;
    await run(due);
    await run(new Date(due.getTime() + 4 * DAY));
    await settled(
      (
        await db()
          .selectFrom('jobs')
          .select('id')
          .where('service_id', '=', svc.id)
          .where('type', '=', 'suspend')
          .executeTakeFirstOrThrow()
      ).id,
    );
    const end = await run(new Date(due.getTime() + 14 * DAY + 1000));
    assert.deepEqual(
      end.filter((a) => a.service === svc.id).map((a) => a.action),
      ['terminated'],
    );
    const job = await db()
      .selectFrom('jobs')
      .selectAll()
      .where('service_id', '=', svc.id)
      .where('type', '=', 'terminate')
      .executeTakeFirstOrThrow();
    assert.equal((await settled(job.id)).status, 'succeeded');
    assert.equal((await service(svc.id)).status, 'terminated');
    assert.equal(u.pve.state.vms.get(vmid), undefined, 'the VM is deleted');
    assert.deepEqual(
      (await renewalOrders(svc.id)).map((o) => o.status),
      ['cancelled'],
    );
    const ip = await db()
      .selectFrom('ipv4_addresses')
      .select('service_id')
      .where('service_id', '=', svc.id)
      .executeTakeFirst();
    assert.equal(ip, undefined, 'the IPv4 address is released');
    await ledgerMatches(c.accountId);
  });
});

describe('exactly once, and paying', () => {
  test('runs at once bill each period once; the ledger sums to the balance', async () => {
    const c = await customer('897');
    const svc = await vps(c);
    const due = svc.period_end as Date;
    await Promise.all([run(due), run(due), run(due), run(due)]);
    const orders = await renewalOrders(svc.id);
    assert.equal(orders.length, 1, JSON.stringify(orders));
    assert.equal(orders[0]?.status, 'paid');
    const debits = await db()
      .selectFrom('wallet_transactions')
      .select('id')
      .where('account_id', '=', c.accountId)
      .where('kind', '=', 'renewal')
      .execute();
    assert.equal(debits.length, 1);
    await ledgerMatches(c.accountId);
  });

  test('the client pays an unpaid order: 422 insufficient_funds with details first, then paid', async () => {
    const c = await customer('299');
    const svc = await vps(c);
    await run(svc.period_end as Date);
    const [order] = await renewalOrders(svc.id);
    assert.equal(order?.status, 'unpaid');
    const short = await c.browser.post('/api/v1/client/orders/', { action: 'pay', id: order?.id }, { csrf: true });
    assert.equal(short.statusCode, 422, short.body);
    assert.equal(short.json().code, 'insufficient_funds');
    // A deposit the client makes is approved: the order is paid automatically, oldest first.
    await u.t.deps.wallet.credit(c.accountId, '100', 'partial');
    assert.equal((await renewalOrders(svc.id))[0]?.status, 'unpaid', 'not enough: nothing paid');
    await u.t.deps.wallet.credit(c.accountId, '199', 'rest');
    assert.equal((await renewalOrders(svc.id))[0]?.status, 'paid');
    const again = await c.browser.post('/api/v1/client/orders/', { action: 'pay', id: order?.id }, { csrf: true });
    assert.equal(again.statusCode, 409, again.body);
    const other = await customer('1000');
    const foreign = await other.browser.post(
      '/api/v1/client/orders/',
      { action: 'pay', id: order?.id },
      { csrf: true },
    );
    assert.equal(foreign.statusCode, 404, foreign.body);
    await ledgerMatches(c.accountId);
  });

  test('a client-requested suspension is not lifted by paying', async () => {
    const c = await customer('299');
    const svc = await vps(c);
    const asked = await c.browser.post(
      '/api/v1/client/services/',
      { id: svc.id, action: 'request_suspend' },
      { csrf: true },
    );
    const approved = await u.t.deps.serviceStaff.approveRequest(asked.json().request.id, 'staff:test');
    assert.equal((await settled(approved.job.id)).status, 'succeeded');
    assert.equal((await service(svc.id)).suspend_reason, 'client');
    await run(svc.period_end as Date);
    await u.t.deps.wallet.credit(c.accountId, '299', 'pays');
    assert.equal((await renewalOrders(svc.id))[0]?.status, 'paid');
    const still = await service(svc.id);
    assert.equal(still.status, 'suspended');
    assert.equal(still.suspend_reason, 'client');
    const jobs = await db()
      .selectFrom('jobs')
      .select('type')
      .where('service_id', '=', svc.id)
      .where('type', '=', 'unsuspend')
      .execute();
    assert.deepEqual(jobs, []);
  });
});

describe('staff CLI and configuration', () => {
  test('billing run --at --dry-run says what it would do and changes nothing; a bad time is refused', async () => {
    const c = await customer('0');
    void c;
    const dry = await admin(
      'billing',
      'run',
      '--at',
      new Date(Date.now() + 400 * DAY).toISOString(),
      '--dry-run',
      '--json',
    );
    assert.equal(dry.exitCode, 0, dry.stderr);
    const out = JSON.parse(dry.stdout);
    assert.equal(out.dry_run, true);
    assert.ok(Array.isArray(out.actions));
    const bad = await admin('billing', 'run', '--at', 'next tuesday');
    assert.notEqual(bad.exitCode, 0);
  });

  test('GRACE_DAYS and TERMINATE_DAYS are validated at start', () => {
    assert.throws(() => loadConfig({ GRACE_DAYS: 'three' }), /GRACE_DAYS/);
    assert.throws(
      () => loadConfig({ GRACE_DAYS: '10', TERMINATE_DAYS: '5' }),
      /TERMINATE_DAYS \(5\) must be more than GRACE_DAYS \(10\)/,
    );
    const config = loadConfig({ GRACE_DAYS: '5', TERMINATE_DAYS: '30' });
    assert.equal(config.graceDays, 5);
    assert.equal(config.terminateDays, 30);
  });
});
