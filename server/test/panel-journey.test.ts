// ci: one engine (the browser journeys test the panel; every API path they use runs on both engines in the other files)
// The client panel, used as a customer uses it: real headless Chromium against the server on a
// real socket, with the emulated upstreams. Each journey runs at 1280 px and at 390 px; every page
// it reaches is checked by axe-core in the light and the dark theme and saved as a screenshot of
// each (test-results/panel/, not committed) for people to look at.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { runAdmin } from '../src/admin/run.ts';
import { post } from '../src/core/wallet/ledger.ts';
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
import { panelFile } from './support/game.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

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

/** Where a job runs (provisioning, power, the game console): generous, never a measure. */
const JOB_WAIT = 60_000;
/** The three first months: Cloud VPS 1 GB ₹299 + Minecraft Java 2 GB ₹349 + Web Hosting Starter ₹99. */
const TOP_UP = 747;
/** A real 1×1 PNG: what a customer's payment screenshot is, to the form's preview and the server. */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const db = () => u.t.deps.database.db;
const admin = (...argv: string[]) => runAdmin(argv, async () => u.t.deps, 'staff:journey');
/** Rupees as the panel shows them (₹1,234.50). */
const inr = (rupees: number | string) =>
  new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR', minimumFractionDigits: 2 }).format(
    Number(rupees),
  );
const rupeesOf = (paise: string | number | bigint) => Number(BigInt(paise)) / 100;

/** The service page's header says the service is active (it polls while the job runs). */
async function activeHeader(page: Page): Promise<void> {
  await page
    .locator('.page-header .status')
    .first()
    .filter({ hasText: /^active$/ })
    .waitFor({ timeout: JOB_WAIT });
}

/**
 * Orders a plan of a type through /order/<type>: chooses the plan, fills in what the type asks
 * (`fill`), pays from the wallet, and follows the panel to the new service's page. Its id.
 */
