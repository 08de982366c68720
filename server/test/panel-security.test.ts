// ci: one engine (the browser journeys test the panel; the API paths they use run on both engines in two-factor.test.ts and sessions-list.test.ts)
// Account security in the client panel (issue 36, CONTRACT §11), used as a customer uses it: real
// headless Chromium against the server on a real socket. At 1280 px and at 390 px a customer turns
// on two-factor sign-in (the QR code drawn under the panel's CSP, the setup key, a wrong code
// refused beside its field, the recovery codes downloaded and acknowledged), signs out and in with
// the password and a code from the app (by keyboard alone), with a recovery code, sees a wrong code
// refused, lists two sessions and ends the other one (whose browser is then signed out), ends every
// other session, makes new recovery codes and turns two-factor sign-in off. A locked-out account
// is told so. Every page and state is checked by axe-core in both themes and saved as screenshots
// (test-results/panel/). Codes come from otpauth's own generator at the app's (manual) clock.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
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
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { freePort } from './support/process.ts';

const skip = chromiumMissing();
const clock = new ManualClock();
let t: TestApp;
let browser: Browser;
let base: string;

before(async () => {
  if (skip) return;
  // Passkeys belong to PUBLIC_URL's host name and origin, and a browser refuses an IP address as a
  // relying party: the panel is browsed at http://localhost:<port>, which PUBLIC_URL names.
  const port = await freePort();
  base = `http://localhost:${port}`;
  // Each browser comes from an address of its own (X-Forwarded-For from the local proxy), as
  // customers do: the sessions list tells them apart, and per-IP sign-in limits stay per browser.
  t = await createTestApp({
    overrides: { clock: clock.now },
    env: { TRUST_PROXY: '127.0.0.1,::1', PUBLIC_URL: base },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** The code an authenticator app shows now, on the app's clock. */
function codeOf(secret: string): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() });
}

/** A code that is none of the accepted ones (this step and the steps either side of it). */
function wrongCodeOf(secret: string): string {
  const near = new Set(
    [-1, 0, 1].map((s) =>
      TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() + s * 30_000 }),
    ),
  );
  for (let n = 123456; ; n++) {
    const candidate = String(n % 1_000_000).padStart(6, '0');
    if (!near.has(candidate)) return candidate;
  }
}

let addresses = 0;
/** A browser at 1280 or 390 px, from an address of its own (203.0.113.x, the documentation range). */
async function openBrowser(viewport: Viewport): Promise<PanelPage & { ip: string }> {
  addresses += 1;
  const ip = `203.0.113.${addresses}`;
  const panel = await openPanel(browser, base, viewport);
  await panel.context.setExtraHTTPHeaders({ 'X-Forwarded-For': ip });
  return { ...panel, ip };
}

/**
 * Chromium's virtual authenticator on the page (DevTools protocol): a platform authenticator that
 * keeps discoverable credentials and verifies its user, as a phone's or laptop's does.
 */
async function virtualAuthenticator(panel: PanelPage): Promise<{ count(): Promise<number> }> {
  const cdp = await panel.context.newCDPSession(panel.page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return {
    async count() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      return credentials.length;
    },
  };
}

/** Into the next 30-second step: a code is accepted once, so each sign-in needs a new one. */
function nextStep(): void {
  clock.advance(30);
}

/** The first step of sign-in, by keyboard: Enter in the password field submits. */
async function passwordStep(page: Page, identifier: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email or username', { exact: true }).fill(identifier);
  const field = page.getByLabel('Password', { exact: true });
  await field.fill(password);
  await field.press('Enter');
}

/** The focused element is the field with this label (a string: the test is compiled without the DOM). */
async function focusedIs(page: Page, label: string): Promise<void> {
  await page.waitForFunction(
    `(() => { const el = document.activeElement; return !!el && el.labels && [...el.labels].some((l) => l.textContent === ${JSON.stringify(label)}); })()`,
  );
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/login');
}

