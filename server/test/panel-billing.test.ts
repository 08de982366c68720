// ci: one engine (the browser journeys test the panel; the API paths they use run on both engines in the other files)
// The money pages of the client panel, used as a customer uses them (issue 35): real headless
// Chromium against the server on a real socket, with the Razorpay emulator as the payment
// gateway (its Hosted Checkout page, its signed hand-back, its webhooks to the server). At 1280
// px and at 390 px a customer sets billing details (a GSTIN of another state first, refused
// beside its field), pays ₹500 online and sees it in the balance at once, has one payment
// declined and cancels another (nothing credited), then orders a plan and finds its tax invoice
// in the list and in detail with its PDF link. Every page is checked by axe-core in both themes
// and saved as screenshots (test-results/panel/).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { gstinCheckCharacter } from '../src/core/billing/gst.ts';
import {
  audit,
  chromiumMissing,
  DESKTOP,
  launchChromium,
  openPanel,
  type PanelPage,
  PHONE,
  type Viewport,
} from './support/chromium.ts';
import { createAccount } from './support/factories.ts';
import { freePort } from './support/process.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const skip = chromiumMissing();
let u: UpstreamApp;
let rzp: RazorpayEmulator;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  rzp = await startRazorpayEmulator({ webhookUrl: `${base}/api/v1/webhooks/razorpay` });
  u = await createUpstreamApp({
    env: {
      PUBLIC_URL: base,
      RAZORPAY_KEY_ID: rzp.keyId,
      RAZORPAY_KEY_SECRET: rzp.keySecret,
      RAZORPAY_WEBHOOK_SECRET: rzp.webhookSecret,
      RAZORPAY_API_URL: rzp.url,
    },
  });
  await u.t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await u?.close();
  await rzp?.stop();
});

/** Where a job runs (provisioning): generous, never a measure. */
const JOB_WAIT = 60_000;
const db = () => u.t.deps.database.db;
const inr = (rupees: number | string) =>
  new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR', minimumFractionDigits: 2 }).format(
    Number(rupees),
  );
const gstin = (state: string) => {
  const first14 = `${state}AAPFU0939F1Z`;
  return first14 + gstinCheckCharacter(first14);
};

async function signIn(panel: PanelPage, username: string, password: string) {
  const { page } = panel;
  await page.goto('/login');
  await page.getByLabel('Email or username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/');
}

