// ci: one engine (the browser journey tests the panel; every API path it uses runs on both engines in webhooks*.test.ts)
// The webhooks page as a customer uses it, in real headless Chromium at 1280 and 390 px: add an
// endpoint pointing at a local receiver, copy its secret, send a test event and see the delivery
// arrive (signed: verified here with the Standard Webhooks reference library) and in the log, send
// it again, edit, disable and enable, rotate the secret, a bad URL refused beside its field, and the
// low-balance threshold. Every state is checked by axe-core and saved as screenshots.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import {
  audit,
  chromiumMissing,
  DESKTOP,
  launchChromium,
  openPanel,
  type PanelPage,
  PHONE,
} from './support/chromium.ts';
import { createAccount } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { waitFor } from './support/wait.ts';
import { type Receiver, startReceiver } from './support/webhooks.ts';

const skip = chromiumMissing();
let t: TestApp;
let browser: Browser;
let base: string;
let receiver: Receiver;

before(async () => {
  if (skip) return;
  // Demo mode: the panel may point an endpoint at http://127.0.0.1 (the receiver); the worker sends.
  t = await createTestApp({ env: { DEMO: '1' }, worker: true });
  base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  browser = await launchChromium();
  receiver = await startReceiver();
});
after(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

for (const viewport of [DESKTOP, PHONE]) {
  describe(`webhooks in the panel at ${viewport.width} px`, { skip: skip ?? false }, () => {
    let panel: PanelPage;
    before(async () => {
      panel = await openPanel(browser, base, viewport);
      const { account, password } = await createAccount(t);
      const { page } = panel;
      await page.goto('/login');
      await page.getByLabel('Email or username', { exact: true }).fill(account.username);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/');
    });
    after(() => panel?.context.close());

    test('adds an endpoint, sends a test event and sees it delivered, signed', async () => {
      const { page } = panel;
      // Reached from the account area's tabs.
      await page.goto('/account');
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Webhooks' }).click();
      await page.waitForURL('**/webhooks');
      await page.getByRole('heading', { name: 'Add an endpoint' }).waitFor();
      await audit(panel, 'webhooks-empty');

      // A URL that cannot be one: the reason beside the field.
      await page.getByLabel('Endpoint URL').fill('ftp://example.com/hooks');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.locator('.field.has-error', { hasText: 'Endpoint URL' }).waitFor();
      await page.locator('.wh-events.has-error').waitFor();
      await audit(panel, 'webhooks-invalid');

      await page.getByLabel('Endpoint URL').fill(receiver.url);
      await page.getByLabel('Description (optional)').fill(`ops ${viewport.name}`);
      await page.getByRole('checkbox', { name: 'order.paid' }).check();
      await page.getByRole('checkbox', { name: 'service.active' }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('heading', { name: 'Copy the signing secret of your new endpoint now' }).waitFor();
      const secret = (await page.locator('.tok-secret .secret').textContent())?.trim() ?? '';
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      await page.getByRole('button', { name: 'Copy secret' }).waitFor();
      await audit(panel, 'webhooks-secret');
      await page.getByRole('button', { name: 'I have stored it: hide it' }).click();
      await page.locator('.tok-secret').waitFor({ state: 'detached' });

      const item = page.locator('.wh-item', { hasText: receiver.url });
      await item.getByText('order.paid', { exact: true }).waitFor();
      const from = receiver.received.length;
      await item.getByRole('button', { name: 'Send test event' }).click();
      const delivery = item.locator('.wh-delivery', { hasText: 'webhook.test' }).first();
      await delivery.locator('.status', { hasText: 'succeeded' }).waitFor({ timeout: 30_000 });
      await delivery.getByText('HTTP 204').waitFor();
      const arrived = await waitFor('the test event at the receiver', async () => receiver.received[from]);
      const event = new Webhook(secret).verify(arrived.body, arrived.headers as Record<string, string>) as {
        type: string;
        id: string;
      };
      assert.equal(event.type, 'webhook.test');
      await delivery.getByText('Request and answer').click();
      await delivery.getByText(`webhook-id: ${event.id}`).waitFor();
      await audit(panel, 'webhooks-delivered');

      await delivery.getByRole('button', { name: `Send again: webhook.test ${event.id}` }).click();
      await waitFor('the redelivery', async () => receiver.received.slice(from).length >= 2);
      assert.equal(receiver.received.at(-1)?.headers['webhook-id'], event.id, 'the same event, the same id');
      await waitFor('two deliveries in the log', async () => (await item.locator('.wh-delivery').count()) >= 2);
      panel.assertClean([/status of 422/]);
    });

    test('edits, disables, enables and rotates the secret; sets the low-balance alert', async () => {
      const { page } = panel;
      const item = page.locator('.wh-item', { hasText: receiver.url });
      await item.getByRole('button', { name: 'Edit' }).click();
      await item.getByLabel('Description (optional)').fill('billing sync');
      await item.getByRole('checkbox', { name: 'invoice.issued' }).check();
      await item.getByRole('button', { name: 'Save changes' }).click();
      await item.getByText('billing sync').waitFor();
      await item.getByText('invoice.issued', { exact: true }).waitFor();

      await item.getByRole('button', { name: 'Disable' }).click();
      await item.locator('.status', { hasText: 'disabled' }).waitFor();
      await item.getByText('You disabled it.').waitFor();
      assert.equal(await item.getByRole('button', { name: 'Send test event' }).isDisabled(), true);
      await audit(panel, 'webhooks-disabled');
      await item.getByRole('button', { name: 'Enable' }).click();
      await item.locator('.status', { hasText: 'active' }).waitFor();

      await item.getByRole('button', { name: 'Rotate secret' }).click();
      await item.getByText(/For 24 hours deliveries carry signatures of both/).waitFor();
      await audit(panel, 'webhooks-rotate');
      await item.getByRole('button', { name: 'Rotate secret' }).last().click();
      await page.getByRole('heading', { name: /Copy the new signing secret of/ }).waitFor();
      await item.getByText(/the previous one also signs until/).waitFor();
      await page.getByRole('button', { name: 'I have stored it: hide it' }).click();

      await page.getByLabel('Threshold (₹)').fill('500');
      await page.getByRole('button', { name: 'Save threshold' }).click();
      await page.getByText(/below ₹500\.00/).waitFor();
      await audit(panel, 'webhooks-settings');
      panel.assertClean([/status of 422/]);
    });
  });
}