/** The main navigation's link (behind the Menu button at 390 px). */
async function navTo(panel: PanelPage, name: string): Promise<void> {
  const { page } = panel;
  if (panel.viewport === PHONE) await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

/** The account tabs' link (Account → Security / Sessions). */
async function accountTab(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
}

for (const viewport of [DESKTOP, PHONE] as Viewport[]) {
  describe(`account security at ${viewport.width} px`, { skip: skip ?? false }, () => {
    let panel: PanelPage & { ip: string };
    let accountId = 0;
    let username = '';
    let password = '';
    let secret = '';
    let recovery: string[] = [];
    before(async () => {
      panel = await openBrowser(viewport);
      const made = await createAccount(t, { name: `Asha ${viewport.name}` });
      accountId = made.account.id;
      username = made.account.username;
      password = made.password;
      await passwordStep(panel.page, username, password);
      await panel.page.waitForURL((url) => url.pathname === '/');
    });
    after(() => panel?.context.close());

    test('turns on two-factor sign-in: QR code, setup key, a wrong code refused, recovery codes saved', async () => {
      const { page } = panel;
      await page.goto('/account');
      await accountTab(page, 'Security');
      await page.waitForURL('**/account/security');
      await page.getByText('off', { exact: true }).waitFor();
      await audit(panel, 'security-off');

      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      const qr = page.getByRole('img', { name: /QR code that adds Hostplane/ });
      await qr.waitFor();
      // The server's SVG, drawn as an image under the panel's CSP (img-src data:).
      const drawn = await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
      assert.ok(drawn > 0, 'the QR code image is drawn');
      secret = ((await page.locator('.sec-key').textContent()) ?? '').replace(/\s/g, '');
      assert.match(secret, /^[A-Z2-7]{16,}$/);
      // On a phone the app is on the same device: a link opens it with the same secret.
      const link = await page.getByRole('link', { name: 'Open it in your authenticator app' }).getAttribute('href');
      assert.equal(new URL(link ?? '').searchParams.get('secret'), secret);
      // The focus is on the first step (the QR code stays in sight); the code field is reached by Tab.
      await page.waitForFunction("document.activeElement?.textContent?.startsWith('Scan this QR code')");
      await audit(panel, 'security-setup');

      const field = page.getByLabel('Authentication code', { exact: true });
      await field.fill(wrongCodeOf(secret));
      await field.press('Enter');
      await page.locator('.field.has-error', { hasText: 'Authentication code' }).waitFor();
      await audit(panel, 'security-setup-error');

      await field.fill(codeOf(secret));
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      const list = page.getByRole('list', { name: 'Recovery codes' });
      await list.waitFor();
      recovery = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
      assert.equal(recovery.length, 10);
      for (const code of recovery) assert.match(code, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
      await audit(panel, 'security-recovery-codes');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download as text' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), 'hostplane-recovery-codes.txt');
      const text = readFileSync(await download.path(), 'utf8');
      for (const code of recovery) assert.ok(text.includes(code), `the file holds ${code}`);

      const done = page.getByRole('button', { name: 'Done', exact: true });
      assert.equal(await done.isDisabled(), true, 'Done waits for the codes to be saved');
      await page.getByLabel('I have saved these codes somewhere safe').check();
      await done.click();
      await page.getByText('10 of 10 left').waitFor();
      await page.getByText('on', { exact: true }).waitFor();
      await audit(panel, 'security-on');
      panel.assertClean();
    });

    test('signs out, then in with the password and a code from the app, by keyboard alone', async () => {
      const { page } = panel;
      await signOut(page);
      await passwordStep(page, username, password);
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      // The code field has the focus: the code is typed and Enter pressed.
      await focusedIs(page, 'Authentication code');
      const field = page.getByLabel('Authentication code', { exact: true });
      assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
      assert.equal(await field.getAttribute('inputmode'), 'numeric');
      await audit(panel, 'login-two-factor');
      nextStep();
      await page.keyboard.type(codeOf(secret));
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.pathname === '/');
      await page.getByRole('heading', { level: 1 }).waitFor();
      panel.assertClean([/status of 401/]);
    });

    test('a wrong code is refused beside the field; a recovery code signs in instead', async () => {
      const { page } = panel;
      await signOut(page);
      await passwordStep(page, username, password);
      const field = page.getByLabel('Authentication code', { exact: true });
      await field.fill(wrongCodeOf(secret));
      await field.press('Enter');
      const error = page.locator('.field.has-error', { hasText: 'Authentication code' });
      await error.waitFor();
      assert.match((await error.textContent()) ?? '', /wrong or was already used/);
      await audit(panel, 'login-two-factor-error');

      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await focusedIs(page, 'Recovery code');
      await audit(panel, 'login-two-factor-recovery');
      // As a customer might type it from paper: upper case.
      await page.getByLabel('Recovery code', { exact: true }).fill((recovery[0] ?? '').toUpperCase());
      await page.getByRole('button', { name: 'Verify and sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/');
      await page.goto('/account/security');
      await page.getByText('9 of 10 left').waitFor();
      panel.assertClean([/status of 4(01|22)/]);
    });

    test('a half-signed-in browser stays on the second step; cancel signs it out', async () => {
      const { page } = panel;
      await signOut(page);
      await passwordStep(page, username, password);
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      // A page of the account, or a reload, opens the second step again (not the password form).
      await page.goto('/wallet');
      await page.waitForURL('**/login?next=%2Fwallet');
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      await page.getByRole('button', { name: 'Use a recovery code' }).waitFor();
      await page.getByRole('button', { name: 'Cancel and sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      // Nothing of the account opens without signing in again.
      await page.goto('/account/security');
      await page.waitForURL('**/login?next=%2Faccount%2Fsecurity');
      nextStep();
      await page.getByLabel('Email or username', { exact: true }).fill(username);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Authentication code', { exact: true }).fill(codeOf(secret));
      await page.getByRole('button', { name: 'Verify and sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/account/security');
      panel.assertClean([/status of 401/]);
    });

    test('lists two sessions, ends the other one, and that browser is signed out', async () => {
      const { page } = panel;
      const other = await openBrowser(viewport);
      try {
        nextStep();
        await passwordStep(other.page, username, password);
        await other.page.getByLabel('Authentication code', { exact: true }).fill(codeOf(secret));
        await other.page.keyboard.press('Enter');
        await other.page.waitForURL((url) => url.pathname === '/');

        await page.goto('/account');
        await accountTab(page, 'Sessions');
        const items = page.locator('.ses-item');
        await page.getByText('2 sessions').waitFor();
        assert.equal(await items.count(), 2);
        const mine = page.locator('.ses-item', { hasText: 'This device' });
        assert.equal(await mine.count(), 1, 'one session is marked as this device');
        assert.ok(((await mine.textContent()) ?? '').includes(panel.ip), 'this browser is shown with its address');
        const theirs = page.locator('.ses-item', { hasNotText: 'This device' });
        assert.ok(((await theirs.textContent()) ?? '').includes(other.ip), 'the other with its address');
        // Times in the viewer's zone, named (the browser is in Asia/Kolkata).
        assert.match((await page.locator('.ses-item').first().textContent()) ?? '', /IST/);
        await audit(panel, 'sessions');

        // By keyboard: the confirmation takes the focus, Enter confirms.
        await theirs.getByRole('button', { name: 'Sign out' }).focus();
        await page.keyboard.press('Enter');
        const confirm = theirs.getByRole('button', { name: 'Sign out this session' });
        await confirm.waitFor();
        await page.waitForFunction("document.activeElement?.textContent?.includes('Sign out this session')");
        await audit(panel, 'sessions-confirm');
        await page.keyboard.press('Enter');
        await page.getByRole('status').filter({ hasText: 'was signed out' }).waitFor();
        await page.getByText('1 session', { exact: true }).waitFor();
        await page.getByText('No other browser or device is signed in.').waitFor();
        await audit(panel, 'sessions-one');

        // The other browser's next click finds its session gone and goes to sign-in.
        await navTo(other, 'Account');
        await accountTab(other.page, 'Security');
        await other.page.waitForURL((url) => url.pathname === '/login');
        await other.page.getByRole('heading', { name: 'Sign in' }).waitFor();
        other.assertClean([/status of 401/]);
      } finally {
        await other.context.close();
      }
    });

    test('signs out every other session at once', async () => {
      const { page } = panel;
      const others = [await openBrowser(viewport), await openBrowser(viewport)];
      try {
        for (const other of others) {
          nextStep();
          await passwordStep(other.page, username, password);
          await other.page.getByLabel('Authentication code', { exact: true }).fill(codeOf(secret));
          await other.page.keyboard.press('Enter');
          await other.page.waitForURL((url) => url.pathname === '/');
        }
        await page.goto('/account/sessions');
        await page.getByText('3 sessions').waitFor();
        await page.getByRole('button', { name: 'Sign out all other sessions' }).click();
        await audit(panel, 'sessions-others-confirm');
        await page.getByRole('button', { name: 'Sign out 2 sessions' }).click();
        await page.getByRole('status').filter({ hasText: '2 other sessions were signed out.' }).waitFor();
        await page.getByText('1 session', { exact: true }).waitFor();
        for (const other of others) {
          await other.page.reload();
          await other.page.waitForURL((url) => url.pathname === '/login');
        }
      } finally {
        for (const other of others) await other.context.close();
      }
    });

    test('makes new recovery codes (the old ones stop working), then turns two-factor sign-in off', async () => {
      const { page } = panel;
      await page.goto('/account/security');
      await page.getByRole('button', { name: 'New recovery codes' }).click();
      await focusedIs(page, 'Authentication code');
      nextStep();
      await page.keyboard.type(codeOf(secret));
      await page.keyboard.press('Enter');
      const list = page.getByRole('list', { name: 'Recovery codes' });
      await list.waitFor();
      const fresh = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
      assert.equal(fresh.length, 10);
      assert.equal(
        fresh.some((c) => recovery.includes(c)),
        false,
        'all new codes',
      );
      await page.getByLabel('I have saved these codes somewhere safe').check();
      await page.getByRole('button', { name: 'Done', exact: true }).click();
      await page.getByText('10 of 10 left').waitFor();

      await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
      await focusedIs(page, 'Password');
      await audit(panel, 'security-disable');
      // An old recovery code no longer works.
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code', { exact: true }).fill(recovery[1] ?? '');
      await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
      await page.locator('.field.has-error', { hasText: 'Recovery code' }).waitFor();
      await audit(panel, 'security-disable-error');
      await page.getByLabel('Recovery code', { exact: true }).fill(fresh[0] ?? '');
      await page.getByRole('button', { name: 'Turn off two-factor sign-in' }).click();
      await page.getByText('off', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).waitFor();

      // The password alone signs in again.
      await signOut(page);
      await passwordStep(page, username, password);
      await page.waitForURL((url) => url.pathname === '/');
      panel.assertClean([/status of 4(01|22)/]);
    });

    test('adds a passkey, then signs in with the passkey alone', async () => {
      const { page } = panel;
      const authenticator = await virtualAuthenticator(panel);
      await page.goto('/account/security');
      await page.getByRole('heading', { name: 'Passkeys', exact: true }).waitFor();
      await page.getByText('No passkeys yet').waitFor();
      // A name first (the server checks it only after the browser's prompt).
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.locator('.field.has-error', { hasText: 'Passkey name' }).waitFor();
      const name = page.getByLabel('Passkey name', { exact: true });
      await name.fill('Work laptop');
      await name.press('Enter');
      await page.getByRole('status').filter({ hasText: 'Passkey “Work laptop” added.' }).waitFor();
      const list = page.getByRole('list', { name: 'Your passkeys' });
      await list.getByText('Work laptop').waitFor();
      assert.match((await list.textContent()) ?? '', /Last used\s*Never/);
      assert.equal(await authenticator.count(), 1, 'the authenticator holds one discoverable credential');
      await audit(panel, 'security-passkeys');

      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      await audit(panel, 'login-with-passkey');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      // Back to the page signed out from.
      await page.waitForURL((url) => url.pathname === '/account/security');
      await list.getByText('Work laptop').waitFor();
      assert.doesNotMatch((await list.textContent()) ?? '', /Last used\s*Never/, 'its last use is shown');
      panel.assertClean([/status of 401/]);
    });

    test('with two-factor sign-in on, the passkey is offered as the second step', async () => {
      const { page } = panel;
      // Turned on through the service: the panel's way of turning it on was walked above.
      const begun = await t.deps.twoFactor.begin(accountId, username);
      await t.deps.twoFactor.enable(accountId, codeOf(begun.secret));
      nextStep();
      await signOut(page);
      await passwordStep(page, username, password);
      await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
      // The passkey is offered first, with the app and the recovery codes a click away.
      await page.waitForFunction("document.activeElement?.textContent === 'Use a passkey'");
      await page.getByRole('button', { name: 'Use your authenticator app' }).waitFor();
      await page.getByRole('button', { name: 'Use a recovery code' }).waitFor();
      await audit(panel, 'login-two-factor-passkey');
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.pathname === '/');
      panel.assertClean([/status of 401/]);
    });

    test('removes the passkey after a confirmation, and it no longer signs in', async () => {
      const { page } = panel;
      await page.goto('/account/security');
      const list = page.getByRole('list', { name: 'Your passkeys' });
      await list.getByRole('button', { name: 'Remove' }).click();
      await page.waitForFunction("document.activeElement?.textContent?.includes('Remove passkey')");
      await audit(panel, 'security-passkey-remove');
      await page.keyboard.press('Enter');
      await page.getByText('No passkeys yet').waitFor();

      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      // The authenticator still offers it; the server no longer knows it.
      await page.getByRole('alert').filter({ hasText: 'This passkey could not be verified.' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/login');
      await audit(panel, 'login-passkey-refused');
      panel.assertClean([/status of 401/]);
    });
  });
}

describe('a locked-out account is told so', { skip: skip ?? false }, () => {
  test('five wrong codes lock signing in, and the second step says for how long', async () => {
    const { account, password } = await createAccount(t);
    const begun = await t.deps.twoFactor.begin(account.id, account.email);
    await t.deps.twoFactor.enable(account.id, codeOf(begun.secret));
    // Both browsers reach the second step first: once locked, the password is refused too.
    const panels = [await openBrowser(DESKTOP), await openBrowser(PHONE)];
    try {
      for (const { page } of panels) {
        await passwordStep(page, account.username, password);
        await page.getByLabel('Authentication code', { exact: true }).waitFor();
      }
      for (const [index, panel] of panels.entries()) {
        const { page } = panel;
        const field = page.getByLabel('Authentication code', { exact: true });
        // Five wrong codes in the first browser (the fifth starts the lock), then the right code
        // is refused too, without being checked; in the second, any code is refused.
        for (let i = 0; i < (index === 0 ? 5 : 0); i++) {
          await field.fill(wrongCodeOf(begun.secret));
          const [answer] = await Promise.all([
            page.waitForResponse((r) => r.url().endsWith('/api/v1/client/auth/2fa/')),
            page.getByRole('button', { name: 'Verify and sign in' }).click(),
          ]);
          assert.equal(answer.status(), 422, `wrong code ${i + 1}`);
          await page.locator('.field.has-error', { hasText: 'Authentication code' }).waitFor();
        }
        nextStep();
        await field.fill(codeOf(begun.secret));
        await page.getByRole('button', { name: 'Verify and sign in' }).click();
        const alert = page.getByRole('alert').filter({ hasText: 'Too many wrong codes or passwords' });
        await alert.waitFor();
        assert.match((await alert.textContent()) ?? '', /paused for \d+ minutes/);
        await audit(panel, 'login-two-factor-locked');
        panel.assertClean();
      }
    } finally {
      for (const panel of panels) await panel.context.close();
    }
  });
});
