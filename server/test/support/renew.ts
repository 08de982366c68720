// Helpers of billing-renew.test.ts (T3-M1, T3-L2): customers, virtual servers, the cycle run as at a
// time, and the checks that the books and the paid periods hold. One app per test file (each file
// runs in a process of its own): useApp sets it.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { runAdmin } from '../../src/admin/run.ts';
import type { BillingAction } from '../../src/core/billing/billing.service.ts';
import { addMonth } from '../../src/core/time.ts';
import { post } from '../../src/core/wallet/ledger.ts';
import type { Service } from '../../src/db/tables.ts';
import type { Browser } from './browser.ts';
import { freshIp, signedInBrowser } from './factories.ts';
import { multipart, PNG } from './uploads.ts';
import { type UpstreamApp, waitFor } from './upstreams.ts';

export const WAIT = 60_000;
export const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const GRACE_DAYS = 3;
export const TERMINATE_DAYS = 14;
const SVC = '/api/v1/client/services/';

let u: UpstreamApp;
let n = 0;

export function useApp(app: UpstreamApp): void {
  u = app;
}

/** Let the mail worker finish what the last test queued before the app closes under it. */
export async function drainMail(): Promise<void> {
  await waitFor(
    'the mail outbox to drain',
    async () =>
      (await db().selectFrom('mail_outbox').select('id').where('status', '=', 'queued').executeTakeFirst()) ===
      undefined,
    WAIT,
  ).catch(() => {});
}

export const db = () => u.t.deps.database.db;
export const admin = (...argv: string[]) => runAdmin(argv, async () => u.t.deps, 'staff:billing-renew');
export const run = (at: Date, accountId?: number): Promise<BillingAction[]> =>
  u.t.deps.billing.run({ at, ...(accountId === undefined ? {} : { accountId }) });
export const of = (actions: BillingAction[], serviceId: number) =>
  actions.filter((a) => a.service === serviceId).map((a) => a.action);
export const later = (d: Date, ms: number) => new Date(d.getTime() + ms);
export const service = (id: number) =>
  db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
export const balance = async (accountId: number) => BigInt(await u.t.deps.wallet.balance(accountId));

export interface Customer {
  browser: Browser;
  accountId: number;
  email: string;
}

export async function customer(rupees: string): Promise<Customer> {
  const signed = await signedInBrowser(u.t, freshIp());
  if (rupees !== '0') await u.t.deps.wallet.credit(signed.account.id, rupees, 'test float');
  return { browser: signed.browser, accountId: signed.account.id, email: signed.account.email };
}

