// ci: one engine (the browser journeys test the panel; the API paths they use run on both engines in the other files)
// Account → Privacy in the client panel (issue 36 part D), used as a customer uses it: real headless
// Chromium against the server on a real socket, at 1280 px and at 390 px. A customer asks for an
// export, sees it being built, downloads the file (and it is their account's archive), is told when
// asking again too soon; then tries to delete the account: a wrong password is refused beside its
// field, money in the wallet is shown as the reason with where to settle it, and once support has
// refunded it the deletion is scheduled, the banner shows on every page, and "Cancel deletion" takes
// it back. Every state is checked by axe-core in both themes and saved as screenshots
// (test-results/panel/privacy-*.png).

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
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
import { adminJson } from './support/privacy.ts';
import { freePort } from './support/process.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const skip = chromiumMissing();
let u: UpstreamApp;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  u = await createUpstreamApp({ env: { PUBLIC_URL: base } });
  await u.t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await u?.close();
});

const JOB_WAIT = 60_000;
const db = () => u.t.deps.database.db;

async function signIn(panel: PanelPage, username: string, password: string) {
  const { page } = panel;
  await page.goto('/login');
  await page.getByLabel('Email or username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/');
}

async function navTo(panel: PanelPage, name: string) {
  const { page } = panel;
  if (panel.viewport === PHONE) await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

for (const viewport of [DESKTOP, PHONE] as Viewport[]) {
  describe(`the privacy page at ${viewport.width} px`, { skip: skip ?? false }, () => {
    let panel: PanelPage;
    let account: { id: number; email: string; username: string };
    let password = '';
    before(async () => {
      panel = await openPanel(browser, base, viewport);
      const created = await createAccount(u.t, { name: `Priya ${viewport.name}` });
      account = created.account;
      password = created.password;
      await signIn(panel, account.username, password);
    });
    after(() => panel?.context.close());

    test('an export: asked for, built, downloaded; a second within the hour is refused with when', async () => {
      const { page } = panel;
      await navTo(panel, 'Account');
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Privacy' }).click();
      await page.waitForURL('**/account/privacy');
      await page.getByRole('heading', { name: 'Download your data' }).waitFor();
      await page.getByRole('heading', { name: 'No export yet' }).waitFor();
      await audit(panel, 'privacy');

      // (While it is built the page says so; the job may be quicker than a look, so only the end is awaited.)
      await page.getByRole('button', { name: 'Request export' }).click();
      const download = page.getByRole('link', { name: /^Download \(/ });
      await download.waitFor({ timeout: JOB_WAIT });
      await page.getByText(/Available until/).waitFor();
      await audit(panel, 'privacy-export-ready');
      const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
      assert.match(file.suggestedFilename(), /^hostplane-export-\d{4}-\d{2}-\d{2}\.json$/);
      const archive = JSON.parse(await readFile((await file.path()) as string, 'utf8'));
      assert.equal(archive.format, 'hostplane-account-export');
      assert.equal(archive.profile.email, account.email);

      // One an hour: the button waits, and says until when.
      assert.equal(await page.getByRole('button', { name: 'Request export' }).isDisabled(), true);
      await page.getByText(/You can ask for the next export after \d+ \w+ \d{4}, /).waitFor();
      assert.equal(await page.getByText('Your export is being prepared').count(), 0, 'no stale "being prepared"');
      panel.assertClean();
    });

    test('deleting: a wrong password beside its field; money in the wallet blocks it with where to settle it', async () => {
      const { page } = panel;
      await adminJson(u.t, 'wallet', 'credit', account.email, '120', '--note', 'goodwill');
      await page.getByRole('heading', { name: 'What we keep, and why' }).waitFor();
      await page.getByRole('button', { name: 'Delete my account…' }).click();
      const field = page.getByLabel('Your password');
      await field.fill('not-my-password-1');
      await page.getByRole('button', { name: 'Delete my account in 7 days' }).click();
      await page.locator('.field.has-error', { hasText: 'Your password' }).getByText('is wrong').waitFor();
      await field.fill(password);
      await page.getByRole('button', { name: 'Delete my account in 7 days' }).click();
      const blocked = page.getByRole('alert').filter({ hasText: 'Your account cannot be deleted yet.' });
      await blocked.getByText(/Your wallet holds ₹120\.00\..*ask support to refund/).waitFor();
      await blocked.getByRole('link', { name: 'See your wallet' }).waitFor();
      await audit(panel, 'privacy-blocked');
      const row = await db()
        .selectFrom('accounts')
        .select('deletion_scheduled_for')
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.deletion_scheduled_for, null);
      panel.assertClean([/status of 4(09|22)/]);
    });

    test('once refunded it is scheduled: the banner on every page, and Cancel deletion takes it back', async () => {
      const { page } = panel;
      await adminJson(u.t, 'wallet', 'refund', account.email, '120', '--note', 'UPI refund UTR4455');
      await page.getByRole('button', { name: 'Delete my account in 7 days' }).click();
      const card = page.locator('.priv-delete');
      await card.getByText(/Your account will be deleted on/).waitFor();
      const banner = page.getByRole('region', { name: 'Account deletion' });
      await banner.getByText(/Your account will be deleted on/).waitFor();
      await audit(panel, 'privacy-scheduled');
      const row = await db()
        .selectFrom('accounts')
        .select('deletion_scheduled_for')
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(row.deletion_scheduled_for, null);

      // The banner follows the customer through the panel.
      await navTo(panel, 'Wallet');
      await page.waitForURL('**/wallet');
      await banner.getByText(/Your account will be deleted on/).waitFor();
      await banner.getByRole('link', { name: 'What is erased and what is kept' }).click();
      await page.waitForURL('**/account/privacy');
      await card.getByRole('button', { name: 'Cancel deletion' }).click();
      await banner.waitFor({ state: 'detached' });
      await card.getByRole('button', { name: 'Delete my account…' }).waitFor();
      await audit(panel, 'privacy-cancelled');
      const after = await db()
        .selectFrom('accounts')
        .select('deletion_scheduled_for')
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      assert.equal(after.deletion_scheduled_for, null);
      panel.assertClean([/status of 4(09|22|29)/]);
    });
  });
}
