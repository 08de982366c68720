// ci: one engine (the staff console's browser journey; its API runs on both engines in the staff-* files)
// The staff console at /staff (CONTRACT §14, issue 38) in real headless Chromium: an admin and a
// billing member are added from the operator's CLI; the billing member opens the mailed
// invitation, chooses a password, signs in, enrols an authenticator app, lands on the dashboard,
// approves a customer's pending deposit from the queue (oldest first, the API's order) with the
// `a` key (the customer's wallet shows it at once, and the next deposit is selected), sees no link
// to the admin pages and the 403 page at /staff/audit; then the admin signs in with the code step
// and reads both actions in the audit trail. Every page is checked by axe-core at 1280 px (the
// queue at 390 px too) and saved as screenshots. The other pages: staff-pages.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import type { Browser as Chromium } from 'playwright-core';
import { runAdmin } from '../src/admin/run.ts';
import type { Browser } from './support/browser.ts';
import {
  audit,
  chromiumMissing,
  DESKTOP,
  launchChromium,
  openPanel,
  type PanelPage,
  PHONE,
} from './support/chromium.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { enrolInvited, inviteToken, totpCode } from './support/staff.ts';
import { multipart } from './support/uploads.ts';

const skip = chromiumMissing();
const clock = new ManualClock();
let t: TestApp;
let chromium: Chromium;
let base: string;
const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:console-test');
const db = () => t.deps.database.db;

/** A real PNG (a 240×160 two-tone picture), what a customer's UPI screenshot is to the browser. */
function png(width = 240, height = 160): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) row.set(y < height / 3 ? [20, 110, 60] : [235, 240, 245], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** What waitForFunction's page functions see (this file is compiled without the DOM's types). */
type Page$ = {
  document: {
    querySelectorAll(s: string): { length: number; [i: number]: { complete: boolean; naturalWidth: number } };
  };
};