export async function settled(jobId: number) {
  return waitFor(
    `job ${jobId}`,
    async () => {
      const j = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
}

/** Every queued or running job of these services has finished. */
export async function quiet(serviceIds: number[]): Promise<void> {
  await waitFor(
    `jobs of services ${serviceIds.join(',')} to finish`,
    async () =>
      (await db()
        .selectFrom('jobs')
        .select('id')
        .where('service_id', 'in', serviceIds)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst()) === undefined,
    WAIT,
  );
}

/** A virtual server ordered through the session surface and running; its service row. */
export async function order(c: Customer, plan: 'vps-1c-1g' | 'vps-2c-4g'): Promise<Service> {
  const planRow = await db().selectFrom('plans').select('id').where('label', '=', plan).executeTakeFirstOrThrow();
  n += 1;
  const res = await c.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: planRow.id,
      config: { server_name: `rnw${n}`, region: 'mum1' },
      idempotency_key: `renew-${n}-${randomBytes(4).toString('hex')}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const job = await settled(res.json().job.id);
  assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
  return service(res.json().service.id);
}

/** A ₹799 (X) and a ₹299 (Y) virtual server, with the wallet empty afterwards. */
export async function twoServers(together = false): Promise<{ c: Customer; x: Service; y: Service }> {
  const c = await customer('1098');
  // In turn, X is the older service (its order is billed first); together is quicker.
  const [x, y] = together
    ? await Promise.all([order(c, 'vps-2c-4g'), order(c, 'vps-1c-1g')])
    : [await order(c, 'vps-2c-4g'), await order(c, 'vps-1c-1g')];
  assert.equal(await balance(c.accountId), 0n);
  return { c, x, y };
}

export const renew = (c: Customer, id: number) => c.browser.post(SVC, { id, action: 'renew' }, { csrf: true });

export const renewalOrders = (serviceId: number) =>
  db()
    .selectFrom('orders')
    .selectAll()
    .where('service_id', '=', serviceId)
    .where('kind', '=', 'renewal')
    .orderBy('id')
    .execute();

/** Money that reaches the wallet without paying anything, as the refund of a failed order does. */
export const refund = (accountId: number, rupees: number) =>
  db()
    .transaction()
    .execute((trx) => post(trx, accountId, { kind: 'refund', amountPaise: BigInt(rupees * 100), note: 'refund' }));

/**
 * The books of an account hold: every ledger row follows from the one before and is never
 * negative, the ledger sums to the balance, and renewal rows and paid renewal orders pair one to one.
 */
export async function booksHold(accountId: number, context = ''): Promise<void> {
  const rows = await db()
    .selectFrom('wallet_transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  let running = 0n;
  for (const row of rows) {
    running += BigInt(row.amount_paise);
    assert.equal(BigInt(row.balance_after_paise), running, `${context} ledger row ${row.id} follows the one before`);
    assert.ok(running >= 0n, `${context} balance never negative (row ${row.id})`);
  }
  assert.equal(await balance(accountId), running, `${context} the ledger sums to the balance`);
  const orders = await db()
    .selectFrom('orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('kind', '=', 'renewal')
    .execute();
  const charges = rows.filter((r) => r.kind === 'renewal');
  for (const o of orders) {
    const mine = charges.filter((r) => r.reference_type === 'order' && r.reference_id === o.id);
    assert.equal(mine.length, o.status === 'paid' ? 1 : 0, `${context} ${o.public_id} (${o.status}) charged once`);
    if (mine[0]) assert.equal(BigInt(mine[0].amount_paise), -BigInt(o.amount_paise), `${context} its amount`);
  }
  assert.equal(charges.length, orders.filter((o) => o.status === 'paid').length, `${context} no stray renewal rows`);
}

/**
 * No period is charged twice: paid_until is the paid_until the service started with plus one
 * month per paid renewal order, and the periods those orders name are distinct months of that
 * span. An unpaid order is for the current paid_until (at most one).
 */
export async function periodsHold(svc: Service, context = ''): Promise<void> {
  const now = await service(svc.id);
  const orders = await renewalOrders(svc.id);
  const where = `${context} service ${svc.id} (${now.status}):`;
  const paid = orders.filter((o) => o.status === 'paid');
  const months: string[] = [];
  let expected = svc.period_end as Date;
  for (let i = 0; i < paid.length; i++) {
    months.push(expected.toISOString());
    expected = addMonth(expected);
  }
  assert.equal(
    now.period_end?.toISOString(),
    expected.toISOString(),
    `${where} paid_until = a month per charge (${paid.length} paid renewal orders)`,
  );
  const named = paid.filter((o) => o.renews_from !== null).map((o) => (o.renews_from as Date).toISOString());
  assert.equal(new Set(named).size, named.length, `${where} each period paid once: ${named.join(', ')}`);
  for (const from of named) assert.ok(months.includes(from), `${where} ${from} is one of the paid months`);
  const open = orders.filter((o) => o.status === 'unpaid');
  assert.ok(open.length <= 1, `${where} at most one unpaid order`);
  for (const o of open)
    assert.equal(o.renews_from?.toISOString(), expected.toISOString(), `${where} the unpaid order is for paid_until`);
}

/** A deposit the client submits (multipart, with its proof) and staff approve. */
export async function deposit(c: Customer, rupees: number): Promise<void> {
  const form = multipart(
    {
      amount: String(rupees),
      txn_ref: `UTR${randomBytes(6).toString('hex')}`,
      csrf_token: c.browser.csrfToken as string,
    },
    [{ field: 'screenshot', filename: 'proof.png', contentType: 'image/png', data: PNG }],
  );
  const res = await c.browser.request('POST', '/api/v1/client/wallet/deposit/', {
    body: form.body,
    headers: { 'content-type': form.contentType },
    csrf: true,
  });
  assert.equal(res.statusCode, 201, res.body);
  await u.t.deps.deposits.approve(res.json().deposit.id, 'staff:billing-renew');
}
