// The client panel, used as a customer uses it: real headless Chromium against the server on a
// real socket, with the emulated upstreams. Each journey runs at 1280 px and at 390 px; every page
// it reaches is checked by axe-core in the light and the dark theme and saved as a screenshot
// (test-results/panel/, not committed) for people to look at.

import assert from 'node:assert/strict';
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
import { lastMail, linkToken } from './support/factories.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const skip = chromiumMissing();
let u: UpstreamApp;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  u = await createUpstreamApp({ game: true, web: true });
  base = (await u.t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await u?.close();
});

let people = 0;
function newPerson(viewport: Viewport) {
  people += 1;
  const tag = `${viewport.name}${people}${Date.now().toString(36)}`;
  return {
    name: `Asha ${viewport.name}`,
    email: `asha.${tag}@example.in`,
    username: `asha_${tag}`,
    password: `Secret-${tag}-9`,
  };
}

/** Signs up in the page, opens the link from the mail, and signs in: the panel's front door. */
async function signUpAndIn(panel: PanelPage, person: ReturnType<typeof newPerson>) {
  const { page } = panel;
  await page.goto('/');
  await page.waitForURL('**/login');
  await audit(panel, 'login');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.waitForURL('**/register');
  await page.getByLabel('Name', { exact: true }).fill(person.name);
  await page.getByLabel('Email', { exact: true }).fill(person.email);
  await page.getByLabel('Username', { exact: true }).fill(person.username);
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  // The server's reason is shown beside the field it names.
  await page.locator('.field.has-error', { hasText: 'Password' }).waitFor();
  await audit(panel, 'register-error');
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Check your e-mail').waitFor();

  const mail = await lastMail(u.t, person.email);
  await page.goto(`/verify?token=${linkToken(mail.text, 'verify')}`);
  await page
    .getByRole('status')
    .filter({ hasText: /verified/i })
    .waitFor();
  assert.equal(new URL(page.url()).search, '', 'the token is taken out of the address bar');
  await audit(panel, 'verify');

  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email or username', { exact: true }).fill(person.username);
  await page.getByLabel('Password', { exact: true }).fill(`${person.password}x`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/');
}

for (const viewport of [DESKTOP, PHONE]) {
  describe(`a new customer in the panel at ${viewport.width} px`, { skip: skip ?? false }, () => {
    let panel: PanelPage;
    const person = newPerson(viewport);
    before(async () => {
      panel = await openPanel(browser, base, viewport);
    });
    after(() => panel?.context.close());

    test('signs up, verifies from the mail, signs in, and lands on the dashboard', async () => {
      await signUpAndIn(panel, person);
      await audit(panel, 'dashboard');
      panel.assertClean([/status of 401/]);
    });

    test('a deep link while signed out goes to sign-in and back to the page asked for', async () => {
      const other = await openPanel(browser, base, viewport);
      try {
        await other.page.goto('/wallet');
        await other.page.waitForURL('**/login?next=%2Fwallet');
        await other.page.getByLabel('Email or username', { exact: true }).fill(person.email);
        await other.page.getByLabel('Password', { exact: true }).fill(person.password);
        await other.page.getByRole('button', { name: 'Sign in' }).click();
        await other.page.waitForURL((url) => url.pathname === '/wallet');
      } finally {
        await other.context.close();
      }
    });

    test('an unknown page is the panel’s own not-found page; sign out ends the session', async () => {
      const { page } = panel;
      await page.goto('/no/such/page');
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await audit(panel, 'not-found');
      await page.goto('/');
      if (viewport === PHONE) await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/login');
      await page.goto('/account');
      await page.waitForURL('**/login?next=%2Faccount');
    });

    test('the signed-out pages in the dark theme', async () => {
      const dark = await openPanel(browser, base, viewport, 'dark');
      try {
        for (const path of ['/login', '/register', '/forgot', '/reset?token=x']) {
          await dark.page.goto(path);
          await dark.page.getByRole('heading', { level: 1 }).waitFor();
          await audit(dark, path.slice(1).split('?')[0] as string);
        }
        dark.assertClean([/status of 401/]);
      } finally {
        await dark.context.close();
      }
    });
  });
}