async function orderThrough(panel: PanelPage, type: string, plan: RegExp, fill: () => Promise<void>): Promise<number> {
  const { page } = panel;
  await page.goto(`/order/${type}`);
  await page.getByRole('heading', { name: '1. Choose a plan' }).waitFor();
  await page.getByRole('radio', { name: plan }).check();
  await page.getByRole('heading', { name: '2. Set it up' }).waitFor();
  await fill();
  await audit(panel, `order-${type}`);
  await page.getByRole('button', { name: /^Pay ₹[\d,.]+ from your wallet$/ }).click();
  await page.waitForURL(/\/services\/\d+$/, { timeout: JOB_WAIT });
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  await activeHeader(page);
  return id;
}

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
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('alert').waitFor();
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
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
        await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await other.page.waitForURL((url) => url.pathname === '/wallet');
      } finally {
        await other.context.close();
      }
    });

    // ---- from here on the signed-in customer walks the rest of the journey, in order ----
    let accountId = 0;
    const ids = { vps: 0, game: 0, web: 0 };
    const domain = `shop-${viewport.name}${Date.now().toString(36)}.in`;

    test('tops up the wallet: a deposit with its UTR and screenshot, approved by staff, shows in the balance', async () => {
      const { page } = panel;
      accountId = (
        await db().selectFrom('accounts').select('id').where('email', '=', person.email).executeTakeFirstOrThrow()
      ).id;
      await page.goto('/wallet');
      await page.getByRole('heading', { name: 'Add funds' }).waitFor();
      await audit(panel, 'wallet');
      await page.getByLabel('Amount paid (₹)').fill(String(TOP_UP));
      const utr = `UTR${Date.now()}${people}`.slice(0, 20);
      await page.getByLabel('UTR / transaction reference').fill(utr);
      await page.getByLabel('Payment screenshot or receipt').setInputFiles({
        name: 'payment.png',
        mimeType: 'image/png',
        buffer: TINY_PNG,
      });
      await page.getByRole('img', { name: 'Preview of payment.png' }).waitFor();
      await page.getByRole('button', { name: 'Submit deposit for approval' }).click();
      await page.getByRole('heading', { name: 'Deposit reported' }).waitFor();
      const pending = page.getByRole('article', { name: `Deposit of ${inr(TOP_UP)}, pending` });
      await pending.waitFor();
      await audit(panel, 'wallet-deposit-pending');

      const deposit = await db()
        .selectFrom('deposits')
        .select('id')
        .where('account_id', '=', accountId)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      const approved = await admin('deposits', 'approve', String(deposit.id));
      assert.equal(approved.exitCode, 0, approved.stderr);

      await page.reload();
      await page.getByRole('article', { name: `Deposit of ${inr(TOP_UP)}, approved` }).waitFor();
      await page.locator('.balance-value', { hasText: inr(TOP_UP) }).waitFor();
      await audit(panel, 'wallet-approved');
      panel.assertClean();
    });

    test('orders a virtual server, a game server and web hosting; each becomes active', async () => {
      const { page } = panel;
      await page.goto('/order');
      await page.getByRole('link', { name: /See plans for virtual servers?/i }).waitFor();
      await audit(panel, 'order');

      ids.vps = await orderThrough(panel, 'vps', /^Cloud VPS 1 GB/, async () => {
        await page.getByLabel('Server name (optional)').fill(`vps-${people}`);
        // Cloud-init user data is folded under "Advanced", with its byte counter.
        await page.getByText('Advanced', { exact: true }).click();
        await page
          .getByLabel('Cloud-init user data (optional)')
          .fill('#cloud-config\nruncmd:\n  - echo from-the-panel\n');
        await page.getByText(/46 of 65,536 bytes/).waitFor();
      });
      ids.game = await orderThrough(panel, 'game', /^Minecraft Java 2 GB/, async () => {
        await page.getByLabel('I accept the Minecraft End User Licence Agreement').check();
      });
      ids.web = await orderThrough(panel, 'web', /^Web Hosting Starter/, async () => {
        await page.getByLabel('Domain', { exact: true }).fill(domain);
      });

      const vps = await u.t.deps.database.db
        .selectFrom('services')
        .select('external')
        .where('id', '=', ids.vps)
        .executeTakeFirstOrThrow();
      const vm = u.pve.state.vms.get((vps.external as { vmid: number }).vmid);
      assert.match(vm?.cloudinit?.user ?? '', /echo from-the-panel/, 'the user data reached the VM');
      for (const [type, id] of Object.entries(ids)) {
        await page.goto(`/services/${id}`);
        await activeHeader(page);
        await audit(panel, `${type}-overview`);
      }
      await page.goto('/services');
      await page.getByRole('heading', { name: 'Services', level: 1 }).waitFor();
      await audit(panel, 'services');
      await page.goto('/');
      await audit(panel, 'dashboard-with-services');
      // Three services cost the whole top-up: the wallet is empty now.
      assert.equal(BigInt(await u.t.deps.wallet.balance(accountId)), 0n);
      panel.assertClean();
    });

    test('turns the virtual server off and on with its Stop and Start buttons; sees its other tabs', async () => {
      const { page } = panel;
      await page.goto(`/services/${ids.vps}`);
      await activeHeader(page);
      const power = page.locator('.power-line .status');
      await power.filter({ hasText: 'running' }).waitFor({ timeout: JOB_WAIT });
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await power.filter({ hasText: 'stopped' }).waitFor({ timeout: JOB_WAIT });
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await power.filter({ hasText: 'running' }).waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'vps-power');
      // The screen: noVNC signs in to the node's VNC console through our ticketed WebSocket and
      // draws the guest's 640 × 400 desktop (the emulated node speaks RFB 3.8).
      await page.getByRole('button', { name: 'Open the console', exact: true }).click();
      await page.getByText('Connected. Click the screen to type.').waitFor({ timeout: JOB_WAIT });
      const canvas = page.locator('.console-screen canvas');
      await canvas.waitFor();
      const size = await canvas.evaluate((c) => {
        const drawn = c as unknown as { width: number; height: number };
        return [drawn.width, drawn.height];
      });
      assert.deepEqual(size, [640, 400]);
      await audit(panel, 'vps-screen');
      await page.getByRole('button', { name: 'Close the console' }).click();
      await page.getByRole('button', { name: 'Reconnect the console' }).waitFor();
      // The serial console: what is typed goes to the node's terminal and comes back (the
      // emulated node echoes), drawn by xterm under the panel's CSP.
      await page.getByRole('button', { name: 'Open the serial console' }).click();
      await page.getByText('Connected: type in the console.').waitFor({ timeout: JOB_WAIT });
      await page.locator('.serial-terminal .xterm-helper-textarea').focus();
      await page.keyboard.type('hello-serial');
      await page.locator('.serial-terminal .xterm-rows', { hasText: 'hello-serial' }).waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'vps-serial');
      await page.keyboard.press('Control+]');
      await page.getByRole('button', { name: 'Close the serial console' }).press('Enter');
      await page.getByText('The serial console was closed.').waitFor();
      for (const tab of ['Usage', 'Manage', 'Activity', 'Billing']) {
        await page.getByRole('navigation', { name: 'Service sections' }).getByRole('link', { name: tab }).click();
        await page.waitForURL(`**/services/${ids.vps}/${tab.toLowerCase()}`);
        await audit(panel, `vps-${tab.toLowerCase()}`);
      }
      panel.assertClean();
    });

    test('game server: says hello on the console and edits server.properties in the file editor', async (t) => {
      const { page } = panel;
      await page.goto(`/services/${ids.game}/manage`);
      await page.getByRole('tab', { name: 'Console' }).waitFor({ timeout: JOB_WAIT });
      const term = page.locator('.game-term .xterm-rows');
      const powerWord = page.locator('.game-console-head .status');
      // A fresh Minecraft server refuses to start until its EULA is accepted (the console says
      // so and offers the button); then it starts.
      // Connected means the node has spoken (its first frame): before that, output is not shown.
      // (Not "the Connecting banner is gone": before the console's chunk has loaded there is none.)
      const connected = page.locator('.game-console[data-link="open"]');
      await connected.waitFor({ timeout: JOB_WAIT });
      const eula = page.getByRole('button', { name: 'Accept the EULA' }).first();
      const running = powerWord.filter({ hasText: 'running' });
      const refused = page.locator('.game-power .alert-error');
      const started = async (timeout: number) => {
        await page.getByRole('button', { name: 'Start', exact: true }).click();
        await eula.or(running).or(refused).waitFor({ timeout });
        assert.equal(await refused.count(), 0, `Start was refused: ${await refused.allTextContents()}`);
      };
      // The EULA refusal takes the server from starting to offline in milliseconds on the emulator;
      // a console that was not connected just then misses the lines, as a person's would, and the
      // person reloads and presses Start again: so does the test, once, saying what it saw.
      await started(JOB_WAIT / 2).catch(async (error: unknown) => {
        const shown = await page.locator('.game-console, .game-power').allInnerTexts();
        t.diagnostic(`first Start showed neither the EULA prompt nor running (${String(error)}): ${shown.join(' | ')}`);
        await page.reload();
        await page.getByRole('tab', { name: 'Console' }).waitFor({ timeout: JOB_WAIT });
        await connected.waitFor({ timeout: JOB_WAIT });
        await powerWord.filter({ hasText: /offline|running/ }).waitFor({ timeout: JOB_WAIT });
        if (await running.isVisible()) return;
        await started(JOB_WAIT).catch(async (again: unknown) => {
          const after = await page.locator('.game-console, .game-power').allInnerTexts();
          throw new Error(`neither the EULA prompt nor running after Start: ${after.join(' | ')}`, { cause: again });
        });
      });
      if (await eula.isVisible()) {
        await audit(panel, 'game-console-eula');
        await eula.click();
        await eula.waitFor({ state: 'detached', timeout: JOB_WAIT });
        await powerWord.filter({ hasText: 'offline' }).waitFor({ timeout: JOB_WAIT });
        await page.getByRole('button', { name: 'Start', exact: true }).click();
      }
      await running.waitFor({ timeout: JOB_WAIT });
      const command = page.getByLabel('Command', { exact: true });
      await command.fill('say hello');
      await command.press('Enter');
      await term.filter({ hasText: /\[Server\]\s+hello/ }).waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'game-console');

      await page.getByRole('tab', { name: 'Files' }).click();
      const file = page.getByRole('button', { name: 'server.properties', exact: true });
      await file.waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'game-files');
      await file.click();
      const editor = page.locator('.game-editor .cm-content');
      await editor.waitFor();
      const before = panelFile(u, ids.game, 'server.properties')?.toString('utf8') ?? '';
      assert.match(before, /^motd=/m);
      const motd = `motd=Asha's ${viewport.name} server`;
      await editor.click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.insertText(before.replace(/^motd=.*$/m, motd));
      await page.locator('.game-save-state', { hasText: 'Unsaved changes' }).waitFor();
      await audit(panel, 'game-editor');
      await page.keyboard.press('ControlOrMeta+S');
      // A regular expression: the string 'Saved' matches "Unsaved changes" too (hasText is a
      // case-insensitive substring), which let the test read the file before the save landed.
      await page.locator('.game-save-state', { hasText: /^Saved$/ }).waitFor({ timeout: JOB_WAIT });
      const after = panelFile(u, ids.game, 'server.properties')?.toString('utf8') ?? '';
      assert.match(after, new RegExp(`^${motd}$`, 'm'), 'the game panel holds the saved file');
      assert.equal(after.split('\n').length, before.split('\n').length, 'only the motd line changed');
      // Opened again, the editor shows what was saved.
      await page.getByRole('button', { name: 'Close', exact: true }).click();
      await file.click();
      await page.locator('.game-editor .cm-content', { hasText: motd }).waitFor();
      panel.assertClean();
    });

    test('web hosting: Open cPanel signs in to cPanel in a new tab', async () => {
      const { page } = panel;
      await page.goto(`/services/${ids.web}/manage`);
      const open = page.getByRole('button', { name: /^Open cPanel/ });
      await open.waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'web-manage');
      const [tab] = await Promise.all([panel.context.waitForEvent('page'), open.click()]);
      const cpanel = u.cpanel?.url ?? '';
      await tab.waitForURL((url) => url.href.startsWith(cpanel) && /\/cpsess\d+\//.test(url.pathname), {
        timeout: JOB_WAIT,
      });
      assert.equal(new URL(tab.url()).origin, new URL(cpanel).origin, 'the tab went to the cPanel server');
      await tab.close();
      await page.getByText('cPanel opened in a new tab.').waitFor();
      panel.assertClean();
    });

    test('creates a read-only API token, uses it, and sees the call in its request log', async () => {
      const { page } = panel;
      await page.goto('/tokens');
      await page.getByRole('heading', { name: 'Create a token' }).waitFor();
      await audit(panel, 'tokens');
      const name = `ci-${viewport.name}`;
      await page.getByLabel('Name', { exact: true }).fill(name);
      assert.equal(await page.getByRole('checkbox', { name: 'read', exact: true }).isChecked(), true);
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = (await page.locator('.tok-secret .secret').textContent())?.trim() ?? '';
      assert.match(secret, /^svc_/);
      await audit(panel, 'tokens-secret');

      const me = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      assert.equal(me.status, 200, await me.clone().text());
      assert.equal(((await me.json()) as { account?: { email?: string } }).account?.email, person.email);

      // The secret is shown once: after hiding it, it is nowhere on the page.
      await page.getByRole('button', { name: 'I have stored it: hide it' }).click();
      await page.locator('.tok-secret').waitFor({ state: 'detached' });
      assert.equal(await page.getByText(secret).count(), 0);

      const item = page.locator('.tok-item', { hasText: name });
      await item.getByRole('button', { name: 'Request log' }).click();
      const call = item.locator('tbody tr', { hasText: 'GET /api/v1/me' });
      await waitFor(
        'the call in the request log',
        async () => {
          if ((await call.count()) > 0) return true;
          await item.getByRole('button', { name: 'Refresh' }).click();
          await item.locator('.tok-log').waitFor();
          return false;
        },
        JOB_WAIT,
      );
      await call.first().getByText('200').waitFor();
      await audit(panel, 'tokens-log');
      panel.assertClean();
    });

    test('pays an unpaid renewal from the dashboard', async () => {
      const { page } = panel;
      // The month of the first service to renew ends, with the wallet empty: its renewal is billed
      // and stays unpaid (the cycle as at that moment, for this account).
      const services = await db()
        .selectFrom('services')
        .select(['id', 'label', 'period_end', 'price_paise'])
        .where('account_id', '=', accountId)
        .orderBy('period_end')
        .orderBy('id')
        .execute();
      const first = services[0];
      assert.ok(first?.period_end, 'a service with a paid period');
      const billed = await u.t.deps.billing.run({ at: first.period_end, accountId });
      assert.deepEqual(
        billed.filter((a) => a.service === first.id).map((a) => a.action),
        ['unpaid'],
      );
      const price = rupeesOf(first.price_paise);
      await page.goto('/');
      const pay = page.getByRole('button', { name: `Pay ${inr(price)}` });
      await pay.first().waitFor();
      await page.getByText('Your balance does not cover this.').first().waitFor();
      await audit(panel, 'dashboard-unpaid');

      // Money reaches the wallet without paying anything by itself (as a refund does), so the
      // customer pays the order with the button.
      await db()
        .transaction()
        .execute((trx) =>
          post(trx, accountId, { kind: 'refund', amountPaise: BigInt(first.price_paise), note: 'journey refund' }),
        );
      await page.reload();
      const row = page.locator('.unpaid-row', { hasText: first.label });
      await row.getByText('Your balance does not cover this.').waitFor({ state: 'detached' });
      await row.getByRole('button', { name: `Pay ${inr(price)}` }).click();
      await page.locator('.alert-success').first().waitFor({ timeout: JOB_WAIT });
      await page.getByRole('heading', { name: 'Unpaid orders' }).waitFor({ state: 'detached', timeout: JOB_WAIT });
      await audit(panel, 'dashboard-paid');
      const orders = await db()
        .selectFrom('orders')
        .select('status')
        .where('service_id', '=', first.id)
        .where('kind', '=', 'renewal')
        .execute();
      assert.deepEqual(
        orders.map((o) => o.status),
        ['paid'],
      );
      assert.equal(BigInt(await u.t.deps.wallet.balance(accountId)), 0n);
      await page.goto(`/services/${first.id}/billing`);
      await page.getByRole('heading', { name: 'Renew' }).waitFor();
      await audit(panel, 'service-billing-paid');
      panel.assertClean();
    });

    test('the account pages, notifications, SSH keys and search', async () => {
      const { page } = panel;
      for (const [path, heading, name] of [
        ['/account', 'Account', 'account'],
        ['/ssh-keys', 'Account', 'ssh-keys'],
        ['/notifications', 'Notifications', 'notifications'],
      ] as const) {
        await page.goto(path);
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        await audit(panel, name);
      }
      // Search from anywhere: Ctrl+K, then the web hosting's name finds it.
      const web = await db().selectFrom('services').select('label').where('id', '=', ids.web).executeTakeFirstOrThrow();
      await page.goto('/');
      await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
      await page.keyboard.press('Control+k');
      const dialog = page.getByRole('dialog', { name: 'Search' });
      await dialog.getByLabel('Search services, IPs, orders and payments').fill(web.label);
      const hit = dialog.getByRole('button', { name: new RegExp(web.label.replace(/[.-]/g, '\\$&')) });
      await hit.first().waitFor({ timeout: JOB_WAIT });
      await audit(panel, 'search');
      await hit.first().click();
      await page.waitForURL(`**/services/${ids.web}`);
      panel.assertClean();
    });

    test('a browser that prefers the dark theme gets it from the first paint', async () => {
      // Every audit above checked its page in both themes (emulated); here the system preference
      // is dark from the start, as on a phone set to dark.
      const dark = await openPanel(browser, base, viewport, 'dark');
      try {
        await dark.context.addCookies(await panel.context.cookies());
        await dark.page.goto('/');
        await dark.page.getByRole('heading', { level: 1 }).waitFor();
        const background = await dark.page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
        assert.equal(background, 'rgb(15, 20, 26)', "the dark theme's background (--bg)");
        await audit(dark, 'dashboard-dark-start');
        dark.assertClean();
      } finally {
        await dark.context.close();
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