let refs = 0;
async function reportDeposit(customer: Browser, amount: string): Promise<{ id: number; ref: string }> {
  refs += 1;
  const ref = `52${Date.now().toString().slice(-8)}${String(refs).padStart(2, '0')}`;
  const form = multipart({ amount, txn_ref: ref, csrf_token: customer.csrfToken as string }, [
    { field: 'screenshot', filename: 'upi.png', contentType: 'image/png', data: png() },
  ]);
  const res = await customer.request('POST', '/api/v1/client/wallet/deposit/', {
    body: form.body,
    headers: { 'content-type': form.contentType },
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await db().selectFrom('deposits').select('id').where('txn_ref', '=', ref).executeTakeFirstOrThrow();
  return { id: row.id, ref };
}

before(async () => {
  if (skip) return;
  t = await createTestApp({ overrides: { clock: clock.now } });
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  chromium = await launchChromium();
});
after(async () => {
  await chromium?.close();
  await t?.close();
});

describe('the staff console', { skip: skip ?? false }, () => {
  const adminEmail = 'asha.admin@staff.example.in';
  const billingEmail = 'ravi.billing@staff.example.in';
  const password = 'ravi-console-pass-42';
  let panel: PanelPage;
  let billingId: number;
  let first: { id: number; ref: string };
  let second: { id: number; ref: string };
  let customer: Browser;

  before(async () => {
    assert.equal((await admin('staff', 'add', adminEmail, '--role', 'admin', '--name', 'Asha')).exitCode, 0);
    assert.equal((await admin('staff', 'add', billingEmail, '--role', 'billing', '--name', 'Ravi')).exitCode, 0);
    billingId = (
      await db().selectFrom('staff').select('id').where('email', '=', billingEmail).executeTakeFirstOrThrow()
    ).id;
    customer = (await signedInBrowser(t, freshIp())).browser;
    first = await reportDeposit(customer, '1250.50');
    clock.advance(60);
    second = await reportDeposit(customer, '300.00');
    panel = await openPanel(chromium, base, DESKTOP, 'dark');
  });
  after(() => panel?.context.close());

  test('the billing member accepts the invitation, enrols TOTP and approves a deposit with `a`', async () => {
    const { page } = panel;
    await page.goto(`/staff/invite?token=${await inviteToken(t, billingEmail)}`);
    await page.getByRole('heading', { name: 'Choose your password' }).waitFor();
    await audit(panel, 'staff-invite');
    // The server's rules, said before asking it; then the confirmation.
    await page.getByLabel('New password').fill('short1');
    await page.getByLabel('Confirm password').fill('short1');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Use at least 12 characters.').waitFor();
    await page.getByLabel('New password').fill(password);
    await page.getByLabel('Confirm password').fill(`${password}x`);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('The two passwords differ.').waitFor();
    await page.getByLabel('Confirm password').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password set' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();

    await page.getByRole('heading', { name: 'Staff sign-in' }).waitFor();
    assert.equal(await page.getByLabel('Email').inputValue(), billingEmail);
    await audit(panel, 'staff-login');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('heading', { name: 'Enrol an authenticator app' }).waitFor();
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    await audit(panel, 'staff-enrol');
    const secret = ((await page.locator('code.secret').first().textContent()) ?? '').replace(/\s/g, '');
    assert.match(secret, /^[A-Z2-7]{16,}$/);
    await page.getByLabel('Code from the app').fill(totpCode(clock, secret));
    await page.getByRole('button', { name: 'Verify' }).click();

    // Signed in: the dashboard, then the queue from the navigation.
    await page.waitForURL((url) => url.pathname === '/staff');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('navigation', { name: 'Staff' }).getByRole('link', { name: 'Deposits' }).click();
    await page.getByRole('heading', { name: 'Deposits' }).waitFor();
    // The queue, oldest first, the first selected, its proof beside it.
    const items = page.getByRole('list', { name: 'Pending deposits, oldest first' }).getByRole('button');
    await items.nth(1).waitFor();
    assert.equal(await items.count(), 2);
    assert.match((await items.nth(0).textContent()) ?? '', /1,250\.50.*UTR/);
    await page.getByText(first.ref).first().waitFor();
    const proof = page.getByRole('img', { name: `Payment proof uploaded with deposit ${first.id}` });
    await proof.waitFor();
    // The proof image has loaded (the uploaded 240 px picture, served by GET deposit-proof).
    // (Functions, not strings: the console's CSP refuses eval.)
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as Page$).document.querySelectorAll('.staff-proof img')[0];
      return img?.complete === true && img.naturalWidth === 240;
    });
    await audit(panel, 'staff-deposits');

    // Only the pages the role may use: no link to the directory or the audit trail.
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
    ]);
    assert.equal(
      await page.locator('a[href^="/staff/audit"], a[href^="/staff/directory"], a[href^="/staff/nodes"]').count(),
      0,
    );

    // `j`/`k` move; `a` approves the selected one, and the next is selected.
    await page.keyboard.press('j');
    assert.equal(await items.nth(1).getAttribute('aria-current'), 'true');
    await page.keyboard.press('k');
    assert.equal(await items.nth(0).getAttribute('aria-current'), 'true');
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('a');
    await page.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
    await page.waitForFunction(
      () => (globalThis as unknown as Page$).document.querySelectorAll('.staff-queue-item').length === 1,
    );
    assert.match((await items.nth(0).textContent()) ?? '', /300\.00/);
    assert.equal(await items.nth(0).getAttribute('aria-current'), 'true');

    // The customer's wallet shows it at once.
    const wallet = await customer.get('/api/v1/client/wallet/');
    assert.equal(wallet.statusCode, 200, wallet.body);
    assert.equal(wallet.json().wallet.balance, '1250.50');
    const row = await db().selectFrom('deposits').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'approved');
    assert.equal(row.reviewed_by, `staff:${billingId}`);

    // `r` takes the focus to the reason; an empty reason is refused beside the field.
    await page.keyboard.press('r');
    assert.equal(await page.evaluate('document.activeElement?.tagName'), 'INPUT');
    await page.keyboard.press('Enter');
    await page.locator('.field.has-error').waitFor();
    await page.keyboard.press('Escape');

    // The queue at 390 px.
    await page.setViewportSize({ width: PHONE.width, height: PHONE.height });
    await audit({ ...panel, viewport: PHONE }, 'staff-deposits');
    await page.setViewportSize({ width: DESKTOP.width, height: DESKTOP.height });

    // An admin page opened by URL: the 403 page.
    await page.goto('/staff/audit');
    await page.getByRole('heading', { name: 'Your role may not use this' }).waitFor();
    await audit(panel, 'staff-forbidden');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Staff sign-in' }).waitFor();
    panel.assertClean([/status of 4\d\d/]);
  });

  test('the admin signs in with the code step and reads both actions in the audit trail', async () => {
    const { page } = panel;
    // The admin accepted the invitation and enrolled earlier (through the API).
    const adminPassword = 'asha-console-pass-42';
    const { secret } = await enrolInvited(t, clock, adminEmail, adminPassword, freshIp());

    await page.goto('/staff/audit');
    await page.getByRole('heading', { name: 'Staff sign-in' }).waitFor();
    await page.getByLabel('Email').fill(adminEmail);
    await page.getByLabel('Password').fill(adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Enter your code' }).waitFor();
    await audit(panel, 'staff-totp');
    await page.getByLabel('Code from the app').fill(totpCode(clock, secret));
    await page.getByRole('button', { name: 'Verify' }).click();

    // Back where the admin was going.
    await page.waitForURL((url) => url.pathname === '/staff/audit');
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
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
    const approve = page.getByRole('row').filter({ hasText: 'deposit.approve' });
    await approve.waitFor();
    assert.match(
      (await approve.textContent()) ?? '',
      new RegExp(`staff:${billingId} \\(billing\\).*deposit ${first.id}`),
    );
    const added = page.getByRole('row').filter({ hasText: 'staff.add' }).filter({ hasText: billingEmail });
    assert.match((await added.textContent()) ?? '', /operator/);
    await audit(panel, 'staff-audit');

    // Filtered to one target.
    await page.getByLabel('Target type').fill('deposit');
    await page.getByLabel('Target id').fill(String(first.id));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(
      () => (globalThis as unknown as Page$).document.querySelectorAll('.staff-audit tbody tr').length === 1,
    );
    assert.match((await page.locator('.staff-audit tbody tr').textContent()) ?? '', /deposit\.approve/);

    await nav.getByRole('link', { name: 'Staff' }).click();
    await page.getByRole('heading', { name: 'Invite a member' }).waitFor();
    await page.getByRole('row').filter({ hasText: billingEmail }).waitFor();
    await audit(panel, 'staff-directory');
    // The second deposit is still waiting (the admin's queue shows it).
    await nav.getByRole('link', { name: 'Deposits' }).click();
    await page.getByText(second.ref).first().waitFor();
    panel.assertClean([/status of 4\d\d/]);
  });
});
