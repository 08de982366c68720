// ci: one engine (the staff console's pages in Chromium; their API runs on both engines in staff-ops and staff-roles)
// The staff console's pages (CONTRACT §14, issue 38) in real headless Chromium, one browser for
// the file and one signed-in context per role: an admin lands on the dashboard (a failed job, a
// node down, a deposit waiting), searches an account and credits it with a reason (the API's
// refusal of a missing reason shown in the dialog first; the ledger shows the credit) and records a
// refund paid outside (the balance after in the dialog; over the balance refused), finds a
// service and suspends it, drains a node, edits a plan's price, previews the billing cycle and
// adds up a month for GSTR-1; a support member sees none of the Nodes, Catalog and Billing links,
// no money actions on an account, and the 403 page at /staff/nodes. Every page is checked by
// axe-core at 1280 px, must not scroll sideways at 1280 or 390 px, and is saved as screenshots
// at both widths (test-results/panel/).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser as Chromium } from 'playwright-core';
import { issueInvoice } from '../src/core/billing/invoices.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import {
  audit,
  chromiumMissing,
  DESKTOP,
  launchChromium,
  openPanel,
  type PanelPage,
  PHONE,
  SCREENSHOTS,
} from './support/chromium.ts';
import { createAccount, freshIp } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { type SignedInStaff, signedInStaff } from './support/staff.ts';

const skip = chromiumMissing();
const clock = new ManualClock();
let t: TestApp;
let chromium: Chromium;
let base: string;
const db = () => t.deps.database.db;
/** Refusals the pages expect and show (422 without a reason, the support member's 403). */
const REFUSALS = [/status of 4\d\d/];

/** A browser context signed in as `staff` (the session made through the API, its cookie handed over). */
async function consoleOf(staff: SignedInStaff): Promise<PanelPage> {
  const panel = await openPanel(chromium, base, DESKTOP);
  await panel.context.addCookies([
    { name: 'STAFFSESSID', value: staff.browser.sessionId as string, url: base, httpOnly: true, sameSite: 'Strict' },
  ]);
  return panel;
}

/** What waitForFunction's page functions see (this file is compiled without the DOM's types). */
type Page$ = { document: { querySelectorAll(s: string): { length: number } } };

const SIDEWAYS = 'document.documentElement.scrollWidth - document.documentElement.clientWidth';

/** axe-core and screenshots at 1280 px (audit), then a screenshot at 390 px; neither width scrolls sideways. */
async function look(panel: PanelPage, name: string): Promise<void> {
  const { page } = panel;
  await audit(panel, name);
  assert.equal(await page.evaluate(SIDEWAYS), 0, `${name} scrolls sideways at ${DESKTOP.width} px`);
  await page.setViewportSize({ width: PHONE.width, height: PHONE.height });
  try {
    assert.equal(await page.evaluate(SIDEWAYS), 0, `${name} scrolls sideways at ${PHONE.width} px`);
    await page.screenshot({ path: join(SCREENSHOTS, `${PHONE.name}-light-${name}.png`), fullPage: true });
  } finally {
    await page.setViewportSize({ width: DESKTOP.width, height: DESKTOP.height });
  }
}

/** The text of the element that has the focus (what a keyboard user is on). */
const focused = (panel: PanelPage) => panel.page.evaluate('document.activeElement?.textContent ?? ""');

before(async () => {
  if (skip) return;
  t = await createTestApp({ overrides: { clock: clock.now } });
  await seedDemoCatalog(db());
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  chromium = await launchChromium();
});
after(async () => {
  await chromium?.close();
  await t?.close();
});

