// ci: one engine (the browser journeys test the panel; every API path they use runs on both engines in the other files)
// The activity log in the panel (issue 36, CONTRACT §11), in real headless Chromium at 1280 and
// 390 px: a customer who mistyped their password once, then signed in and made an API token, finds
// the three under Account → Activity, with the time in their zone, who did it and from where; the
// filter narrows the list; a staff credit shows as Hostplane staff's. Every state is checked by
// axe-core and saved as a screenshot (test-results/panel/).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { runAdmin } from '../src/admin/run.ts';
import { audit, chromiumMissing, DESKTOP, launchChromium, openPanel, PHONE } from './support/chromium.ts';
import { createAccount, lastMail, linkToken } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const skip = chromiumMissing();
let t: TestApp;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  t = await createTestApp();
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

for (const viewport of [DESKTOP, PHONE]) {
  describe(`the activity log at ${viewport.width} px`, { skip: skip ?? false }, () => {
    test('a failed sign-in, the sign-in and a token are listed, filtered, with time zone, actor and address', async () => {
      const made = await createAccount(t, { verified: false, name: `Asha ${viewport.name}` });
      await t.deps.accounts.verifyEmail(linkToken((await lastMail(t, made.account.email)).text, 'verify'));
      const panel = await openPanel(browser, base, viewport);
      const { page } = panel;

      await page.goto('/login');
      await page.getByLabel('Email or username', { exact: true }).fill(made.account.username);
      await page.getByLabel('Password', { exact: true }).fill(`${made.password}x`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').waitFor();
      await page.getByLabel('Password', { exact: true }).fill(made.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/');

      await page.goto('/tokens');
      await page.getByLabel('Name', { exact: true }).fill('laptop deploys');
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByRole('button', { name: 'Copy token' }).waitFor();

      await page.goto('/account');
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Activity' }).click();
      await page.waitForURL('**/account/activity');
      const items = page.locator('.act-list > li');
      await items.first().waitFor();
      assert.equal(await items.count(), 3);
      const texts = await items.allInnerTexts();
      assert.match(texts[0] ?? '', /API token "laptop deploys" created/);
      assert.match(texts[1] ?? '', /Signed in with your password/);
      assert.match(texts[2] ?? '', /failed[\s\S]*refused: wrong password/);
      for (const text of texts) {
        assert.match(text, /You/);
        assert.match(text, /from 127\.0\.0\.1/);
        // The viewer's zone (the browser runs in Asia/Kolkata), named.
        assert.match(text, /IST/);
      }
      await page.getByText('Times are in your time zone (IST).').waitFor();
      await audit(panel, 'activity');

      await page.getByLabel('Show').selectOption({ label: 'Failed sign-ins' });
      await page.waitForFunction(
        () =>
          (
            globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
          ).document.querySelectorAll('.act-list > li').length === 1,
      );
      assert.match((await items.first().innerText()) ?? '', /wrong password/);
      await page.getByLabel('Show').selectOption({ label: 'Passkeys' });
      await page.getByText('Nothing of this kind').waitFor();
      await audit(panel, 'activity-empty');
      await page.getByRole('button', { name: 'Show everything' }).click();
      await page.waitForFunction(
        () =>
          (
            globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }
          ).document.querySelectorAll('.act-list > li').length === 3,
      );

      const credit = await runAdmin(
        ['wallet', 'credit', made.account.email, '100', '--note', 'goodwill'],
        async () => t.deps,
        'staff:journey',
      );
      assert.equal(credit.exitCode, 0, credit.stderr);
      await page.reload();
      await items.first().waitFor();
      const staff = await items.first().innerText();
      assert.match(staff, /Hostplane staff added ₹100\.00 to your wallet/);
      assert.match(staff, /Hostplane staff \(operator\)/);
      assert.doesNotMatch(staff, /journey|from /, 'no staff login, no address');
      await audit(panel, 'activity-staff');
      panel.assertClean();
      await panel.context.close();
    });
  });
}
