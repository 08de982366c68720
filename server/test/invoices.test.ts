// Tax invoices (issue 35, CONTRACT §12) through HTTP: a paid order gets one invoice in its own
// transaction, with the split its place of supply decides (a Maharashtra buyer CGST + SGST, a
// Karnataka one IGST, no profile the seller's state, B2B exactly when the buyer has a GSTIN);
// numbers run HP/<fy>/000001, 000002, … with no gap — a refused order uses none, a rolled-back
// charge gives its number back, 20 orders at once take 20 consecutive numbers; a renewal paid (at
// once, or later when money arrives) gets its own; the token surface's /invoices shows them; one
// account never reads another's. Runs on PostgreSQL too when TEST_DATABASE_URL is set.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { financialYear, gstinCheckCharacter } from '../src/core/billing/gst.ts';
import { issueInvoice } from '../src/core/billing/invoices.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { apiClient } from './support/rest.ts';

// 15 June 2026, 11:30 IST: financial year 2026-27, whatever day the suite runs on.
const clock = new ManualClock();
clock.offsetMs = Date.parse('2026-06-15T06:00:00Z') - Date.now();
const FY = '2627';

let t: TestApp;
let planId: number;
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
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
    .select('id')
    .where('label', '=', 'vps-2c-4g')
    .executeTakeFirstOrThrow();
  planId = plan.id;
});
after(() => t.close());

const ORDERS = '/api/v1/client/orders/';
const INVOICES = '/api/v1/client/invoices/';
const PROFILE = '/api/v1/client/account/billing-profile/';
let n = 0;
const gstin = (state: string) => {
  const first14 = `${state}AAPFU0939F1Z`;
  return first14 + gstinCheckCharacter(first14);
};

async function customer(rupees: string) {
  const signed = await signedInBrowser(t, freshIp());
  if (rupees !== '0') await t.deps.wallet.credit(signed.account.id, rupees, 'test float');
  return signed;
}

