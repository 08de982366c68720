// Test data made through the core services (not raw SQL), so it obeys the same rules as real data.

import { randomBytes } from 'node:crypto';
import type { Account, MailRow } from '../../src/db/tables.ts';
import { Browser } from './browser.ts';
import type { TestApp } from './harness.ts';

export interface TestAccount {
  account: Account;
  password: string;
}

let counter = 0;

export async function createAccount(
  t: TestApp,
  options: { verified?: boolean; suspended?: boolean; password?: string; name?: string } = {},
): Promise<TestAccount> {
  counter += 1;
  const tag = `${counter}${randomBytes(3).toString('hex')}`;
  const password = options.password ?? `pw-${tag}-9x`;
  let account = await t.deps.accounts.register({
    name: options.name ?? `Test User ${tag}`,
    email: `user${tag}@example.in`,
    username: `user${tag}`,
    password,
  });
  if (options.verified ?? true) account = await t.deps.accounts.markVerified(account.id);
  if (options.suspended) account = (await t.deps.accounts.suspend(account.id, 'test')).account;
  return { account, password };
}

/** A browser signed in as a new verified account. */
export async function signedInBrowser(t: TestApp, ip?: string): Promise<{ browser: Browser } & TestAccount> {
  const created = await createAccount(t);
  const browser = new Browser(t, ip);
  const res = await browser.login(created.account.username, created.password);
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return { browser, ...created };
}

/** The newest mail to an address, decrypted from the outbox (whatever its delivery state). */
export async function lastMail(t: TestApp, to: string): Promise<{ row: MailRow; text: string; html: string }> {
  const row = await t.deps.database.db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('to_address', '=', to)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  const content = t.deps.mailer.read(row);
  if (!content) throw new Error(`mail ${row.id} has no body left`);
  return { row, text: content.text, html: content.html };
}

export function linkToken(text: string, path: 'verify' | 'reset'): string {
  const match = new RegExp(`/${path}\\?token=([A-Za-z0-9_-]+)`).exec(text);
  if (!match?.[1]) throw new Error(`no ${path} link in: ${text}`);
  return match[1];
}

export function loginCode(text: string): string {
  const match = /code is (\d{6})/.exec(text);
  if (!match?.[1]) throw new Error(`no code in: ${text}`);
  return match[1];
}

/** A unique client address, so per-IP limits of one test do not spill into another. */
let ipCounter = 0;
export function freshIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}
