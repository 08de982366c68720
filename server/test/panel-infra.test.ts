// ci: one engine (the browser journey of issue 37's panel cards; their API runs on both engines in rdns/resize/backup-schedule/user-data tests)
// Issue 37's virtual-server pieces of the panel as a customer uses them, in real headless
// Chromium at 1280 px: order a VPS with cloud-init user data typed under "Advanced" (the byte
// counter; the data reaches the emulated Proxmox VM), then on the Manage tab set a reverse DNS
// name (the PowerDNS emulator's zone has the PTR), try a bad one (its error goes once the field is
// edited), clear it; resize to a larger plan (the pro-rata amount shown, confirmed, the job's
// progress, the new plan, the wallet debited by what was shown, the charge said until another plan
// is picked); turn daily backups on (price and charge shown before confirming,
// then the next run) and off. The same pages, in their states, are audited again at 390 px.
// Every state is checked by axe-core in light and dark and saved under test-results/panel/.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type PowerDnsEmulator, startPowerDnsEmulator } from '../../emulators/src/powerdns/index.ts';
import { post } from '../src/core/wallet/ledger.ts';
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
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const skip = chromiumMissing();
let u: UpstreamApp;
let pdns: PowerDnsEmulator;
let browser: Browser;
let base: string;
let login: { username: string; password: string };
let accountId = 0;
let serviceId = 0;

/** Where a job runs (provisioning, resize): generous, never a measure. */
const JOB_WAIT = 60_000;
const USER_DATA = '#cloud-config\nruncmd:\n  - echo infra-from-the-panel\n';
const db = () => u.t.deps.database.db;
const balance = async () => BigInt(await u.t.deps.wallet.balance(accountId));
/** "₹1,234.50" (as the panel shows money) → paise. */
const paiseOf = (shown: string): bigint => {
  const match = /₹([\d,]+\.\d\d)/.exec(shown);
  assert.ok(match, `an amount in ₹ format: ${shown}`);
  return BigInt((match[1] ?? '').replace(/[,.]/g, ''));
};