async function profile(browser: Browser, state: string, withGstin: boolean) {
  const res = await browser.post(
    PROFILE,
    {
      legal_name: 'Asha Traders LLP',
      address_line1: '12, MG Road',
      city: state === '27' ? 'Pune' : 'Bengaluru',
      state_code: state,
      pincode: state === '27' ? '411001' : '560001',
      gstin: withGstin ? gstin(state) : null,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 200, res.body);
}

const place = (browser: Browser) =>
  browser.post(
    ORDERS,
    { plan_id: planId, config: { server_name: `inv${++n}`, region: 'mum1' }, idempotency_key: `inv-key-${n}` },
    { csrf: true },
  );

async function invoicesOf(browser: Browser) {
  const res = await browser.get(INVOICES);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoices as Array<Record<string, unknown> & { id: number; number: string }>;
}

async function detail(browser: Browser, id: number) {
  const res = await browser.get(`${INVOICES}?id=${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoice;
}

/** Every number issued so far, in serial order. */
const allNumbers = async () =>
  (await t.deps.database.db.selectFrom('invoices').select('number').orderBy('serial').execute()).map((r) => r.number);
const serialOf = (number: string) => Number(number.split('/')[2]);

describe('an order paid issues one tax invoice', () => {
  test('no profile: B2C, the seller state (Maharashtra), CGST + SGST of ₹799 inclusive; numbers from 000001', async () => {
    assert.equal(financialYear(clock.now()), FY);
    const { browser } = await customer('2000');
    const first = await place(browser);
    assert.equal(first.statusCode, 201, first.body);
    const second = await place(browser);
    assert.equal(second.statusCode, 201, second.body);
    const list = await invoicesOf(browser);
    assert.deepEqual(
      list.map((i) => i.number),
      [`HP/${FY}/000002`, `HP/${FY}/000001`],
      'newest first, consecutive from 1',
    );
    const one = await detail(browser, list[1]?.id as number);
    assert.equal(one.order_id, first.json().order.id);
    assert.equal(one.b2b, false);
    assert.equal(one.place_of_supply, '27');
    assert.equal(one.place_of_supply_name, 'Maharashtra');
    // ₹799 includes 18 %: taxable 677.12, tax 121.88 halved into 60.94 + 60.94.
    assert.equal(one.taxable_value, '677.12');
    assert.deepEqual(one.tax, { cgst: '60.94', sgst: '60.94', igst: '0.00', rate: '18.00' });
    assert.equal(one.total, '799.00');
    assert.equal(one.amount_in_words, 'Rupees Seven Hundred Ninety-Nine Only');
    assert.equal(one.buyer.gstin, null);
    assert.equal(one.buyer.state_code, null);
    assert.match(one.buyer.email, /@/);
    assert.equal(one.seller.state_code, '27');
    assert.equal(one.lines.length, 1);
    assert.equal(one.lines[0].sac, '998315');
    assert.equal(one.lines[0].quantity, 1);
    assert.equal(one.lines[0].total, '799.00');
    // The list says what each is for, in the words of its line.
    assert.equal(list[1]?.description, one.lines[0].description);
    assert.ok(String(list[1]?.description).length > 0);
  });

  test('a Maharashtra profile with a GSTIN: B2B, intra-state; the buyer frozen from the profile', async () => {
    const { browser } = await customer('1000');
    await profile(browser, '27', true);
    assert.equal((await place(browser)).statusCode, 201);
    const [summary] = await invoicesOf(browser);
    const inv = await detail(browser, summary?.id as number);
    assert.equal(inv.b2b, true);
    assert.equal(inv.place_of_supply, '27');
    assert.deepEqual(inv.tax, { cgst: '60.94', sgst: '60.94', igst: '0.00', rate: '18.00' });
    assert.equal(inv.buyer.legal_name, 'Asha Traders LLP');
    assert.equal(inv.buyer.gstin, gstin('27'));
    assert.equal(inv.buyer.address, '12, MG Road, Pune 411001');
    // Editing the profile later never changes an issued invoice.
    await profile(browser, '29', false);
    assert.equal((await detail(browser, inv.id)).buyer.gstin, gstin('27'));
  });

  test('a Karnataka profile: inter-state IGST; without a GSTIN it is B2C', async () => {
    const { browser } = await customer('1000');
    await profile(browser, '29', false);
    assert.equal((await place(browser)).statusCode, 201);
    const [summary] = await invoicesOf(browser);
    const inv = await detail(browser, summary?.id as number);
    assert.equal(inv.b2b, false);
    assert.equal(inv.place_of_supply, '29');
    assert.deepEqual(inv.tax, { cgst: '0.00', sgst: '0.00', igst: '121.88', rate: '18.00' });
    assert.equal(inv.buyer.state_name, 'Karnataka');

    const b2b = await customer('1000');
    await profile(b2b.browser, '29', true);
    assert.equal((await place(b2b.browser)).statusCode, 201);
    const [other] = await invoicesOf(b2b.browser);
    assert.equal(other?.b2b, true);
    assert.deepEqual(other?.tax, { cgst: '0.00', sgst: '0.00', igst: '121.88', rate: '18.00' });
  });
});

describe('numbers have no gap', () => {
  test('an order refused for insufficient funds uses no number', async () => {
    const before = await allNumbers();
    const poor = await customer('10');
    const refused = await place(poor.browser);
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'insufficient_funds');
    assert.deepEqual(await invoicesOf(poor.browser), []);
    const rich = await customer('1000');
    assert.equal((await place(rich.browser)).statusCode, 201);
    const after = await allNumbers();
    assert.equal(after.length, before.length + 1);
    assert.equal(serialOf(after.at(-1) as string), before.length + 1, 'the next number, no gap');
  });

  test('a charge rolled back after its invoice gives the number back', async () => {
    const { account } = await customer('0');
    const before = await allNumbers();
    await assert.rejects(
      t.deps.database.db.transaction().execute(async (trx) => {
        // As an order's transaction would: the order, its invoice, then a refusal.
        const order = await trx
          .insertInto('orders')
          .values({
            public_id: 'order_rolledback000000',
            account_id: account.id,
            plan_id: planId,
            kind: 'new',
            status: 'paid',
            amount_paise: 29_900n,
            config: '{}',
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const inv = await issueInvoice(trx, t.config.invoicing, {
          accountId: account.id,
          orderId: order.id,
          amountPaise: 29_900,
          description: 'rolled back',
          at: clock.now(),
        });
        assert.equal(serialOf(inv.number), before.length + 1);
        throw new Error('refused after the invoice');
      }),
      /refused after the invoice/,
    );
    assert.deepEqual(await allNumbers(), before);
  });

  test('20 orders at once take 20 consecutive numbers, none twice', async () => {
    const before = await allNumbers();
    const customers = await Promise.all(Array.from({ length: 20 }, () => customer('1000')));
    const answers = await Promise.all(customers.map((c) => place(c.browser)));
    for (const res of answers) assert.equal(res.statusCode, 201, res.body);
    const after = await allNumbers();
    assert.equal(after.length, before.length + 20);
    assert.equal(new Set(after).size, after.length, 'no duplicate');
    assert.deepEqual(
      after.map(serialOf),
      after.map((_, i) => i + 1),
      'serials 1…n with no gap',
    );
  });

  test('the database refuses to change or delete an invoice', async () => {
    const db = t.deps.database.db;
    await assert.rejects(db.updateTable('invoices').set({ fy: '9999' }).execute(), /immutable/);
    await assert.rejects(db.deleteFrom('invoices').execute(), /immutable/);
  });
});

describe('renewals', () => {
  test('a renewal bought from the wallet, and one paid later when money arrives, each get an invoice', async () => {
    const { browser, account } = await customer('799');
    const placed = await place(browser);
    assert.equal(placed.statusCode, 201, placed.body);
    const serviceId = placed.json().service.id as number;
    const db = t.deps.database.db;
    // As if provisioned: active, paid for the month starting now.
    const periodEnd = new Date(clock.now().getTime() + 30 * 86_400_000);
    await db
      .updateTable('services')
      .set({ status: 'active', period_end: periodEnd })
      .where('id', '=', serviceId)
      .execute();

    // Renew with nothing owed buys the next month: its own order and invoice.
    await t.deps.wallet.credit(account.id, '799', 'top-up');
    const renewed = await browser.post('/api/v1/client/services/', { id: serviceId, action: 'renew' }, { csrf: true });
    assert.equal(renewed.statusCode, 200, renewed.body);
    let list = await invoicesOf(browser);
    assert.equal(list.length, 2);
    assert.equal(list[0]?.order_id, renewed.json().order.id);

    // The cycle bills the month after with an empty wallet: an unpaid order, no invoice yet.
    const service = await db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
    const at = new Date((service.period_end as Date).getTime() + 3_600_000);
    const billed = await t.deps.billing.run({ at, accountId: account.id });
    assert.ok(
      billed.some((a) => a.service === serviceId && a.action === 'unpaid'),
      JSON.stringify(billed),
    );
    assert.equal((await invoicesOf(browser)).length, 2);
    const unpaid = await db
      .selectFrom('orders')
      .select('id')
      .where('service_id', '=', serviceId)
      .where('status', '=', 'unpaid')
      .executeTakeFirstOrThrow();

    // Money arriving pays it: the invoice is issued then.
    await t.deps.wallet.credit(account.id, '799', 'top-up');
    list = await invoicesOf(browser);
    assert.equal(list.length, 3);
    assert.equal(list[0]?.order_id, unpaid.id);
    assert.equal(list[0]?.total, '799.00');
    const orderIds = list.map((i) => i.order_id);
    assert.equal(new Set(orderIds).size, 3, 'one invoice per order');
  });
});

describe('reading invoices', () => {
  test('the token surface lists orders with their invoice fields; an unpaid order has nulls', async () => {
    const api = await apiClient(t, ['billing.read'], '0');
    const none = await api.call('GET', '/api/v1/invoices');
    assert.equal(none.statusCode, 200, none.body);
    assert.deepEqual(none.json().invoices, []);

    const { browser, account } = await customer('1000');
    assert.equal((await place(browser)).statusCode, 201);
    const token = await apiClient(t, ['billing.read'], '0', account.id);
    const res = await token.call('GET', '/api/v1/invoices');
    assert.equal(res.statusCode, 200, res.body);
    const [row] = res.json().invoices;
    assert.equal(row.status, 'paid');
    assert.equal(row.amount, '799.00');
    assert.match(row.public_id, /^order_/);
    assert.match(row.number, new RegExp(`^HP/${FY}/\\d{6}$`));
    assert.equal(typeof row.issued_at, 'string');
    assert.equal(row.taxable_value, '677.12');
    assert.deepEqual(row.tax, { cgst: '60.94', sgst: '60.94', igst: '0.00', rate: '18.00' });
    assert.equal(row.total, '799.00');
    const [summary] = await invoicesOf(browser);
    assert.equal(row.pdf_url, `${t.config.publicUrl}/api/v1/invoices/${summary?.id}/pdf`);
  });

  test("another account cannot read an invoice: 404 not_owner, and it is not in the other's list", async () => {
    const owner = await customer('1000');
    assert.equal((await place(owner.browser)).statusCode, 201);
    const [mine] = await invoicesOf(owner.browser);
    const stranger = await customer('0');
    const res = await stranger.browser.get(`${INVOICES}?id=${mine?.id}`);
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().code, 'not_owner');
    assert.deepEqual(await invoicesOf(stranger.browser), []);
    const missing = await owner.browser.get(`${INVOICES}?id=999999`);
    assert.equal(missing.statusCode, 404);
  });
});
