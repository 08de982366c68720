// Resizing a virtual server to a larger plan (issue 37, CONTRACT §13), through both surfaces and
// the CLI against an emulated Proxmox node: the pro-rata charge (a property over every day of
// 28- to 31-day periods, and the exact amount a resize debits), a resize end to end (wallet,
// order, invoice, the VM's new cores, memory and disk on the node, the service's new plan and
// price), every refusal leaving the wallet and the plan as they were, 402 on a short wallet, the
// token route's scope, a job that fails on the node refunded through a credit note with the old
// plan kept, and `hostplane resize`.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { chargeOfPrice } from '../src/core/billing/charge.ts';
import { periodStartOf, prorate } from '../src/core/billing/proration.ts';
import { addMonth } from '../src/core/time.ts';
import type { Plan, Service } from '../src/db/tables.ts';
import type { Browser } from './support/browser.ts';
import { cliRunner, ok } from './support/cli.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const SVC = '/api/v1/client/services/';
const DAY_MS = 86_400_000;
/** The one port of this file's listening server (the CLI needs a real socket). */

/** A clock the test can stop, so that a quote and the charge after it see the same instant. */
const clock = { at: null as number | null, now: () => new Date(clock.at ?? Date.now()) };

let u: UpstreamApp;
const db = () => u.t.deps.database.db;
const plan = (label: string) =>
  db().selectFrom('plans').selectAll().where('label', '=', label).executeTakeFirstOrThrow();
const serviceRow = (id: number) =>
  db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const balance = async (accountId: number) => BigInt(await u.t.deps.wallet.balance(accountId));
const jobsOf = async (serviceId: number) =>
  (await db().selectFrom('jobs').select('id').where('service_id', '=', serviceId).execute()).length;

async function settled(jobId: number) {
  return waitFor(`job ${jobId}`, async () => {
    const j = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    return j.status === 'succeeded' || j.status === 'failed' ? j : null;
  });
}

