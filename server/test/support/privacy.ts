// A customer with something of everything an account can hold, made through the session surface and
// the staff CLI as a customer and staff would (the data export and deletion tests): billing details, a
// VPS ordered with an SSH key whose comment is their e-mail address, its tax invoice and a credit
// note, wallet money and a reported deposit with its proof file, an API token, an SSH key, two-factor
// sign-in, a termination request with a note. Returns every identifier and secret the tests look for.

import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import sshpk from 'sshpk';
import { runAdmin } from '../../src/admin/run.ts';
import { Browser } from './browser.ts';
import { createAccount, freshIp } from './factories.ts';
import type { TestApp } from './harness.ts';
import { multipart, PNG } from './uploads.ts';
import { waitFor } from './wait.ts';

export const WAIT = 60_000;
export const SERVICES = '/api/v1/client/services/';
export const ACCOUNT = '/api/v1/client/account/';
export const EXPORT = '/api/v1/client/account/export/';

export function sshKey(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'pem');
  key.comment = comment;
  return key.toString('ssh');
}

export async function adminJson(t: TestApp, ...argv: string[]) {
  const result = await runAdmin([...argv, '--json'], async () => t.deps, 'staff:privacy-test');
  assert.equal(result.exitCode, 0, `${argv.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

export interface Customer {
  browser: Browser;
  id: number;
  name: string;
  email: string;
  username: string;
  password: string;
  legalName: string;
  serviceId: number;
  serviceLabel: string;
  orderPublicId: string;
  invoiceNumbers: string[];
  depositPublicId: string;
  ledgerPublicIds: string[];
  tokenSecret: string;
  tokenHint: string;
  sshKeyLine: string;
  sshFingerprint: string;
  totpSecret: string | null;
  recoveryCodes: string[];
}

let n = 0;

/** A signed-in customer (remember: sessions outlive a clock moved by a day). */
export async function signedIn(t: TestApp, name: string) {
  const created = await createAccount(t, { name });
  const browser = new Browser(t, freshIp());
  const res = await browser.login(created.account.username, created.password, { remember: true });
  assert.equal(res.statusCode, 200, res.body);
  return { browser, ...created };
}

export async function orderVps(t: TestApp, browser: Browser, sshLine: string) {
  n += 1;
  const plan = await t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const res = await browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { hostname: `pv${n}-${randomBytes(2).toString('hex')}.example.in`, os: 'debian-12', ssh_keys: [sshLine] },
      idempotency_key: `privacy-${n}-${randomBytes(4).toString('hex')}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const placed = res.json() as { service: { id: number; label: string }; order: { public_id: string } };
  await waitFor(
    'the service to be active',
    async () => (await browser.get(`${SERVICES}?id=${placed.service.id}`)).json().service.status === 'active',
    WAIT,
  );
  return placed;
}

/** A deposit reported with a PNG proof (pending until staff review it). */
export async function reportDeposit(browser: Browser, amount: string) {
  const form = multipart(
    { amount, txn_ref: `UTR${Date.now()}${randomBytes(3).toString('hex')}`, csrf_token: browser.csrfToken as string },
    [{ field: 'screenshot', filename: 'proof.png', contentType: 'image/png', data: PNG }],
  );
  const res = await browser.request('POST', '/api/v1/client/wallet/deposit/', {
    body: form.body,
    headers: { 'content-type': form.contentType },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().deposit as { id: number; public_id: string };
}

/** Turn two-factor sign-in on; the code of `now` is spent, so the caller moves its clock a step on. */
export async function enableTotp(browser: Browser, now: () => Date) {
  const begun = await browser.post('/api/v1/client/account/security/', { action: 'totp_begin' }, { csrf: true });
  assert.equal(begun.statusCode, 200, begun.body);
  const secret = begun.json().secret as string;
  const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: now().getTime() });
  const enabled = await browser.post(
    '/api/v1/client/account/security/',
    { action: 'totp_enable', code },
    { csrf: true },
  );
  assert.equal(enabled.statusCode, 200, enabled.body);
  return { secret, recovery: enabled.json().recovery_codes as string[] };
}

/** A customer with something of everything (see the file's comment). */
export async function richCustomer(
  t: TestApp,
  name: string,
  options: { twoFactor?: boolean; now?: () => Date } = {},
): Promise<Customer> {
  const { browser, account, password } = await signedIn(t, name);
  const legalName = `${name} Traders LLP`;
  const profile = await browser.post(
    '/api/v1/client/account/billing-profile/',
    {
      legal_name: legalName,
      address_line1: `${n + 12}, MG Road`,
      city: 'Pune',
      state_code: '27',
      pincode: '411001',
    },
    { csrf: true },
  );
  assert.equal(profile.statusCode, 200, profile.body);
  await adminJson(t, 'wallet', 'credit', account.email, '1000', '--note', 'float for the test');
  const keyLine = sshKey(account.email);
  const placed = await orderVps(t, browser, keyLine);
  const invoices = (await browser.get('/api/v1/client/invoices/')).json().invoices as { number: string }[];
  assert.equal(invoices.length, 1);
  const invoiceNumber = invoices[0]?.number as string;
  const credit = await t.deps.creditNotes.credit({
    invoice: invoiceNumber,
    reason: 'Goodwill credit for downtime',
    actor: 'staff:privacy-test',
    amount: '10',
  });
  const deposit = await reportDeposit(browser, '250');
  const token = await browser.post('/api/v1/client/tokens/', { name: 'ci bot', scopes: ['read'] }, { csrf: true });
  assert.equal(token.statusCode, 201, token.body);
  const laptop = sshKey(`${account.username}@laptop`);
  const key = await browser.post('/api/v1/client/ssh-keys/', { name: 'laptop', public_key: laptop }, { csrf: true });
  assert.equal(key.statusCode, 201, key.body);
  const ledger = (await browser.get('/api/v1/client/wallet/?per_page=50')).json().transactions as {
    public_id: string;
  }[];
  const totp = options.twoFactor ? await enableTotp(browser, options.now ?? (() => new Date())) : null;
  return {
    browser,
    id: account.id,
    name,
    email: account.email,
    username: account.username,
    password,
    legalName,
    serviceId: placed.service.id,
    serviceLabel: placed.service.label,
    orderPublicId: placed.order.public_id,
    invoiceNumbers: [invoiceNumber, credit.creditNote.number],
    depositPublicId: deposit.public_id,
    ledgerPublicIds: ledger.map((l) => l.public_id),
    tokenSecret: token.json().secret,
    tokenHint: (token.json().token.hint as string).replace('…', ''),
    sshKeyLine: laptop,
    sshFingerprint: key.json().ssh_key.fingerprint,
    totpSecret: totp?.secret ?? null,
    recoveryCodes: totp?.recovery ?? [],
  };
}
