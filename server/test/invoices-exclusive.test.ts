// Prices before GST (PRICES_INCLUDE_GST=false, issue 35, CONTRACT §12) through HTTP: the catalog
// shows the price and what a month takes with 18 % on top; an order, a renewal bought, one the
// cycle renews from the wallet, one billed unpaid and paid by the client or by money arriving each
// debit the wallet exactly their invoice's total, with the plan's price as the taxable value
// (CGST + SGST in the seller's state, IGST elsewhere); every sufficiency check (an order, a token
// deploy's 402, a renew, the cycle, a pay) asks for the price with GST, so a wallet holding the
// price but not the tax is refused and charged nothing; a failed order refunds what it charged. Runs on PostgreSQL too when
// TEST_DATABASE_URL is set.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gstinCheckCharacter } from '../src/core/billing/gst.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { failedAndRefunded } from '../src/core/product-kit/lifecycle.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { apiClient } from './support/rest.ts';

// 15 June 2026, financial year 2026-27, whatever day the suite runs on.
const clock = new ManualClock();
clock.offsetMs = Date.parse('2026-06-15T06:00:00Z') - Date.now();

// vps-2c-4g costs ₹799 before GST: 18 % is ₹143.82 (CGST 71.91 + SGST 71.91, or IGST), ₹942.82 in all.
const PRICE = '799.00';
const WITH_GST = '942.82';
const PRICE_PAISE = 79_900n;
const TOTAL_PAISE = 94_282n;

let t: TestApp;
let planId: number;
before(async () => {
  t = await createTestApp({ env: { PRICES_INCLUDE_GST: 'false' }, overrides: { clock: clock.now } });
  assert.equal(t.config.invoicing.pricesIncludeGst, false);
  await seedDemoCatalog(t.deps.database.db);
  await t.deps.nodes.add({
    name: 'pve-mum1',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 500,
  });
  const plan = await t.deps.database.db
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', 'vps-2c-4g')
    .executeTakeFirstOrThrow();
  assert.equal(BigInt(plan.price_paise), PRICE_PAISE);
  planId = plan.id;
});
after(() => t.close());

const ORDERS = '/api/v1/client/orders/';
const INVOICES = '/api/v1/client/invoices/';
const db = () => t.deps.database.db;
let n = 0;

async function customer(rupees: string) {
  const signed = await signedInBrowser(t, freshIp());
  if (rupees !== '0') await t.deps.wallet.credit(signed.account.id, rupees, 'test float');
  return signed;
}