/** The main navigation's link (behind the Menu button at 390 px). */
async function navTo(panel: PanelPage, name: string) {
  const { page } = panel;
  if (panel.viewport === PHONE) await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

/** Starts an online payment of `amount` from the wallet and presses `button` on the gateway's page. */
async function payOnline(page: Page, amount: string, button: 'Pay' | 'Fail' | 'Cancel') {
  await page.goto('/wallet');
  const field = page.getByLabel('Amount to add (₹)');
  await field.fill(amount);
  // The keyboard is enough: Enter in the field submits.
  await field.press('Enter');
  await page.waitForURL((url) => url.origin === rzp.url && url.pathname === '/v1/checkout/embedded');
  await page.getByRole('heading', { name: 'Razorpay Checkout (emulated)' }).waitFor();
  await page.getByRole('button', { name: button, exact: true }).click();
  await page.waitForURL((url) => url.origin === base && url.pathname === '/wallet', { timeout: JOB_WAIT });
}

for (const viewport of [DESKTOP, PHONE] as Viewport[]) {
  describe(`billing, online payments and invoices at ${viewport.width} px`, { skip: skip ?? false }, () => {
    let panel: PanelPage;
    let accountId = 0;
    before(async () => {
      panel = await openPanel(browser, base, viewport);
      const { account, password } = await createAccount(u.t, { name: `Asha ${viewport.name}` });
      accountId = account.id;
      await signIn(panel, account.username, password);
    });
    after(() => panel?.context.close());

    test('billing details: a GSTIN of another state is refused beside its field; then saved', async () => {
      const { page } = panel;
      await navTo(panel, 'Account');
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Billing details' }).click();
      await page.waitForURL('**/account/billing');
      await page.getByRole('heading', { name: 'Billing details' }).waitFor();
      await page.getByText('You have not set billing details yet.').waitFor();
      await audit(panel, 'billing-empty');

      await page.getByLabel('Legal name').fill('Asha Traders LLP');
      await page.getByLabel('Address line 1').fill('12, MG Road');
      await page.getByLabel('City').fill('Pune');
      await page.getByLabel('PIN code').fill('411001');
      await page.getByLabel('State').selectOption({ label: 'Maharashtra' });
      await page.getByLabel('GSTIN (optional)').fill(gstin('29').toLowerCase());
      await page.getByRole('button', { name: 'Save billing details' }).click();
      const gstinField = page.locator('.field.has-error', { hasText: 'GSTIN' });
      await gstinField
        .getByText('GSTIN starts with state code 29 (Karnataka), but the state is 27 (Maharashtra).')
        .waitFor();
      assert.equal(await page.locator('.field.has-error').count(), 1, 'only the GSTIN is refused');
      // The refused field has the focus, so the keyboard goes on from there.
      assert.equal(await page.evaluate("document.activeElement?.getAttribute('name')"), 'gstin');
      await audit(panel, 'billing-error');
      assert.equal(
        await db()
          .selectFrom('billing_profiles')
          .select('account_id')
          .where('account_id', '=', accountId)
          .execute()
          .then((rows) => rows.length),
        0,
        'nothing saved',
      );

      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(gstin('27'));
      await page.keyboard.press('Enter');
      await page.getByText('Billing details saved.').waitFor();
      const saved = page.getByRole('region', { name: 'On your invoices' });
      await saved.getByText(gstin('27')).waitFor();
      await saved.getByText('Maharashtra (state code 27)').waitFor();
      await audit(panel, 'billing-saved');
      const row = await db()
        .selectFrom('billing_profiles')
        .selectAll()
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      assert.equal(row.gstin, gstin('27'));
      assert.equal(row.state_code, '27');
      panel.assertClean();
    });

    test('invoices before any order: an empty page that says how one comes', async () => {
      const { page } = panel;
      await navTo(panel, 'Invoices');
      await page.waitForURL('**/invoices');
      await page.getByRole('heading', { name: 'No invoices yet' }).waitFor();
      await page.getByRole('link', { name: 'Order a service' }).waitFor();
      await audit(panel, 'invoices-empty');
      panel.assertClean();
    });

    test('pays ₹500 online through the checkout and sees it in the balance at once', async () => {
      const { page } = panel;
      await page.goto('/wallet');
      await page.getByRole('heading', { name: 'Pay online (UPI, card, netbanking)' }).waitFor();
      await audit(panel, 'wallet-online');
      await payOnline(page, '500', 'Pay');
      const outcome = page.locator('.online-outcome');
      await outcome.getByRole('heading', { name: 'Payment received' }).waitFor();
      await outcome.getByText(`${inr(500)} was added to your wallet. Your balance is now ${inr(500)}.`).waitFor();
      await page.locator('.balance-value', { hasText: inr(500) }).waitFor();
      const deposit = page.getByRole('article', { name: `Deposit of ${inr(500)}, approved` });
      await deposit.getByText('Paid online').waitFor();
      // The signed fields are not left in the address bar or the history entry.
      assert.equal(new URL(page.url()).search, '');
      await audit(panel, 'wallet-paid-online');
      assert.equal(BigInt(await u.t.deps.wallet.balance(accountId)), 50_000n);
      panel.assertClean();
    });

    test('a declined payment and a cancelled one: a clear message, nothing credited', async () => {
      const { page } = panel;
      await payOnline(page, '200', 'Fail');
      const outcome = page.locator('.online-outcome');
      await outcome.getByRole('heading', { name: 'The payment did not go through' }).waitFor();
      await outcome.getByText(/Nothing was added to your wallet\./).waitFor();
      await page.locator('.balance-value', { hasText: inr(500) }).waitFor();
      // The gateway's payment.failed webhook marks the deposit failed (the list checks again by itself).
      await page
        .getByRole('article', { name: `Deposit of ${inr(200)}, rejected` })
        .getByText(/The payment failed/)
        .waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'wallet-payment-failed');

      await payOnline(page, '300', 'Cancel');
      await outcome.getByRole('heading', { name: 'Payment cancelled' }).waitFor();
      await page
        .getByRole('article', { name: `Deposit of ${inr(300)}, pending` })
        .getByText('not paid')
        .waitFor();
      await page.locator('.balance-value', { hasText: inr(500) }).waitFor();
      await audit(panel, 'wallet-payment-cancelled');
      assert.equal(BigInt(await u.t.deps.wallet.balance(accountId)), 50_000n, 'only the ₹500 was credited');
      const deposits = await db()
        .selectFrom('deposits')
        .select(['amount_paise', 'status'])
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        deposits.map((d) => [String(d.amount_paise), d.status]),
        [
          ['50000', 'approved'],
          ['20000', 'rejected'],
          ['30000', 'pending'],
        ],
      );
      panel.assertClean();
    });

    test('orders a plan and finds its tax invoice in the list and in detail, with its PDF link', async () => {
      const { page } = panel;
      await page.goto('/order/vps');
      await page.getByRole('radio', { name: /^Cloud VPS 1 GB/ }).check();
      await page.getByRole('heading', { name: '2. Set it up' }).waitFor();
      await page.getByRole('button', { name: /^Pay ₹[\d,.]+ from your wallet$/ }).click();
      await page.waitForURL(/\/services\/\d+$/, { timeout: JOB_WAIT });
      await page
        .locator('.page-header .status')
        .first()
        .filter({ hasText: /^active$/ })
        .waitFor({ timeout: JOB_WAIT });
      const invoice = await db()
        .selectFrom('invoices')
        .selectAll()
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      const total = Number(invoice.total_paise) / 100;

      await navTo(panel, 'Invoices');
      await page.waitForURL('**/invoices');
      // The table at 1280 px, the list at 390 px: whichever is shown names the invoice.
      const link = page.getByRole('link', { name: invoice.number, exact: true }).filter({ visible: true });
      await link.waitFor();
      const shown = page.locator(viewport === PHONE ? '.inv-list li' : '.inv-table tr', { hasText: invoice.number });
      await shown.getByText(/Cloud VPS 1 GB/).waitFor();
      await shown.getByText(inr(total)).first().waitFor();
      await audit(panel, 'invoices');

      await link.click();
      await page.waitForURL(`**/invoices/${invoice.id}`);
      await page.getByRole('heading', { name: `Tax invoice ${invoice.number}`, level: 1 }).waitFor();
      const buyer = page.getByRole('region', { name: 'To (buyer)' });
      await buyer.getByText('Asha Traders LLP').waitFor();
      await buyer.getByText(gstin('27')).waitFor();
      await page.getByText('B2B: the buyer is registered for GST').waitFor();
      // A Maharashtra buyer of a Maharashtra seller: CGST + SGST, 9 % each.
      await page.getByText('CGST @ 9%').waitFor();
      await page.getByText('SGST @ 9%').waitFor();
      await page.getByText(/^Rupees .* Only$/).waitFor();
      const pdf = page.getByRole('link', { name: 'Download PDF' });
      assert.equal(await pdf.getAttribute('href'), `/api/v1/client/invoices/?id=${invoice.id}&format=pdf`);
      await audit(panel, 'invoice');

      await page.goto('/invoices/999999');
      await page.getByRole('heading', { name: 'Invoice not found' }).waitFor();
      await audit(panel, 'invoice-not-found');
      panel.assertClean();
    });
  });
}