/** A running server ordered through the session surface. */
async function order(browser: Browser, label: string, region: string): Promise<Service> {
  const p = await plan(label);
  const res = await browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: p.id,
      config: { server_name: `rsz-${randomBytes(3).toString('hex')}`, region },
      idempotency_key: `resize-${randomBytes(6).toString('hex')}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const job = await settled(res.json().job.id);
  assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
  return serviceRow(res.json().service.id);
}

const vmOf = (service: Service) => {
  const vmid = Number((service.external as { vmid: number }).vmid);
  const vm = u.pve.state.vms.get(vmid);
  assert.ok(vm, `VM ${vmid} on the emulated node`);
  return vm;
};

/** Wallet, plan, price, jobs and orders of a service: what a refused resize must leave alone. */
async function snapshot(accountId: number, serviceId: number) {
  const s = await serviceRow(serviceId);
  const orders = await db().selectFrom('orders').select('id').where('account_id', '=', accountId).execute();
  return {
    balance: await balance(accountId),
    plan: s.plan_id,
    price: s.price_paise,
    specs: JSON.stringify((s.config as { specs?: unknown }).specs),
    jobs: await jobsOf(serviceId),
    orders: orders.length,
  };
}

let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let a: Service; // mum1, vps-2c-4g
let b: Service; // del1, vps-2c-4g
let poor: Awaited<ReturnType<typeof signedInBrowser>>;
let c: Service; // mum1, vps-1c-1g, its wallet empty
let poorApi: ApiClient;

before(async () => {
  u = await createUpstreamApp({ overrides: { clock: clock.now } });
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '5000', 'test float');
  a = await order(owner.browser, 'vps-2c-4g', 'mum1');
  b = await order(owner.browser, 'vps-2c-4g', 'del1');
  poor = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(poor.account.id, '299', 'exactly one small server');
  c = await order(poor.browser, 'vps-1c-1g', 'mum1');
  assert.equal(await balance(poor.account.id), 0n);
  poorApi = await apiClient(u.t, ['instances.write', 'read'], '0', poor.account.id);
});
after(() => u.close());

describe('the pro-rata charge', () => {
  test('every day offset of 28- to 31-day periods: the integer formula, never negative, 0 at the end', () => {
    // Periods ending on each day of a year whose months are 28, 30 and 31 days long.
    const ends = Array.from({ length: 365 }, (_, i) => new Date(Date.UTC(2027, 0, 1 + i, 6, 30, 17)));
    const lengths = new Set<number>();
    fc.assert(
      fc.property(
        fc.constantFrom(...ends),
        fc.bigInt({ min: 0n, max: 10_000_000n }),
        fc.bigInt({ min: 0n, max: 10_000_000n }),
        (end, oldPrice, newPrice) => {
          const start = periodStartOf(end);
          assert.equal(addMonth(start).getTime() <= end.getTime(), true, 'the period is the month before paid_until');
          const days = Math.round((end.getTime() - start.getTime()) / DAY_MS);
          lengths.add(days);
          assert.ok(days >= 28 && days <= 31, `${days}-day period`);
          const diff = newPrice > oldPrice ? newPrice - oldPrice : 0n;
          for (let d = 0; d <= days; d++) {
            const now = new Date(start.getTime() + d * DAY_MS);
            const p = prorate(oldPrice, newPrice, end, now);
            const remaining = BigInt((end.getTime() - now.getTime()) / 1000);
            const period = BigInt((end.getTime() - start.getTime()) / 1000);
            assert.equal(p.remainingSeconds, remaining);
            assert.equal(p.periodSeconds, period);
            assert.equal(p.proratedPaise, (diff * remaining) / period, `day ${d} of ${days}`);
            assert.ok(p.proratedPaise >= 0n && p.proratedPaise <= diff);
            if (d === days) assert.equal(p.proratedPaise, 0n, 'nothing at the end of the period');
            if (d === 0) assert.equal(p.proratedPaise, diff, 'the whole difference at its start');
          }
          // Past the end (an instant later) it stays 0, never negative.
          assert.equal(prorate(oldPrice, newPrice, end, new Date(end.getTime() + 1000)).proratedPaise, 0n);
        },
      ),
      { numRuns: 200, seed: 37 },
    );
    for (const d of [28, 30, 31]) assert.ok(lengths.has(d), `a ${d}-day period was among them`);
    // A part of a second is never charged: floor, in whole seconds.
    const end = new Date(Date.UTC(2027, 4, 31));
    const p = prorate(29_900n, 79_900n, end, new Date(end.getTime() - 1500));
    assert.equal(p.remainingSeconds, 1n);
    assert.equal(p.proratedPaise, 50_000n / BigInt(30 * 86_400));
  });
});

describe('resize through the session surface', () => {
  test('refusals: smaller, same, other type, other region, retired, no plan — 422 saying why, nothing changed', async () => {
    const id = a.id;
    const before = await snapshot(owner.account.id, id);
    const retired = await db()
      .insertInto('plans')
      .values({
        label: 'vps-8c-16g-old',
        name: 'Cloud VPS 16 GB (retired)',
        type: 'vps',
        price_paise: 299_900n,
        specs: JSON.stringify({ vcpu: 8, ram_mb: 16384, disk_gb: 320, bandwidth_tb: 8 }),
        active: false,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const mum1 = await db().selectFrom('locations').select('id').where('code', '=', 'mum1').executeTakeFirstOrThrow();
    await db().insertInto('plan_locations').values({ plan_id: retired.id, location_id: mum1.id }).execute();
    const cases: [Plan | number, RegExp][] = [
      [
        await plan('vps-1c-1g'),
        /smaller than the current plan \(CPU cores 1 < 2, memory 1024 MB < 4096 MB, disk 25 GB < 80 GB\)/,
      ],
      [await plan('vps-2c-4g'), /is the current plan/],
      [await plan('mc-java-2g'), /is a game plan/],
      [retired, /is no longer sold/],
      [987_654, /is not a plan of the catalog/],
    ];
    for (const [target, reason] of cases) {
      const planId = typeof target === 'number' ? target : target.id;
      const res = await owner.browser.post(SVC, { action: 'resize', id, plan_id: planId }, { csrf: true });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.equal(body.success, false);
      assert.equal(body.code, 'validation_failed');
      assert.match(body.errors.plan_id, reason);
      if (typeof target !== 'number') assert.match(body.message, reason);
    }
    const other = await owner.browser.post(
      SVC,
      { action: 'resize', id: b.id, plan_id: (await plan('vps-4c-8g')).id },
      { csrf: true },
    );
    assert.equal(other.statusCode, 422, other.body);
    assert.match(other.json().message, /is not sold in Delhi NCR 1, where the server is/);
    const missing = await owner.browser.post(SVC, { action: 'resize', id }, { csrf: true });
    assert.equal(missing.statusCode, 422, missing.body);
    assert.equal(missing.json().errors.plan_id, 'is required');
    assert.deepEqual(await snapshot(owner.account.id, id), before);
    assert.deepEqual((await snapshot(owner.account.id, b.id)).balance, before.balance);
  });

  test('a suspended service is 409 suspended; a foreign one 404; without CSRF 403 — nothing changed', async () => {
    await db().updateTable('services').set({ status: 'suspended' }).where('id', '=', b.id).execute();
    const before = await snapshot(owner.account.id, b.id);
    const target = await plan('vps-4c-8g');
    const res = await owner.browser.post(SVC, { action: 'resize', id: b.id, plan_id: target.id }, { csrf: true });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().code, 'suspended');
    await db().updateTable('services').set({ status: 'active' }).where('id', '=', b.id).execute();
    const foreign = await poor.browser.post(SVC, { action: 'resize', id: a.id, plan_id: target.id }, { csrf: true });
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(foreign.json().code, 'not_owner');
    const noCsrf = await owner.browser.post(SVC, { action: 'resize', id: a.id, plan_id: target.id }, { csrf: false });
    assert.equal(noCsrf.statusCode, 403, noCsrf.body);
    assert.deepEqual(await snapshot(owner.account.id, b.id), before);
  });

  test('402 on a short wallet: wallet, plan, jobs and orders unchanged', async () => {
    const before = await snapshot(poor.account.id, c.id);
    const target = await plan('vps-2c-4g');
    const res = await poor.browser.post(SVC, { action: 'resize', id: c.id, plan_id: target.id }, { csrf: true });
    assert.equal(res.statusCode, 402, res.body);
    assert.equal(res.json().code, 'insufficient_funds');
    assert.equal(res.json().success, false);
    const rest = await poorApi.call('POST', `/api/v1/instances/${c.id}/resize`, { plan: 'vps-2c-4g' });
    assert.equal(rest.statusCode, 402, rest.body);
    assert.equal(rest.json().error, 'insufficient_funds');
    assert.equal(rest.json().details.balance, '0.00');
    assert.deepEqual(await snapshot(poor.account.id, c.id), before);
  });

  test('quote, resize, job: exact debit, invoice, the VM resized on the node, the new plan and price', async () => {
    const target = await plan('vps-4c-8g');
    const from = await plan('vps-2c-4g');
    // 12½ days and a few odd seconds of the period left, at an instant that stands still.
    clock.at = Date.now();
    const paidUntil = new Date(clock.at + 12.5 * DAY_MS + 4321);
    await db().updateTable('services').set({ period_end: paidUntil }).where('id', '=', a.id).execute();
    const remaining = BigInt(Math.floor((paidUntil.getTime() - clock.at) / 1000));
    const period = BigInt((paidUntil.getTime() - periodStartOf(paidUntil).getTime()) / 1000);
    const prorated = ((BigInt(target.price_paise) - BigInt(from.price_paise)) * remaining) / period;
    const expected = chargeOfPrice(u.t.deps.config.invoicing, prorated).totalPaise;
    const money = (paise: bigint) => `${paise / 100n}.${String(paise % 100n).padStart(2, '0')}`;

    const quote = await owner.browser.get(`/api/v1/client/vps/?service=${a.id}&action=resize_options`);
    assert.equal(quote.statusCode, 200, quote.body);
    const options = quote.json();
    assert.deepEqual(
      options.plans.map((p: { label: string }) => p.label),
      ['vps-4c-8g'],
      'only the larger plan sold here (not the smaller, the same or the retired one)',
    );
    assert.equal(options.plans[0].charge_now.amount, money(expected));
    assert.equal(options.plans[0].remaining_seconds, Number(remaining));
    assert.equal(options.current.label, 'vps-2c-4g');

    const balanceBefore = await balance(owner.account.id);
    const res = await owner.browser.post(SVC, { action: 'resize', id: a.id, plan_id: target.id }, { csrf: true });
    clock.at = null;
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().job.type, 'resize');
    assert.match(res.json().message, new RegExp(`₹${money(expected).replace('.', '\\.')} charged`));
    assert.equal(await balance(owner.account.id), balanceBefore - expected, 'debited exactly the quote');

    const resizeOrder = await db()
      .selectFrom('orders')
      .selectAll()
      .where('service_id', '=', a.id)
      .where('kind', '=', 'resize')
      .executeTakeFirstOrThrow();
    assert.equal(resizeOrder.status, 'paid');
    assert.equal(BigInt(resizeOrder.amount_paise), expected);
    assert.equal(resizeOrder.plan_id, target.id);
    const ledger = await db()
      .selectFrom('wallet_transactions')
      .selectAll()
      .where('id', '=', resizeOrder.transaction_id as number)
      .executeTakeFirstOrThrow();
    assert.equal(ledger.kind, 'order');
    assert.equal(BigInt(ledger.amount_paise), -expected);
    const invoice = await db()
      .selectFrom('invoices')
      .selectAll()
      .where('order_id', '=', resizeOrder.id)
      .executeTakeFirstOrThrow();
    assert.equal(invoice.kind, 'invoice');
    assert.equal(BigInt(invoice.total_paise), expected);
    assert.match(invoice.lines[0]?.description ?? '', /Cloud VPS 8 GB: .*upgrade from Cloud VPS 4 GB/);
    const listed = await owner.browser.get(`/api/v1/client/invoices/?id=${invoice.id}`);
    assert.equal(listed.statusCode, 200, listed.body);

    // Right away the service is on the new plan, at the new price for its renewals.
    const moved = await serviceRow(a.id);
    assert.equal(moved.plan_id, target.id);
    assert.equal(BigInt(moved.price_paise), BigInt(target.price_paise));
    assert.equal((moved.config as { specs: { vcpu: number } }).specs.vcpu, 4);

    const job = await settled(res.json().job.id);
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.equal(job.progress, 100);
    const vm = vmOf(moved);
    assert.equal(vm.config.cores, '4');
    assert.equal(vm.config.memory, '8192');
    assert.match(vm.config.scsi0 ?? '', /size=160G/);
    assert.equal(vm.diskGb, 160);
    assert.equal(vm.status, 'running', 'started again');
    assert.equal(u.pve.calls.get('PUT /nodes/:/qemu/:/resize') !== undefined, true);
    const shown = await owner.browser.get(`${SVC}?id=${a.id}`);
    assert.equal(shown.json().service.plan.label, 'vps-4c-8g');
    const events = (await owner.browser.get(`${SVC}?id=${a.id}&action=events`)).json().events;
    assert.ok(events.some((e: { kind: string }) => e.kind === 'resized'));

    // Nothing larger is left in mum1: the options are empty.
    const none = await owner.browser.get(`/api/v1/client/vps/?service=${a.id}&action=resize_options`);
    assert.deepEqual(none.json().plans, []);
  });
});

describe('the node and the driver', () => {
  test("the node refuses to shrink a disk (500, PVE's words); the driver never asks it to", async () => {
    const service = await serviceRow(a.id);
    const vm = vmOf(service);
    const res = await fetch(`${u.pve.url}/api2/json/nodes/${u.pve.node}/qemu/${vm.vmid}/resize`, {
      method: 'PUT',
      headers: {
        authorization: `PVEAPIToken=${u.pve.tokenId}=${u.pve.tokenSecret}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'disk=scsi0&size=10G',
    });
    assert.equal(res.status, 500);
    assert.match(`${res.statusText} ${await res.text()}`, /shrinking disks is not supported/);
    const node = await db()
      .selectFrom('nodes')
      .selectAll()
      .where('id', '=', service.node_id as number)
      .executeTakeFirstOrThrow();
    const hv = u.t.deps.drivers.driverFor(node, 'hypervisor');
    const ref = { node: u.pve.node, vmid: vm.vmid, name: vm.name };
    const resizes = u.pve.calls.get('PUT /nodes/:/qemu/:/resize') ?? 0;
    // Smaller disk asked: CPU and memory change, the disk stays, and /resize is not called.
    await hv.resize(ref, { cores: 3, memoryMb: 6144, diskGb: 10 });
    assert.equal(vm.config.cores, '3');
    assert.equal(vm.config.memory, '6144');
    assert.equal(vm.diskGb, 160);
    assert.equal(u.pve.calls.get('PUT /nodes/:/qemu/:/resize') ?? 0, resizes);
    // Again, as the plan says: a repeat is a no-op on the node.
    await hv.resize(ref, { cores: 4, memoryMb: 8192, diskGb: 160 });
    await hv.resize(ref, { cores: 4, memoryMb: 8192, diskGb: 160 });
    assert.equal(vm.config.cores, '4');
    assert.equal(u.pve.calls.get('PUT /nodes/:/qemu/:/resize') ?? 0, resizes);
  });
});