async function profile(browser: Browser, state: string) {
  const first14 = `${state}AAPFU0939F1Z`;
  const res = await browser.post(
    '/api/v1/client/account/billing-profile/',
    {
      legal_name: 'Asha Traders LLP',
      address_line1: '12, MG Road',
      city: 'Bengaluru',
      state_code: state,
      pincode: '560001',
      gstin: first14 + gstinCheckCharacter(first14),
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 200, res.body);
}

const place = (browser: Browser) =>
  browser.post(
    ORDERS,
    { plan_id: planId, config: { server_name: `exc${++n}`, region: 'mum1' }, idempotency_key: `exc-key-${n}` },
    { csrf: true },
  );

async function invoices(browser: Browser) {
  const res = await browser.get(INVOICES);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoices as Array<{ id: number; order_id: number; total: string }>;
}

async function invoiceOfOrder(browser: Browser, orderId: number) {
  const summary = (await invoices(browser)).find((i) => i.order_id === orderId);
  assert.ok(summary, `order ${orderId} has an invoice`);
  const res = await browser.get(`${INVOICES}?id=${summary.id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoice;
}

async function balance(browser: Browser): Promise<string> {
  const res = await browser.get('/api/v1/client/wallet/');
  assert.equal(res.statusCode, 200, res.body);
  return res.json().wallet.balance;
}

/** The ledger row that paid an order, through the order's transaction id. */
async function debitOf(orderId: number): Promise<bigint> {
  const row = await db()
    .selectFrom('orders')
    .innerJoin('wallet_transactions', 'wallet_transactions.id', 'orders.transaction_id')
    .select('wallet_transactions.amount_paise')
    .where('orders.id', '=', orderId)
    .executeTakeFirstOrThrow();
  return BigInt(row.amount_paise);
}

/** An order's service, as if provisioned: active and paid for a month from now. */
async function activate(serviceId: number): Promise<Date> {
  const periodEnd = new Date(clock.now().getTime() + 30 * 86_400_000);
  await db()
    .updateTable('services')
    .set({ status: 'active', period_end: periodEnd })
    .where('id', '=', serviceId)
    .execute();
  return periodEnd;
}

describe('what the catalog shows', () => {
  test('the plan keeps its price and says what a month takes with GST (session, token, quote, cloud)', async () => {
    const { browser } = await customer('0');
    const catalog = await browser.get('/api/v1/client/catalog/');
    assert.equal(catalog.statusCode, 200, catalog.body);
    const plan = catalog.json().plans.find((p: { id: number }) => p.id === planId);
    const expected = {
      monthly: PRICE,
      currency: 'INR',
      includes_gst: false,
      gst: '143.82',
      monthly_with_gst: WITH_GST,
    };
    assert.deepEqual(plan.price, expected);
    const api = await apiClient(t, ['read'], '0');
    const quote = await api.call('POST', '/api/v1/quote', { plan: 'vps-2c-4g' });
    assert.equal(quote.statusCode, 200, quote.body);
    assert.deepEqual(quote.json().price, expected);
    assert.deepEqual(quote.json().plan.price, expected);
    const cloud = await api.call('GET', '/cloud/v1/plans');
    assert.equal(cloud.statusCode, 200, cloud.body);
    assert.deepEqual(cloud.json().plans.find((p: { id: number }) => p.id === planId).price, expected);
  });
});

describe('an order is charged the price plus GST, and its invoice totals the debit', () => {
  test('no profile (the seller state): CGST + SGST on the price; the order, the ledger and the invoice agree', async () => {
    const { browser } = await customer('1000');
    const res = await place(browser);
    assert.equal(res.statusCode, 201, res.body);
    const { order, service } = res.json();
    assert.equal(order.amount, WITH_GST, 'the order shows what it charged');
    assert.match(res.json().message, /₹942\.82 charged/);
    assert.equal(service.price.monthly, PRICE);
    assert.equal(service.price.monthly_with_gst, WITH_GST);
    assert.equal(await debitOf(order.id), -TOTAL_PAISE);
    assert.equal(await balance(browser), '57.18');
    const inv = await invoiceOfOrder(browser, order.id);
    assert.equal(inv.taxable_value, PRICE, 'the price is the taxable value');
    assert.deepEqual(inv.tax, { cgst: '71.91', sgst: '71.91', igst: '0.00', rate: '18.00' });
    assert.equal(inv.total, WITH_GST);
    assert.equal(inv.place_of_supply, '27');
    assert.equal(inv.lines[0].taxable_value, PRICE);
    assert.equal(inv.amount_in_words, 'Rupees Nine Hundred Forty-Two and Eighty-Two Paise Only');
  });

  test('a Karnataka buyer: IGST on the price, the same total', async () => {
    const { browser } = await customer('1000');
    await profile(browser, '29');
    const res = await place(browser);
    assert.equal(res.statusCode, 201, res.body);
    const inv = await invoiceOfOrder(browser, res.json().order.id);
    assert.equal(inv.taxable_value, PRICE);
    assert.deepEqual(inv.tax, { cgst: '0.00', sgst: '0.00', igst: '143.82', rate: '18.00' });
    assert.equal(inv.total, WITH_GST);
    assert.equal(await debitOf(res.json().order.id), -TOTAL_PAISE);
  });

  test('a wallet holding the price but not the GST: 422 (session) and 402 (token) asking for the total; nothing charged', async () => {
    const { browser, account } = await customer('900');
    const refused = await place(browser);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'insufficient_funds');
    assert.equal(refused.json().details.required, WITH_GST);
    assert.equal(refused.json().details.shortfall, '42.82');
    const token = await apiClient(t, ['*'], '0', account.id);
    const deploy = await token.call('POST', '/api/v1/instances', {
      plan: 'vps-2c-4g',
      server_name: 'short1',
      region: 'mum1',
      eula: true,
      idempotency_key: 'exc-short-1',
    });
    assert.equal(deploy.statusCode, 402, deploy.body);
    assert.equal(deploy.json().details.required, WITH_GST);
    assert.equal(await balance(browser), '900.00');
    assert.deepEqual(await invoices(browser), []);
    const orders = await db().selectFrom('orders').select('id').where('account_id', '=', account.id).execute();
    assert.equal(orders.length, 0);
  });
});

describe('renewals are charged the price plus GST', () => {
  test('renew (a month bought), the cycle from the wallet, the cycle unpaid then paid: each debit is its invoice', async () => {
    const { browser, account } = await customer(WITH_GST);
    const placed = await place(browser);
    assert.equal(placed.statusCode, 201, placed.body);
    const serviceId = placed.json().service.id as number;
    await activate(serviceId);

    // The billing summary: the next renewal and the run-rate are what the wallet will be charged.
    const wallet = (await browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.billing.monthly_run_rate.amount, WITH_GST);
    assert.equal(wallet.billing.next_renewals[0].amount, WITH_GST);

    // Renew with ₹900 (the price, not the GST): refused, nothing charged.
    await t.deps.wallet.credit(account.id, '900', 'top-up');
    const short = await browser.post('/api/v1/client/services/', { id: serviceId, action: 'renew' }, { csrf: true });
    assert.equal(short.statusCode, 422, short.body);
    assert.equal(short.json().details.required, WITH_GST);
    assert.equal(await balance(browser), '900.00');

    // With the GST too: one month bought, its debit the invoice's total.
    await t.deps.wallet.credit(account.id, '42.82', 'top-up');
    const renewed = await browser.post('/api/v1/client/services/', { id: serviceId, action: 'renew' }, { csrf: true });
    assert.equal(renewed.statusCode, 200, renewed.body);
    const bought = renewed.json().order;
    assert.equal(bought.amount, WITH_GST);
    assert.equal(await debitOf(bought.id), -TOTAL_PAISE);
    assert.equal((await invoiceOfOrder(browser, bought.id)).taxable_value, PRICE);
    assert.equal(await balance(browser), '0.00');

    // The cycle at the next paid_until, the wallet holding the GST-inclusive amount: renewed from it.
    await t.deps.wallet.credit(account.id, WITH_GST, 'top-up');
    const cycled = await cycleAt(serviceId, account.id);
    assert.ok(
      cycled.some((a) => a.action === 'renewed'),
      JSON.stringify(cycled),
    );
    const fromWallet = await lastRenewal(serviceId);
    assert.equal(fromWallet.status, 'paid');
    assert.equal(BigInt(fromWallet.amount_paise), TOTAL_PAISE);
    assert.equal(await debitOf(fromWallet.id), -TOTAL_PAISE);
    assert.equal((await invoiceOfOrder(browser, fromWallet.id)).total, WITH_GST);

    // The next one with ₹900: not covered (it would be by the bare price), billed unpaid for the total.
    await t.deps.wallet.credit(account.id, '900', 'top-up');
    const billed = await cycleAt(serviceId, account.id);
    assert.ok(
      billed.some((a) => a.action === 'unpaid'),
      JSON.stringify(billed),
    );
    const unpaid = await lastRenewal(serviceId);
    assert.equal(unpaid.status, 'unpaid');
    assert.equal(BigInt(unpaid.amount_paise), TOTAL_PAISE);
    assert.equal((await browser.get('/api/v1/client/wallet/')).json().billing.unpaid.total.amount, WITH_GST);
    const pay = () => browser.post(ORDERS, { action: 'pay', id: unpaid.id }, { csrf: true });
    const refused = await pay();
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().details.required, WITH_GST);

    // The client pays it once the wallet covers the total.
    await t.deps.wallet.credit(account.id, '42.82', 'top-up');
    // (Money arriving settles what is owed at once: the credit just paid it.)
    const settled = await db().selectFrom('orders').selectAll().where('id', '=', unpaid.id).executeTakeFirstOrThrow();
    assert.equal(settled.status, 'paid');
    assert.equal(await debitOf(unpaid.id), -TOTAL_PAISE);
    assert.equal((await invoiceOfOrder(browser, unpaid.id)).total, WITH_GST);
    assert.equal((await pay()).statusCode, 409, 'paid already');
  });

  test('a failed order refunds the price and GST; the client pays an unpaid renewal with it: debit = invoice total', async () => {
    const { browser, account } = await customer(WITH_GST);
    const first = await place(browser);
    assert.equal(first.statusCode, 201, first.body);
    const serviceId = first.json().service.id as number;
    await activate(serviceId);
    await t.deps.wallet.credit(account.id, WITH_GST, 'top-up');
    const second = await place(browser);
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(await balance(browser), '0.00');

    // The first service's month ends with the wallet empty: billed unpaid, for the price with GST.
    const billed = await cycleAt(serviceId, account.id);
    assert.ok(
      billed.some((a) => a.action === 'unpaid'),
      JSON.stringify(billed),
    );
    const unpaid = await lastRenewal(serviceId);
    assert.equal(BigInt(unpaid.amount_paise), TOTAL_PAISE);

    // The second order's provisioning gives up, as the worker ends it: the refund is what was
    // charged, GST included; a refund pays no order by itself.
    await failAndRefund(second.json().service.id);
    const refund = await db()
      .selectFrom('orders')
      .innerJoin('wallet_transactions', 'wallet_transactions.id', 'orders.refund_transaction_id')
      .select('wallet_transactions.amount_paise')
      .where('orders.id', '=', second.json().order.id)
      .executeTakeFirstOrThrow();
    assert.equal(BigInt(refund.amount_paise), TOTAL_PAISE, 'the refund is the charge, GST included');
    assert.equal(await balance(browser), WITH_GST);

    // The client pays the renewal: exactly the order's amount, which its invoice totals.
    const paid = await browser.post(ORDERS, { action: 'pay', id: unpaid.id }, { csrf: true });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(paid.json().order.amount, WITH_GST);
    assert.equal(await debitOf(unpaid.id), -TOTAL_PAISE);
    const inv = await invoiceOfOrder(browser, unpaid.id);
    assert.equal(inv.taxable_value, PRICE);
    assert.equal(inv.total, WITH_GST);
    assert.equal(await balance(browser), '0.00');
  });
});

describe('across everything above', () => {
  test('every charge has exactly one invoice, whose total is the debit and whose taxable value is the price', async () => {
    const charges = await db()
      .selectFrom('wallet_transactions')
      .select(['id', 'amount_paise', 'reference_id'])
      .where('kind', 'in', ['order', 'renewal'])
      .execute();
    assert.ok(charges.length >= 8, `${charges.length} charges`);
    // Credit notes (the refund above issued one) are checked by credit-notes.test.ts.
    const issued = await db().selectFrom('invoices').selectAll().where('kind', '=', 'invoice').execute();
    assert.equal(issued.length, charges.length, 'one invoice per charge');
    for (const charge of charges) {
      const mine = issued.filter((i) => i.order_id === charge.reference_id);
      assert.equal(mine.length, 1, `charge ${charge.id}`);
      const inv = mine[0] as (typeof issued)[number];
      assert.equal(BigInt(inv.total_paise), -BigInt(charge.amount_paise));
      assert.equal(BigInt(inv.taxable_paise), PRICE_PAISE);
      assert.equal(BigInt(inv.cgst_paise) + BigInt(inv.sgst_paise) + BigInt(inv.igst_paise), TOTAL_PAISE - PRICE_PAISE);
    }
  });
});

/** Run the billing cycle just after the service's paid_until, for its account. */
async function cycleAt(serviceId: number, accountId: number) {
  const service = await db().selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
  const at = new Date((service.period_end as Date).getTime() + 3_600_000);
  return (await t.deps.billing.run({ at, accountId })).filter((a) => a.service === serviceId);
}

/** Provisioning gave up: the service failed and its order refunded, as the worker's runner ends it. */
async function failAndRefund(serviceId: number): Promise<void> {
  const service = await db().selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
  const job = await db().selectFrom('jobs').selectAll().where('service_id', '=', serviceId).executeTakeFirstOrThrow();
  await db()
    .transaction()
    .execute((trx) =>
      failedAndRefunded(
        trx,
        { job, service, now: clock.now(), bus: t.deps.bus, product: t.deps.products.of(service.type) },
        { code: 'node_unreachable', message: 'The server node did not answer.', detail: 'test' },
        t.deps.config.invoicing,
      ),
    );
}

const lastRenewal = (serviceId: number) =>
  db()
    .selectFrom('orders')
    .selectAll()
    .where('service_id', '=', serviceId)
    .where('kind', '=', 'renewal')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