before(async () => {
  if (skip) return;
  u = await createUpstreamApp();
  // The demo's address ranges: 203.0.113.0/26 (mum1), 198.51.100.0/26 (blr1), 192.0.2.0/27 (del1).
  pdns = await startPowerDnsEmulator({
    zones: ['113.0.203.in-addr.arpa.', '100.51.198.in-addr.arpa.', '2.0.192.in-addr.arpa.'],
  });
  u.t.deps.drivers.configureReverseDns({
    kind: 'powerdns',
    access: { name: 'panel-pdns', endpoint: pdns.url, credentials: { api_key: pdns.apiKey }, settings: {} },
  });
  base = (await u.t.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  browser = await launchChromium();
  const { account, password } = await createAccount(u.t);
  accountId = account.id;
  login = { username: account.username, password };
  await db()
    .transaction()
    .execute((trx) => post(trx, accountId, { kind: 'refund', amountPaise: 300_000n, note: 'panel-infra float' }));
});
after(async () => {
  await browser?.close();
  await u?.close();
  await pdns?.stop();
});

async function signIn(panel: PanelPage): Promise<void> {
  const { page } = panel;
  await page.goto('/login');
  await page.getByLabel('Email or username', { exact: true }).fill(login.username);
  await page.getByLabel('Password', { exact: true }).fill(login.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/');
}

/** The PTR the emulator's zone holds for the address, read over its API as any client would. */
async function zonePtr(ipv4: string): Promise<string | null> {
  const zone = `${ipv4.split('.').slice(0, 3).reverse().join('.')}.in-addr.arpa.`;
  const res = await fetch(`${pdns.url}/api/v1/servers/localhost/zones/${zone}`, {
    headers: { 'x-api-key': pdns.apiKey },
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { rrsets: { name: string; type: string; records: { content: string }[] }[] };
  const owner = `${ipv4.split('.').reverse().join('.')}.in-addr.arpa.`;
  return body.rrsets.find((r) => r.name === owner && r.type === 'PTR')?.records[0]?.content ?? null;
}

/** No job runs on the service and it is active (the page polls). */
async function settled(page: Page): Promise<void> {
  await page.locator('.job-card').waitFor({ state: 'detached', timeout: JOB_WAIT });
  await page
    .locator('.page-header .status')
    .first()
    .filter({ hasText: /^active$/ })
    .waitFor({ timeout: JOB_WAIT });
}

/** Nothing is wider than the phone's screen (no sideways scrolling). */
async function fits(panel: PanelPage, what: string): Promise<void> {
  const width = (await panel.page.evaluate('document.documentElement.scrollWidth')) as number;
  assert.ok(width <= panel.viewport.width, `${what} is ${width} px wide at ${panel.viewport.width} px`);
}

/** Tab moves the focus forward to the element (a keyboard user reaches it without a mouse). */
async function tabTo(page: Page, name: string, limit = 40): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const here = (await page.evaluate(
      "(() => { const e = document.activeElement; return e ? (e.getAttribute('aria-label') ?? e.textContent ?? '').trim() : ''; })()",
    )) as string;
    if (here === name) return;
  }
  assert.fail(`Tab never reached “${name}”`);
}

describe('issue 37 cards in the panel', { skip: skip ?? false }, () => {
  let panel: PanelPage;
  before(async () => {
    panel = await openPanel(browser, base, DESKTOP);
    await signIn(panel);
  });
  after(() => panel?.context.close());

  test('orders a VPS with cloud-init user data under Advanced; the data reaches the VM', async () => {
    const { page } = panel;
    await page.goto('/order/vps');
    await page.getByRole('radio', { name: /^Cloud VPS 1 GB/ }).check();
    await page.getByRole('heading', { name: '2. Set it up' }).waitFor();
    await page.getByLabel('Server name (optional)').fill('infra-1');
    await page.getByText('Advanced', { exact: true }).click();
    const field = page.getByLabel('Cloud-init user data (optional)');
    await field.fill(USER_DATA);
    await page.getByText(`${USER_DATA.length} of 65,536 bytes`).waitFor();
    await audit(panel, 'infra-order-user-data');
    await page.getByRole('button', { name: /^Pay ₹[\d,.]+ from your wallet$/ }).click();
    await page.waitForURL(/\/services\/\d+$/, { timeout: JOB_WAIT });
    serviceId = Number(new URL(page.url()).pathname.split('/').pop());
    await settled(page);

    const row = await db()
      .selectFrom('services')
      .select('external')
      .where('id', '=', serviceId)
      .executeTakeFirstOrThrow();
    const state = (await (await fetch(`${u.pve.url}/__emulator/state`)).json()) as {
      vms: { vmid: number; cloudinit: { user?: string } | null }[];
    };
    const vm = state.vms.find((v) => v.vmid === (row.external as { vmid: number }).vmid);
    assert.match(vm?.cloudinit?.user ?? '', /echo infra-from-the-panel/, 'the user data reached the VM');
    panel.assertClean();
  });

  test('reverse DNS: set (in the zone), a bad name refused beside the field, cleared', async () => {
    const { page } = panel;
    await page.goto(`/services/${serviceId}/manage`);
    const card = page.getByRole('region', { name: 'Reverse DNS' });
    await card.waitFor();
    const ipv4 = ((await card.locator('dd.mono').first().textContent()) ?? '').trim();
    assert.match(ipv4, /^\d+\.\d+\.\d+\.\d+$/);
    await audit(panel, 'infra-manage');

    const name = card.getByLabel('Reverse DNS name', { exact: true });
    await name.fill('mail.example.in');
    await card.getByRole('button', { name: 'Set reverse DNS' }).click();
    await card
      .getByRole('status')
      .filter({ hasText: /mail\.example\.in/ })
      .waitFor();
    await card.locator('dd', { hasText: 'mail.example.in' }).waitFor();
    assert.equal(await zonePtr(ipv4), 'mail.example.in.');

    await name.fill('not a name!');
    await card.getByRole('button', { name: 'Set reverse DNS' }).click();
    await card.locator('.field-error', { hasText: /^(The name must|Not a valid name:) / }).waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    await waitFor('the focus on the refused field', async () =>
      name.evaluate((e) => e === e.ownerDocument.activeElement),
    );
    assert.match((await name.getAttribute('aria-describedby')) ?? '', /error/);
    await audit(panel, 'infra-rdns-invalid');
    assert.equal(await zonePtr(ipv4), 'mail.example.in.', 'a refused name leaves the zone alone');
    // Editing the refused name takes its error away: the message, aria-invalid and the description
    // (the hint stays); the same when the field is emptied after a refusal.
    const describedBy = async () => (await name.getAttribute('aria-describedby')) ?? '';
    for (const edit of ['not-a-name', '']) {
      if (edit === '') {
        await name.fill('not a name!');
        await card.getByRole('button', { name: 'Set reverse DNS' }).click();
        await card.locator('.field-error').waitFor();
      }
      await name.fill(edit);
      await card.locator('.field-error').waitFor({ state: 'detached' });
      assert.equal(await card.locator('.field.has-error').count(), 0);
      assert.equal(await name.getAttribute('aria-invalid'), null, `no aria-invalid after typing “${edit}”`);
      assert.doesNotMatch(await describedBy(), /error/);
      assert.match(await describedBy(), /hint/);
    }

    await card.getByRole('button', { name: 'Clear reverse DNS' }).click();
    await card.locator('dd', { hasText: 'not set' }).waitFor();
    assert.equal(await zonePtr(ipv4), null);
    assert.equal(await name.getAttribute('aria-invalid'), null, 'the old error went with a new answer');
    // Nothing typed: said beside the field, nothing sent.
    const calls = pdns.calls.length;
    await card.getByRole('button', { name: 'Set reverse DNS' }).click();
    await card.locator('.field.has-error', { hasText: /Enter a name/ }).waitFor();
    assert.equal(pdns.calls.length, calls);
    panel.assertClean([/status of 422/]);
  });

  test('resize: the pro-rata amount shown, confirmed, progress, the new plan, the wallet debited by it', async () => {
    const { page } = panel;
    const card = page.getByRole('region', { name: 'Resize' });
    await card.getByText('Cloud VPS 4 GB').first().waitFor();
    // The keyboard reaches the card's buttons.
    await page.getByRole('heading', { name: 'Resize' }).click();
    await tabTo(page, 'Resize to Cloud VPS 4 GB');
    await page.keyboard.press('Enter');
    const pay = card.getByRole('button', { name: /^Pay ₹[\d,.]+ and resize to Cloud VPS 4 GB$/ });
    await pay.waitFor();
    await waitFor('the focus on the confirmation', async () =>
      pay.evaluate((e) => e === e.ownerDocument.activeElement),
    );
    const shown = paiseOf((await pay.textContent()) ?? '');
    assert.ok(shown > 0n);
    await audit(panel, 'infra-resize-confirm');
    const before = await balance();
    await pay.click();
    await page
      .locator('.job-card')
      .waitFor({ timeout: JOB_WAIT })
      .catch(() => undefined);
    await settled(page);
    await card.getByText(/^Now: Cloud VPS 4 GB/).waitFor({ timeout: JOB_WAIT });
    const charged = card.getByRole('status').filter({ hasText: /to Cloud VPS 4 GB: ₹[\d,.]+ charged/ });
    await charged.waitFor();
    const plan = await db()
      .selectFrom('services')
      .innerJoin('plans', 'plans.id', 'services.plan_id')
      .select('plans.label')
      .where('services.id', '=', serviceId)
      .executeTakeFirstOrThrow();
    assert.equal(plan.label, 'vps-2c-4g');
    assert.equal(await balance(), before - shown, 'the wallet paid what the card showed');
    await audit(panel, 'infra-resized');
    // Another plan picked: the last resize's message is not about it, and does not come back on Cancel.
    await card.getByRole('button', { name: 'Resize to Cloud VPS 8 GB' }).click();
    await card.getByRole('button', { name: /^Pay ₹[\d,.]+ and resize to Cloud VPS 8 GB$/ }).waitFor();
    assert.equal(await charged.count(), 0, 'the message went with the new choice');
    await card.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await charged.count(), 0, 'and stays gone');
    assert.equal(await card.getByRole('status').count(), 0);
    panel.assertClean();
  });

  test('scheduled backups: daily at an hour keeping N, price and charge before confirming, then off', async () => {
    const { page } = panel;
    const card = page.getByRole('region', { name: 'Scheduled backups' });
    await card.getByLabel('Frequency').selectOption('daily');
    await card.getByLabel('Hour (IST)').selectOption('4');
    await card.getByLabel('Snapshots to keep').fill('5');
    await card.getByText(/₹[\d,.]+ a month/).waitFor();
    await card.getByRole('button', { name: 'Turn on scheduled backups' }).click();
    const pay = card.getByRole('button', { name: /^Pay ₹[\d,.]+ and turn on$/ });
    await pay.waitFor();
    await card.getByText(/daily at 04:00 IST, keeping the newest 5/).waitFor();
    await waitFor('the focus on the confirmation', async () =>
      pay.evaluate((e) => e === e.ownerDocument.activeElement),
    );
    const charge = paiseOf((await pay.textContent()) ?? '');
    await audit(panel, 'infra-backups-confirm');
    const before = await balance();
    await pay.click();
    await card
      .getByRole('status')
      .filter({ hasText: /Scheduled backups are daily/ })
      .waitFor();
    const next = card.locator('dt', { hasText: 'Next run' }).locator('xpath=following-sibling::dd[1]');
    await waitFor('the next run shown', async () => /IST|GMT|\d{4}/.test((await next.textContent()) ?? ''));
    assert.match((await next.textContent()) ?? '', /4:00/);
    assert.equal(await balance(), before - charge, 'the wallet paid the charge shown');
    await audit(panel, 'infra-backups-on');

    await card.getByLabel('Frequency').selectOption('off');
    await card.getByText(/this period is not refunded/).waitFor();
    await card.getByRole('button', { name: 'Turn off scheduled backups' }).click();
    await waitFor('the next run gone', async () => ((await next.textContent()) ?? '').trim() === '—');
    assert.equal(await balance(), before - charge, 'turning off charges nothing');
    await audit(panel, 'infra-backups-off');
    panel.assertClean();
  });

  test('the same pages at 390 px: the order form, the cards, their confirmations and an error', async () => {
    const phone = await openPanel(browser, base, PHONE);
    try {
      const { page } = phone;
      await signIn(phone);
      await page.goto('/order/vps');
      await page.getByRole('radio', { name: /^Cloud VPS 1 GB/ }).check();
      await page.getByText('Advanced', { exact: true }).click();
      await page.getByLabel('Cloud-init user data (optional)').fill(USER_DATA);
      await page.getByText(`${USER_DATA.length} of 65,536 bytes`).waitFor();
      await audit(phone, 'infra-order-user-data');
      await fits(phone, 'infra-order-user-data');

      await page.goto(`/services/${serviceId}/manage`);
      await page.getByRole('region', { name: 'Reverse DNS' }).waitFor();
      await audit(phone, 'infra-manage');
      await fits(phone, 'infra-manage');
      const rdns = page.getByRole('region', { name: 'Reverse DNS' });
      await rdns.getByLabel('Reverse DNS name', { exact: true }).fill('-bad-.example');
      await rdns.getByRole('button', { name: 'Set reverse DNS' }).click();
      await rdns.locator('.field.has-error').waitFor();
      await audit(phone, 'infra-rdns-invalid');
      await fits(phone, 'infra-rdns-invalid');

      const resize = page.getByRole('region', { name: 'Resize' });
      await resize.getByRole('button', { name: 'Resize to Cloud VPS 8 GB' }).click();
      await resize.getByRole('button', { name: /^Pay ₹[\d,.]+ and resize to Cloud VPS 8 GB$/ }).waitFor();
      await audit(phone, 'infra-resize-confirm');
      await fits(phone, 'infra-resize-confirm');
      // Escape closes the confirmation and the keyboard is back on the button that opened it.
      await page.keyboard.press('Escape');
      const opener = resize.getByRole('button', { name: 'Resize to Cloud VPS 8 GB' });
      await waitFor('the focus back on Resize', async () =>
        opener.evaluate((e) => e === e.ownerDocument.activeElement),
      );

      const backups = page.getByRole('region', { name: 'Scheduled backups' });
      await backups.getByLabel('Frequency').selectOption('weekly');
      await backups.getByRole('button', { name: 'Turn on scheduled backups' }).click();
      await backups.getByRole('button', { name: /^Pay ₹[\d,.]+ and turn on$/ }).waitFor();
      await audit(phone, 'infra-backups-confirm');
      await fits(phone, 'infra-backups-confirm');
      await backups.getByRole('button', { name: 'Cancel' }).click();
      phone.assertClean([/status of 422/]);
    } finally {
      await phone.context.close();
    }
  });
});