describe('resize through the token surface', () => {
  test('scope instances.write: a read token is 403 insufficient_scope, nothing changed', async () => {
    await u.t.deps.wallet.credit(poor.account.id, '3000', 'top up');
    const reader = await apiClient(u.t, ['read'], '0', poor.account.id);
    const before = await snapshot(poor.account.id, c.id);
    const res = await reader.call('POST', `/api/v1/instances/${c.id}/resize`, { plan: 'vps-2c-4g' });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().error, 'insufficient_scope');
    assert.deepEqual(await snapshot(poor.account.id, c.id), before);
    const smaller = await poorApi.call('POST', `/api/v1/instances/${c.id}/resize`, { plan: 'vps-1c-1g' });
    assert.equal(smaller.statusCode, 422, smaller.body);
    assert.match(smaller.json().message, /is the current plan/);
    assert.ok(smaller.json().details.fields.plan);
  });

  test('a job that fails on the node: refunded through a credit note, the old plan kept', async () => {
    const before = await snapshot(poor.account.id, c.id);
    await u.pve.setFaults({ failTasks: 1000 });
    const res = await poorApi.call('POST', `/api/v1/instances/${c.id}/resize`, { plan: 'vps-2c-4g' });
    assert.equal(res.statusCode, 202, res.body);
    assert.match(res.headers.location as string, /^\/api\/v1\/jobs\/\d+$/);
    const charged = before.balance - (await balance(poor.account.id));
    assert.ok(charged > 0n, 'charged at once');
    const job = await settled(res.json().job.id);
    await u.pve.setFaults({ failTasks: 0 });
    assert.equal(job.status, 'failed');
    const after = await snapshot(poor.account.id, c.id);
    assert.equal(after.balance, before.balance, 'the charge is back in the wallet');
    assert.equal(after.plan, before.plan, 'the old plan is kept');
    assert.equal(after.price, before.price);
    assert.equal(after.specs, before.specs);
    const resizeOrder = await db()
      .selectFrom('orders')
      .selectAll()
      .where('service_id', '=', c.id)
      .where('kind', '=', 'resize')
      .executeTakeFirstOrThrow();
    assert.equal(resizeOrder.status, 'refunded');
    const note = await db()
      .selectFrom('invoices')
      .selectAll()
      .where('order_id', '=', resizeOrder.id)
      .where('kind', '=', 'credit_note')
      .executeTakeFirstOrThrow();
    assert.equal(BigInt(note.total_paise), charged);
    const refund = await db()
      .selectFrom('wallet_transactions')
      .selectAll()
      .where('id', '=', resizeOrder.refund_transaction_id as number)
      .executeTakeFirstOrThrow();
    assert.equal(refund.kind, 'refund');
    assert.equal(BigInt(refund.amount_paise), charged);
  });

  test('then a resize by label succeeds: 202 with the job, the VM resized', async () => {
    // The failed attempt's undo may have left the VM stopped or started: either is fine to resize.
    const res = await poorApi.call('POST', `/api/v1/instances/${c.id}/resize`, { plan: 'vps-2c-4g' });
    assert.equal(res.statusCode, 202, res.body);
    const job = await settled(res.json().job.id);
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    const vm = vmOf(await serviceRow(c.id));
    assert.equal(vm.config.cores, '2');
    assert.equal(vm.config.memory, '4096');
    assert.equal(vm.diskGb, 80);
  });
});

describe('hostplane resize', () => {
  const cli = cliRunner('hostplane-resize');
  after(() => cli.cleanup());

  test('follows the job to the end; -o json; a plan that is not larger is exit 1 with the reason', async () => {
    const url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
    const dir = cli.home();
    ok(await cli.run(dir, ['login', '--url', url, '--token', poorApi.secret]));
    const env = { HOSTPLANE_POLL_MS: '50' };
    const bad = await cli.run(dir, ['resize', String(c.id), 'vps-1c-1g'], { env });
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /smaller than the current plan/);
    const label = (await serviceRow(c.id)).label;
    const done = JSON.parse(ok(await cli.run(dir, ['resize', label, 'vps-4c-8g', '-o', 'json'], { env })).stdout);
    assert.equal(done.job.status, 'succeeded');
    assert.equal(done.job.type, 'resize');
    assert.equal(done.instance.plan.label, 'vps-4c-8g');
    assert.equal(vmOf(await serviceRow(c.id)).config.cores, '4');
  });
});