describe('the staff console pages', { skip: skip ?? false }, () => {
  let admin: PanelPage;
  let customer: Awaited<ReturnType<typeof createAccount>>['account'];
  let serviceId: number;
  let nodeId: number;
  const label = 'pages-web-1';

  before(async () => {
    customer = (await createAccount(t, { name: 'Meera Pages' })).account;
    const other = (await createAccount(t, { name: 'Kabir Other' })).account;
    const node = await t.deps.nodes.add({
      name: 'mum-pages-1',
      kind: 'proxmox',
      locationCode: 'mum1',
      endpoint: 'https://127.0.0.1:18301',
      credentials: { token_id: 'root@pam!t', token_secret: 'x' },
      settings: { node: 'pve' },
      capacity: 8,
    });
    nodeId = node.id;
    await t.deps.nodes.setHealth(node.id, 'down', 'connect ECONNREFUSED 127.0.0.1:18301');
    const plan = await db().selectFrom('plans').selectAll().where('label', '=', 'vps-2c-4g').executeTakeFirstOrThrow();
    const location = await db()
      .selectFrom('locations')
      .select('id')
      .where('code', '=', 'mum1')
      .executeTakeFirstOrThrow();
    const aService = (accountId: number, name: string) =>
      db()
        .insertInto('services')
        .values({
          account_id: accountId,
          plan_id: plan.id,
          order_id: null,
          location_id: location.id,
          node_id: node.id,
          price_paise: plan.price_paise,
          type: 'vps',
          label: name,
          status: 'active',
          config: JSON.stringify({}),
          external: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    await aService(other.id, 'kabir-db-1');
    const service = await aService(customer.id, label);
    serviceId = service.id;
    await db()
      .insertInto('jobs')
      .values({
        account_id: customer.id,
        service_id: service.id,
        type: 'power',
        status: 'failed',
        error_code: 'node_unreachable',
        error_message: 'The node did not answer.',
        params: JSON.stringify({ error_detail: 'connect ECONNREFUSED 127.0.0.1:18301' }),
        finished_at: clock.now(),
      })
      .execute();
    await db()
      .insertInto('deposits')
      .values({
        public_id: `dep_pages_${customer.id}`,
        account_id: customer.id,
        amount_paise: 75_000n,
        method: 'manual',
        txn_ref: '612345678901',
        screenshot_file: 'proof.png',
        screenshot_type: 'png',
        screenshot_bytes: 68,
        status: 'pending',
      })
      .execute();
    // A paid order's tax invoice, and an online deposit (this app has no Razorpay account).
    const order = await db()
      .insertInto('orders')
      .values({
        public_id: `ord_pages_${customer.id}`,
        account_id: customer.id,
        plan_id: plan.id,
        service_id: service.id,
        kind: 'new',
        status: 'paid',
        amount_paise: 79_900n,
        config: JSON.stringify({}),
        paid_at: clock.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db()
      .transaction()
      .execute((trx) =>
        issueInvoice(trx, t.deps.config.invoicing, {
          accountId: customer.id,
          orderId: order.id,
          amountPaise: 79_900n,
          description: `VPS ${label}, one month`,
          at: clock.now(),
        }),
      );
    await db()
      .insertInto('deposits')
      .values({
        public_id: `dep_online_${customer.id}`,
        account_id: customer.id,
        amount_paise: 50_000n,
        method: 'razorpay',
        txn_ref: null,
        gateway_order_id: `order_pages${customer.id}`,
        gateway_payment_id: `pay_pages${customer.id}`,
        status: 'approved',
        reviewed_by: 'razorpay',
        // Paid two days ago: not in today's money on the dashboard.
        created_at: new Date(clock.now().getTime() - 2 * 86_400_000),
        reviewed_at: new Date(clock.now().getTime() - 2 * 86_400_000),
      })
      .execute();
    admin = await consoleOf(await signedInStaff(t, clock, 'admin', freshIp()));
  });
  after(() => admin?.context.close());

  test('an admin lands on the dashboard and finds every page in the navigation', async () => {
    const { page } = admin;
    await page.goto('/staff');
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Staff' });
    assert.deepEqual(await nav.getByRole('link').allTextContents(), [
      'Dashboard',
      'Accounts',
      'Services',
      'Deposits',
      'Billing',
      'Invoices',
      'Refunds',
      'Reconciliation',
      'Nodes',
      'Catalog',
      'Locations',
      'OS',
      'Settings',
      'Staff',
      'Audit trail',
    ]);
    const card = (name: string) => page.getByRole('region', { name }).innerText();
    assert.match(await card('Jobs failed today'), /^Jobs failed today\s+1\s+1 node in trouble/);
    assert.match(await card('Deposits waiting'), /^Deposits waiting\s+1\s+the oldest has waited \d+ (s|min|h|d)\b/);
    assert.match(await card('Money in today'), /^Money in today\s+₹0\.00\s/);
    await page.getByRole('row').filter({ hasText: 'mum-pages-1' }).filter({ hasText: 'ECONNREFUSED' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'The node did not answer.' }).waitFor();
    await look(admin, 'staff-dashboard');
  });

  test('accounts: search, the account page, a credit with its reason, the ledger shows it', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
    const search = page.getByLabel('E-mail, username, name or id');
    await search.fill('meera pages');
    await search.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('q') === 'meera pages');
    const link = page.getByRole('link', { name: customer.email });
    await link.waitFor();
    await page.waitForFunction(
      () => (globalThis as unknown as Page$).document.querySelectorAll('tbody tr').length === 1,
    );
    await look(admin, 'staff-accounts');
    await link.click();
    await page.getByRole('heading', { name: customer.email, level: 1 }).waitFor();

    // The dialog takes the focus; the API's refusal (no reason) is shown in it, beside the field.
    const credit = page.getByRole('button', { name: 'Credit the wallet' });
    await credit.click();
    const dialog = page.getByRole('dialog', { name: 'Credit the wallet?' });
    await dialog.waitFor();
    assert.equal(await page.evaluate('document.activeElement?.closest("dialog") !== null'), true);
    await dialog.getByLabel('Amount in rupees').fill('250.50');
    await dialog.getByLabel('Amount in rupees').press('Enter');
    await dialog.getByText('say why (at least 3 characters; kept in the audit log)').waitFor();
    await look(admin, 'staff-account-credit');
    await dialog.getByLabel('Reason (kept in the audit log)').fill('goodwill for the outage');
    await dialog.getByLabel('Reason (kept in the audit log)').press('Enter');
    await page.getByRole('status').filter({ hasText: '₹250.50 added to the wallet.' }).waitFor();
    assert.equal(await dialog.count(), 0);
    assert.equal(await focused(admin), 'Credit the wallet', 'the focus is back on the button that opened it');
    const row = page
      .getByRole('table', { name: /wallet movements/ })
      .getByRole('row')
      .nth(1);
    assert.match((await row.textContent()) ?? '', /250\.50.*goodwill for the outage/);
    const audited = await db()
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'wallet.credit')
      .where('target_id', '=', String(customer.id))
      .execute();
    assert.equal(audited.length, 1);
    assert.equal(audited[0]?.reason, 'goodwill for the outage');

    // Escape closes a dialog without doing anything, the focus back where it was.
    await page.getByRole('button', { name: 'Debit the wallet' }).click();
    await page.getByRole('dialog', { name: 'Debit the wallet?' }).waitFor();
    await page.keyboard.press('Escape');
    assert.equal(await page.getByRole('dialog').count(), 0);
    assert.equal(await focused(admin), 'Debit the wallet');

    // A refund paid outside: the dialog shows the balance after; over the balance the API refuses, saying it.
    await page.getByRole('button', { name: 'Record refund paid outside' }).click();
    const refund = page.getByRole('dialog', { name: 'Record refund paid outside?' });
    await refund.waitFor();
    await refund.getByLabel('How it was paid back (bank or UPI reference)').fill('UPI ref 612345678901');
    await refund.getByLabel('Amount in rupees').fill('300');
    await refund.getByText('That is more than the wallet holds.').waitFor();
    await refund.getByLabel('Amount in rupees').press('Enter');
    await refund.getByRole('alert').filter({ hasText: 'The wallet holds ₹250.50; this needs ₹300.00.' }).waitFor();
    await refund.getByLabel('Amount in rupees').fill('50.50');
    await refund.getByText('Balance after: ₹200.00').waitFor();
    assert.equal(await refund.getByRole('alert').count(), 0, 'the refusal goes once the amount is edited');
    await look(admin, 'staff-account-refund');
    await refund.getByLabel('Amount in rupees').press('Enter');
    await page.getByRole('status').filter({ hasText: '₹50.50 recorded as paid back outside the platform.' }).waitFor();
    const movements = page.getByRole('table', { name: /wallet movements/ }).getByRole('row');
    await movements.filter({ hasText: 'UPI ref 612345678901' }).waitFor(); // the page's refetch
    const refundRow = movements.nth(1);
    assert.match((await refundRow.textContent()) ?? '', /withdrawal.*50\.50.*200\.00.*UPI ref 612345678901/);
    await look(admin, 'staff-account');
  });

  test('services: search, the service page, suspend with a reason', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Services' }).click();
    await page.getByRole('heading', { name: 'Services', level: 1 }).waitFor();
    const search = page.getByLabel("Label, owner's e-mail or id");
    await search.fill('PAGES-WEB');
    await search.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('q') === 'PAGES-WEB');
    await page.waitForFunction(
      () => (globalThis as unknown as Page$).document.querySelectorAll('tbody tr').length === 1,
    );
    const link = page.getByRole('link', { name: label });
    await link.waitFor();
    await look(admin, 'staff-services');
    await link.click();
    await page.getByRole('heading', { name: label, level: 1 }).waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: 'connect ECONNREFUSED' })
      .getByRole('button', { name: /Retry/ })
      .waitFor();

    await page.getByRole('button', { name: 'Suspend' }).click();
    const dialog = page.getByRole('dialog', { name: `Suspend ${label}?` });
    await dialog.getByLabel('Reason (kept in the audit log)').fill('abuse report 4411');
    await dialog.getByLabel('Reason (kept in the audit log)').press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /suspend started \(job \d+\)/ })
      .waitFor();
    await page
      .getByRole('row')
      .filter({ hasText: /suspend/ })
      .filter({ hasText: 'queued' })
      .waitFor();
    const job = await db()
      .selectFrom('jobs')
      .select(['type', 'status'])
      .where('service_id', '=', serviceId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    assert.deepEqual(job, { type: 'suspend', status: 'queued' });
    await look(admin, 'staff-service');
  });

  test('nodes: drain one with a reason', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Nodes' }).click();
    await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'mum-pages-1' });
    assert.match((await row.textContent()) ?? '', /down.*2 \/ 8.*open.*ECONNREFUSED/);
    await row.getByRole('button', { name: 'Drain mum-pages-1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Drain mum-pages-1?' });
    await dialog.getByLabel('Reason (kept in the audit log)').fill('disk replacement');
    await dialog.getByRole('button', { name: 'Drain' }).click();
    await page.getByRole('status').filter({ hasText: 'Drained' }).waitFor();
    await row.getByRole('button', { name: 'Undrain mum-pages-1' }).waitFor();
    assert.match((await row.textContent()) ?? '', /drained/);
    const node = await db().selectFrom('nodes').select('active').where('id', '=', nodeId).executeTakeFirstOrThrow();
    assert.equal(node.active, false);
    await look(admin, 'staff-nodes');
  });

  test("catalog: a plan's new price", async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Catalog' }).click();
    await page.getByRole('heading', { name: 'Catalog', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Edit vps-2c-4g' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit vps-2c-4g' });
    const price = dialog.getByLabel('Price a month, in rupees');
    await price.fill('1555.00');
    await price.press('Enter');
    await page.getByRole('status').filter({ hasText: 'vps-2c-4g: ₹1,555.00 a month, listed.' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'vps-2c-4g' }).filter({ hasText: '₹1,555.00' }).waitFor();
    const plan = await db()
      .selectFrom('plans')
      .select('price_paise')
      .where('label', '=', 'vps-2c-4g')
      .executeTakeFirstOrThrow();
    assert.equal(Number(plan.price_paise), 155_500);
    await look(admin, 'staff-catalog');
  });

  test('billing: the preview of the cycle, then a month adds up for GSTR-1', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
    const run = page.getByRole('button', { name: 'Run the cycle now' });
    assert.equal(await run.isDisabled(), true, 'no run before a preview');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page
      .getByText(/^Preview at /)
      .first()
      .waitFor();
    assert.equal(await run.isDisabled(), false);
    assert.equal(
      await db().selectFrom('audit_log').select('id').where('action', '=', 'billing.run').executeTakeFirst(),
      undefined,
      'a preview is not a run',
    );
    await page.getByRole('button', { name: 'Show totals' }).click();
    await page.getByRole('table', { name: /^Totals of \d{4}-\d{2}$/ }).waitFor();
    const csv = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    assert.match(csv ?? '', /^\/api\/v1\/staff\/invoices\/export\?month=\d{4}-\d{2}&format=csv$/);
    await look(admin, 'staff-billing');
    admin.assertClean(REFUSALS);
  });

  test('invoices: search, the invoice, a credit note from its page', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
    const search = page.getByLabel("Number, customer's e-mail or id");
    await search.fill(customer.email);
    await search.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('q') === customer.email);
    const link = page.getByRole('link', { name: /^HP\/\d{4}\/\d{6}$/ });
    await link.waitFor();
    await look(admin, 'staff-invoices');
    const number = (await link.textContent()) ?? '';
    await link.click();
    await page.getByRole('heading', { name: number, level: 1 }).waitFor();
    const pdf = await page.getByRole('link', { name: 'Download the PDF' }).getAttribute('href');
    assert.match(pdf ?? '', /^\/api\/v1\/staff\/invoices\/\d+\/pdf$/);
    await page.getByRole('button', { name: 'Issue a credit note' }).click();
    const dialog = page.getByRole('dialog', { name: `Credit ${number}?` });
    await dialog.getByLabel(/^Amount in rupees/).fill('100');
    const reason = dialog.getByLabel(/^Reason/);
    await reason.fill('goodwill for the outage');
    await reason.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /Credit note HPC\/\d{4}\/\d{6}: ₹100\.00 back in the wallet/ })
      .waitFor();
    await page
      .getByRole('table', { name: /Credit notes against this invoice/ })
      .getByRole('row')
      .nth(1)
      .waitFor();
    assert.equal(
      (await db().selectFrom('audit_log').select('id').where('action', '=', 'invoice.credit').execute()).length,
      1,
    );
    await look(admin, 'staff-invoice');
  });

  test('refunds: the online deposits; the API’s refusal shown in the dialog', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Refunds' }).click();
    await page.getByRole('heading', { name: 'Refunds', level: 1 }).waitFor();
    await page.getByRole('button', { name: `Refund dep_online_${customer.id}` }).click();
    const dialog = page.getByRole('dialog', { name: `Refund dep_online_${customer.id}?` });
    const reason = dialog.getByLabel(/^Reason/);
    await reason.fill('customer asked');
    await reason.press('Enter');
    await dialog.getByText('Razorpay is not configured on this server').waitFor();
    await look(admin, 'staff-refund-refused');
    await page.keyboard.press('Escape');
    assert.equal(await page.getByRole('dialog').count(), 0);
    await look(admin, 'staff-refunds');
  });

  test('reconciliation: a statement previewed, then its deposit approved', async () => {
    const { page } = admin;
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Reconciliation' }).click();
    await page.getByRole('heading', { name: 'Reconciliation', level: 1 }).waitFor();
    // Counts are worded for their number: none yet ("0 deposits"), then one ("1 deposit").
    const approve = page.getByRole('button', { name: /^Approve \d+ deposits?$/ });
    assert.equal(await approve.textContent(), 'Approve 0 deposits');
    assert.equal(await approve.isDisabled(), true, 'nothing to approve before a preview');
    const today = new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);
    const csv = [
      'Transaction Date,UTR,Amount,Payer VPA,Remarks',
      `${today} 10:00:00,612345678901,750.00,meera@okhdfc,wallet`,
    ];
    await page.getByLabel('Statement (CSV)').setInputFiles({
      name: 'upi-today.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv.join('\n')),
    });
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'Preview', level: 2 }).waitFor();
    await page.getByRole('row').filter({ hasText: '612345678901' }).filter({ hasText: 'would approve' }).waitFor();
    await look(admin, 'staff-reconcile-preview');
    assert.equal(await approve.textContent(), 'Approve 1 deposit');
    await approve.click();
    const dialog = page.getByRole('dialog', { name: 'Approve 1 deposit?', exact: true });
    await dialog.getByRole('button', { name: 'Approve' }).press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /^1 deposit approved\. / })
      .waitFor();
    const deposit = await db()
      .selectFrom('deposits')
      .select('status')
      .where('public_id', '=', `dep_pages_${customer.id}`)
      .executeTakeFirstOrThrow();
    assert.equal(deposit.status, 'approved');
    await look(admin, 'staff-reconcile');
  });

  test('locations and IP ranges, OS templates, settings', async () => {
    const { page } = admin;
    const nav = page.getByRole('navigation', { name: 'Staff' });
    await nav.getByRole('link', { name: 'Locations' }).click();
    await page.getByRole('heading', { name: 'Locations and IP ranges', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Add a range' }).click();
    const range = page.getByRole('dialog', { name: 'Add an IPv4 range' });
    await range.getByLabel('Location').selectOption('del1');
    await range.getByLabel(/^Range/).fill('100.64.20.0/29');
    await range.getByLabel(/^Range/).press('Enter');
    await page.getByRole('status').filter({ hasText: 'del1 100.64.20.0/29 (gateway 100.64.20.1): 5 added' }).waitFor();
    await page.getByRole('row').filter({ hasText: '100.64.20.0/29' }).waitFor();
    await look(admin, 'staff-locations');
    // Close a location to new orders, after the confirmation; then reopen it.
    await page.getByRole('button', { name: 'Close del1' }).click();
    const closing = page.getByRole('dialog', { name: 'Close del1 to new orders?' });
    await closing.getByLabel(/^Reason/).fill('power work');
    await closing.getByRole('button', { name: 'Close the location' }).click();
    await page.getByRole('status').filter({ hasText: 'del1 is closed: no new orders there.' }).waitFor();
    const del1 = () =>
      db().selectFrom('locations').select('active').where('code', '=', 'del1').executeTakeFirstOrThrow();
    assert.equal((await del1()).active, false);
    await page.getByRole('button', { name: 'Reopen del1' }).click();
    await page.getByRole('dialog', { name: 'Reopen del1?' }).getByRole('button', { name: 'Reopen it' }).click();
    await page.getByRole('status').filter({ hasText: 'del1 takes orders again.' }).waitFor();
    assert.equal((await del1()).active, true);

    await nav.getByRole('link', { name: 'OS', exact: true }).click();
    await page.getByRole('heading', { name: 'OS templates', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Add an OS template' }).click();
    const os = page.getByRole('dialog', { name: 'Add an OS template' });
    await os.getByRole('button', { name: 'Add the template' }).click();
    await os.getByText('must be 2–48 of a–z, 0–9, "." and "-" (e.g. ubuntu-24.04)').waitFor();
    await look(admin, 'staff-os-add');
    await page.keyboard.press('Escape');
    await look(admin, 'staff-os');
    // Retire a template, after the confirmation; then offer it again.
    await page.getByRole('button', { name: 'Retire rocky-9' }).click();
    const retiring = page.getByRole('dialog', { name: 'Retire rocky-9?' });
    await retiring.getByText('servers already installed from it keep running').waitFor();
    await look(admin, 'staff-os-retire');
    await retiring.getByRole('button', { name: 'Retire the template' }).click();
    await page.getByRole('status').filter({ hasText: 'rocky-9 is retired' }).waitFor();
    await page.getByRole('button', { name: 'Unretire rocky-9' }).click();
    await page
      .getByRole('dialog', { name: 'Offer rocky-9 again?' })
      .getByRole('button', { name: 'Offer it again' })
      .click();
    await page.getByRole('status').filter({ hasText: 'rocky-9 is offered again.' }).waitFor();
    assert.deepEqual(
      (
        await db()
          .selectFrom('audit_log')
          .select('action')
          .where('action', 'like', 'os.%retire')
          .orderBy('id')
          .execute()
      ).map((r) => r.action),
      ['os.retire', 'os.unretire'],
    );

    await nav.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    assert.match((await page.getByRole('row').filter({ hasText: 'SECRET_KEY' }).textContent()) ?? '', /\(secret\)/);
    await look(admin, 'staff-settings');
    admin.assertClean(REFUSALS);
  });

  test('a support member: no Nodes, Catalog or Billing links, no money actions, the 403 page at /staff/nodes', async () => {
    const support = await consoleOf(await signedInStaff(t, clock, 'support', freshIp()));
    try {
      const { page } = support;
      await page.goto('/staff');
      await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Staff' });
      assert.deepEqual(await nav.getByRole('link').allTextContents(), [
        'Dashboard',
        'Accounts',
        'Services',
        'Deposits',
      ]);
      assert.equal(
        await page.locator('a[href^="/staff/nodes"], a[href^="/staff/catalog"], a[href^="/staff/billing"]').count(),
        0,
      );
      await page.goto(`/staff/accounts/${customer.id}`);
      await page.getByRole('button', { name: 'Reset two-factor sign-in' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /Credit|Debit|Suspend|refund/ }).count(), 0);
      await page.goto('/staff/nodes');
      await page.getByRole('heading', { name: 'Your role may not use this' }).waitFor();
      assert.match((await page.locator('main').textContent()) ?? '', /for admin staff; you are signed in as support/);
      await look(support, 'staff-forbidden-nodes');
      support.assertClean(REFUSALS);
    } finally {
      await support.context.close();
    }
  });
});
