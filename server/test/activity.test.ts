// The activity log a customer reads (issue 36, CONTRACT §11): every source of an event — sign-ins
// and refused ones, two-factor changes, passwords, sessions, API tokens, staff commands, deposits
// (reported, decided by staff, reconciled, paid online, refunded), orders, payments, single sign-on
// and consoles — logs exactly one event with the right type and actor; no secret used on the way
// is ever in the log; an account sees only its own; the type filter and paging; the one-year
// retention (the app's clock moved); the new-device mail, once per new device.
//
// Two apps: `t`, on a clock the tests move, for what needs no upstream; `u`, with the worker, the
// hypervisor and web-hosting emulators and the Razorpay emulator, for orders, payments, SSO,
// consoles and online deposits.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import WebSocket from 'ws';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { localInputs } from '../src/admin/inputs.ts';
import { runAdmin } from '../src/admin/run.ts';
import { ACTIVITY_TYPES } from '../src/core/activity/activity.ts';
import type { ActivityRow } from '../src/db/tables.ts';
import { jobHandlers } from '../src/worker/worker.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, linkToken, loginCode, type TestAccount } from './support/factories.ts';
import { createTestApp, ManualClock, silentLogger, type TestApp } from './support/harness.ts';
import { multipart, PNG } from './support/uploads.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const ACTIVITY = '/api/v1/client/account/activity/';
const SECURITY = '/api/v1/client/account/security/';
const DEPOSIT = '/api/v1/client/wallet/deposit/';
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0';
const SAFARI_IOS =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

const clock = new ManualClock();
let t: TestApp;
let u: UpstreamApp;
let emu: RazorpayEmulator;
let wsBase: string;
/** Every secret the tests hand the app; none may ever be in the log. */
const secrets = new Set<string>();

before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  emu = await startRazorpayEmulator({});
  u = await createUpstreamApp({
    web: true,
    env: {
      RAZORPAY_KEY_ID: emu.keyId,
      RAZORPAY_KEY_SECRET: emu.keySecret,
      RAZORPAY_WEBHOOK_SECRET: emu.webhookSecret,
      RAZORPAY_API_URL: emu.url,
    },
  });
  wsBase = (await u.t.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
});
after(async () => {
  await t?.close();
  await u?.close();
  await emu?.stop();
});

const inputs = localInputs();
const adminOf =
  (app: TestApp) =>
  (...argv: string[]) =>
    runAdmin(argv, async () => app.deps, 'staff:priya', inputs);

/** The account's log as stored, oldest first (of one type when given). */
async function rows(app: TestApp, accountId: number, type?: string): Promise<ActivityRow[]> {
  let query = app.deps.database.db.selectFrom('account_activity').selectAll().where('account_id', '=', accountId);
  if (type) query = query.where('type', '=', type);
  return query.orderBy('id').execute();
}

/** The one event of `type` the account has (fails on none or more). */
async function only(app: TestApp, accountId: number, type: string): Promise<ActivityRow> {
  const found = await rows(app, accountId, type);
  assert.equal(found.length, 1, `exactly one ${type}: ${JSON.stringify(found)}`);
  return found[0] as ActivityRow;
}

/** A browser that sends `userAgent` with every request. */
class Device extends Browser {
  readonly userAgent: string;
  constructor(app: TestApp, userAgent: string, ip = freshIp()) {
    super(app, ip);
    this.userAgent = userAgent;
  }
  override request(method: 'GET' | 'POST' | 'DELETE', url: string, options: Parameters<Browser['request']>[2] = {}) {
    return super.request(method, url, { ...options, headers: { 'user-agent': this.userAgent, ...options.headers } });
  }
}

async function signIn(app: TestApp, who: TestAccount, userAgent = CHROME_WINDOWS): Promise<Device> {
  const device = new Device(app, userAgent);
  const res = await device.login(who.account.username, who.password);
  assert.equal(res.statusCode, 200, res.body);
  if (device.sessionId) secrets.add(device.sessionId);
  return device;
}

/** An account verified as a customer verifies it: with the link of the mail (no staff event). */
async function newAccount(app: TestApp = t): Promise<TestAccount> {
  const made = await createAccount(app, { verified: false });
  const token = linkToken((await lastMail(app, made.account.email)).text, 'verify');
  secrets.add(token);
  secrets.add(made.password);
  return { ...made, account: await app.deps.accounts.verifyEmail(token) };
}

const codeOf = (secret: string) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() });

describe('sign-ins', () => {
  test('a password sign-in logs one sign_in (self, the address, the device); a wrong password one sign_in_failed', async () => {
    const a = await newAccount();
    const device = new Device(t, CHROME_WINDOWS);
    await device.bootstrap();
    // The address is the app's reading of it: a forwarded-for from a proxy it does not trust is not believed.
    const res = await device.post(
      '/api/v1/client/auth/login/',
      { identifier: a.account.username, password: a.password, csrf_token: device.csrfToken },
      { headers: { 'x-forwarded-for': '198.51.100.77' } },
    );
    assert.equal(res.statusCode, 200, res.body);
    secrets.add(device.sessionId as string);
    const signedIn = await only(t, a.account.id, 'sign_in');
    assert.equal(signedIn.actor, 'self');
    assert.equal(signedIn.ip, device.ip);
    assert.equal(signedIn.staff_name, null);
    assert.deepEqual(signedIn.details, { method: 'password', device: 'Chrome on Windows' });
    assert.match(signedIn.summary, /your password \(Chrome on Windows\)/);

    const wrong = await new Device(t, FIREFOX_LINUX).login(a.account.username, 'not-the-password-1');
    assert.equal(wrong.statusCode, 401);
    const failed = await only(t, a.account.id, 'sign_in_failed');
    assert.equal(failed.actor, 'self');
    assert.deepEqual(failed.details, { method: 'password', reason: 'wrong_password', device: 'Firefox on Linux' });
    assert.equal((await rows(t, a.account.id, 'sign_in')).length, 1, 'a refusal is no sign-in');

    // An identifier of no account has no log to write to.
    const before = await t.deps.database.db.selectFrom('account_activity').select('id').execute();
    assert.equal((await new Device(t, FIREFOX_LINUX).login('nobody-here', 'whatever-1')).statusCode, 401);
    const after = await t.deps.database.db.selectFrom('account_activity').select('id').execute();
    assert.equal(after.length, before.length);
  });

  test('a locked-out attempt logs locked_out, even with the right password', async () => {
    const a = await newAccount();
    const device = new Device(t, CHROME_WINDOWS);
    for (let i = 0; i < 5; i++) assert.equal((await device.login(a.account.username, `wrong-${i}-x`)).statusCode, 401);
    assert.equal((await device.login(a.account.username, a.password)).statusCode, 429);
    const failed = await rows(t, a.account.id, 'sign_in_failed');
    assert.deepEqual(
      failed.map((r) => r.details.reason),
      ['wrong_password', 'wrong_password', 'wrong_password', 'wrong_password', 'wrong_password', 'locked_out'],
    );
    assert.equal((await rows(t, a.account.id, 'sign_in')).length, 0);
  });

  test('an e-mailed code: a wrong one logs sign_in_failed, the right one sign_in (email_code)', async () => {
    const a = await newAccount();
    const device = new Device(t, SAFARI_IOS);
    const otp = '/api/v1/client/auth/otp-login/';
    await device.post(otp, { action: 'request', identifier: a.account.email });
    const code = loginCode((await lastMail(t, a.account.email)).text);
    secrets.add(code);
    const wrongCode = code === '000000' ? '111111' : '000000';
    assert.equal(
      (await device.post(otp, { action: 'verify', identifier: a.account.email, code: wrongCode })).statusCode,
      401,
    );
    assert.equal((await device.post(otp, { action: 'verify', identifier: a.account.email, code })).statusCode, 200);
    const failed = await only(t, a.account.id, 'sign_in_failed');
    assert.deepEqual(failed.details, { method: 'email_code', reason: 'wrong_code', device: 'Safari on iOS' });
    const signedIn = await only(t, a.account.id, 'sign_in');
    assert.deepEqual(signedIn.details, { method: 'email_code', device: 'Safari on iOS' });
  });
});

describe('two-factor sign-in', () => {
  test('on, off, new recovery codes and the sign-ins through it: one event each, the staff reset as staff', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    const begun = await device.post(SECURITY, { action: 'totp_begin' }, { csrf: true });
    const secret = begun.json().secret as string;
    secrets.add(secret);
    const enabled = await device.post(SECURITY, { action: 'totp_enable', code: codeOf(secret) }, { csrf: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
    const recovery = enabled.json().recovery_codes as string[];
    for (const c of recovery) secrets.add(c);
    const on = await only(t, a.account.id, 'two_factor_enabled');
    assert.equal(on.actor, 'self');
    assert.equal(on.ip, device.ip);

    // The password alone is half a sign-in: nothing logged until the second step.
    clock.advance(60);
    const laptop = new Device(t, FIREFOX_LINUX);
    assert.equal((await laptop.login(a.account.username, a.password)).json().two_factor_required, true);
    assert.equal((await rows(t, a.account.id, 'sign_in')).length, 1);
    const wrong = await laptop.post('/api/v1/client/auth/2fa/', { code: '000000' }, { csrf: true });
    assert.equal(wrong.statusCode, 422);
    const failed = await only(t, a.account.id, 'sign_in_failed');
    assert.deepEqual(failed.details, { method: 'two_factor', reason: 'wrong_code', device: 'Firefox on Linux' });
    const right = await laptop.post('/api/v1/client/auth/2fa/', { code: codeOf(secret) }, { csrf: true });
    assert.equal(right.statusCode, 200, right.body);
    const signIns = await rows(t, a.account.id, 'sign_in');
    assert.equal(signIns.length, 2);
    assert.deepEqual(signIns[1]?.details, { method: 'two_factor', factor: 'totp', device: 'Firefox on Linux' });
    assert.equal(signIns[1]?.ip, laptop.ip);

    const phone = new Device(t, SAFARI_IOS);
    await phone.login(a.account.username, a.password);
    const viaRecovery = await phone.post('/api/v1/client/auth/2fa/', { recovery_code: recovery[0] }, { csrf: true });
    assert.equal(viaRecovery.statusCode, 200, viaRecovery.body);
    assert.equal((await rows(t, a.account.id, 'sign_in'))[2]?.details.factor, 'recovery_code');

    clock.advance(60);
    const regenerated = await device.post(
      SECURITY,
      { action: 'recovery_regenerate', code: codeOf(secret) },
      { csrf: true },
    );
    assert.equal(regenerated.statusCode, 200, regenerated.body);
    for (const c of regenerated.json().recovery_codes as string[]) secrets.add(c);
    await only(t, a.account.id, 'two_factor_recovery_regenerated');

    clock.advance(60);
    const off = await device.post(
      SECURITY,
      { action: 'totp_disable', password: a.password, code: codeOf(secret) },
      { csrf: true },
    );
    assert.equal(off.statusCode, 200, off.body);
    assert.deepEqual((await only(t, a.account.id, 'two_factor_disabled')).details, { confirmed_with: 'totp' });

    const reset = await adminOf(t)('accounts', '2fa-reset', a.account.email);
    assert.equal(reset.exitCode, 0, reset.stderr);
    const byStaff = await only(t, a.account.id, 'two_factor_reset');
    assert.equal(byStaff.actor, 'staff');
    assert.equal(byStaff.staff_name, 'operator', 'never the login of the staff member');
    assert.equal(byStaff.ip, null);
    assert.deepEqual(byStaff.details, { was_on: false, sessions_ended: 3 });
  });
});

describe('passwords, sessions and tokens', () => {
  test('a password change and a reset log one password_changed each', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    await signIn(t, a, FIREFOX_LINUX);
    const changed = await device.post(
      '/api/v1/client/account/',
      { current_password: a.password, password: 'brand-new-pass-7' },
      { csrf: true },
    );
    assert.equal(changed.statusCode, 200, changed.body);
    secrets.add('brand-new-pass-7');
    const first = await only(t, a.account.id, 'password_changed');
    assert.deepEqual(first.details, { how: 'account_settings', sessions_ended: 1 });
    assert.equal(first.ip, device.ip);

    await new Device(t, CHROME_WINDOWS).post('/api/v1/client/auth/forgot/', { identifier: a.account.email });
    const token = linkToken((await lastMail(t, a.account.email)).text, 'reset');
    secrets.add(token);
    const stranger = new Device(t, SAFARI_IOS);
    const reset = await stranger.post('/api/v1/client/auth/reset/', { token, password: 'reset-pass-word-8' });
    assert.equal(reset.statusCode, 200, reset.body);
    secrets.add('reset-pass-word-8');
    const both = await rows(t, a.account.id, 'password_changed');
    assert.equal(both.length, 2);
    assert.equal(both[1]?.ip, stranger.ip);
    assert.deepEqual(both[1]?.details, { how: 'reset_link', sessions_ended: 1, tokens_revoked: 0 });
  });

  test('ending one session, then every other: one session_revoked each; an unknown id logs nothing', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    await signIn(t, a, FIREFOX_LINUX);
    await signIn(t, a, SAFARI_IOS);
    const listed = (await device.get('/api/v1/client/account/sessions/')).json().sessions as {
      id: number;
      device: string;
      current: boolean;
    }[];
    const phone = listed.find((s) => s.device === 'Safari on iOS');
    assert.ok(phone);
    const sessions = '/api/v1/client/account/sessions/';
    assert.equal((await device.post(sessions, { action: 'revoke', id: phone.id }, { csrf: true })).statusCode, 200);
    assert.equal((await device.post(sessions, { action: 'revoke', id: 999_999 }, { csrf: true })).statusCode, 404);
    const one = await only(t, a.account.id, 'session_revoked');
    assert.equal(one.details.session, phone.id);
    assert.equal(one.details.device, 'Safari on iOS');
    assert.equal(one.details.current, false);
    const others = await device.post(sessions, { action: 'revoke_others' }, { csrf: true });
    assert.equal(others.json().sessions_ended, 1);
    // Nothing left to end: no event.
    await device.post(sessions, { action: 'revoke_others' }, { csrf: true });
    const revoked = await rows(t, a.account.id, 'session_revoked');
    assert.equal(revoked.length, 2);
    assert.equal(revoked[1]?.details.sessions_ended, 1);
  });

  test('a token created and revoked: one event each, a second revoke logs nothing; the secret is never there', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    const made = await device.post('/api/v1/client/tokens/', { name: 'deploy bot', scopes: ['read'] }, { csrf: true });
    assert.equal(made.statusCode, 201, made.body);
    secrets.add(made.json().secret);
    const id = made.json().token.id as number;
    for (let i = 0; i < 2; i++) {
      const res = await device.post('/api/v1/client/tokens/', { action: 'revoke', id }, { csrf: true });
      assert.equal(res.statusCode, 200, res.body);
    }
    const created = await only(t, a.account.id, 'token_created');
    assert.equal(created.details.token_id, id);
    assert.equal(created.details.name, 'deploy bot');
    assert.match(String(created.details.hint), /^svc_.{4}…$/);
    assert.equal((await only(t, a.account.id, 'token_revoked')).details.token_id, id);
  });
});

describe('staff commands and deposits', () => {
  test('suspend, unsuspend, verify and a wallet credit are staff events of "operator"', async () => {
    const a = await newAccount();
    const unverified = await createAccount(t, { verified: false });
    const admin = adminOf(t);
    for (const argv of [
      ['accounts', 'suspend', a.account.email, '--reason', 'chargeback investigation'],
      ['accounts', 'unsuspend', a.account.email],
      ['wallet', 'credit', a.account.email, '250', '--note', 'goodwill for the outage'],
      ['accounts', 'verify', unverified.account.email],
      ['accounts', 'verify', unverified.account.email],
    ]) {
      const res = await admin(...argv);
      assert.equal(res.exitCode, 0, `${argv.join(' ')}: ${res.stderr}`);
    }
    for (const type of ['staff_account_suspended', 'staff_account_unsuspended', 'staff_wallet_credited']) {
      const row = await only(t, a.account.id, type);
      assert.equal(row.actor, 'staff', type);
      assert.equal(row.staff_name, 'operator', type);
    }
    assert.equal((await only(t, a.account.id, 'staff_wallet_credited')).details.amount, '250.00');
    assert.doesNotMatch(JSON.stringify(await rows(t, a.account.id)), /priya|chargeback/, 'staff notes stay staff');
    // Verifying an address already verified changes nothing, and logs nothing.
    await only(t, unverified.account.id, 'staff_email_verified');
  });

  test('a deposit reported (self), approved and rejected by staff, approved by a reconciliation (system)', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    const report = async (amount: string, ref: string) => {
      const form = multipart({ amount, txn_ref: ref, csrf_token: device.csrfToken as string }, [
        { field: 'screenshot', filename: 'proof.png', contentType: 'image/png', data: PNG },
      ]);
      const res = await device.request('POST', DEPOSIT, {
        body: form.body,
        headers: { 'content-type': form.contentType },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().deposit as { id: number; public_id: string };
    };
    const approved = await report('100', 'UTRACT0001');
    const rejected = await report('50', 'UTRACT0002');
    const reconciled = await report('75', '512398765432');
    const created = await rows(t, a.account.id, 'deposit_created');
    assert.equal(created.length, 3);
    assert.ok(created.every((r) => r.actor === 'self' && r.ip === device.ip));
    assert.equal(created[0]?.details.deposit, approved.public_id);

    const admin = adminOf(t);
    assert.equal((await admin('deposits', 'approve', String(approved.id))).exitCode, 0);
    assert.equal((await admin('deposits', 'reject', String(rejected.id), '--reason', 'no such payment')).exitCode, 0);
    const dir = mkdtempSync(join(tmpdir(), 'hostplane-activity-'));
    const today = new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);
    const [yyyy, mm, dd] = today.split('-');
    const file = join(dir, 'statement.csv');
    writeFileSync(file, `Date,UTR,Amount\n${dd}/${mm}/${yyyy},512398765432,75.00\n`);
    const imported = await admin('deposits', 'reconcile', file);
    assert.equal(imported.exitCode, 0, imported.stderr);
    assert.equal((await admin('deposits', 'reconcile', file)).exitCode, 0, 'a second import approves nothing');

    const decided = await rows(t, a.account.id, 'deposit_approved');
    assert.equal(decided.length, 2);
    assert.deepEqual(
      decided.map((r) => [r.details.deposit, r.actor, r.staff_name]),
      [
        [approved.public_id, 'staff', 'operator'],
        [reconciled.public_id, 'system', null],
      ],
    );
    const no = await only(t, a.account.id, 'deposit_rejected');
    assert.equal(no.actor, 'staff');
    assert.equal(no.details.reason, 'no such payment');
  });
});

describe('reading the log', () => {
  test('newest first, a page at a time, filtered by a type or a prefix; an unknown type is 422', async () => {
    const a = await newAccount();
    const device = await signIn(t, a);
    await device.post('/api/v1/client/tokens/', { name: 'one', scopes: ['read'] }, { csrf: true });
    await device.post('/api/v1/client/tokens/', { name: 'two', scopes: ['read'] }, { csrf: true });
    await new Device(t, FIREFOX_LINUX).login(a.account.username, 'wrong-password-1');
    const all = (await device.get(ACTIVITY)).json();
    assert.deepEqual(
      all.events.map((e: { type: string }) => e.type),
      ['sign_in_failed', 'token_created', 'token_created', 'sign_in'],
    );
    assert.deepEqual(all.pagination, { page: 1, per_page: 20, total: 4, pages: 1 });
    const first = all.events[3];
    assert.equal(first.actor, 'self');
    assert.equal(first.ip, device.ip);
    assert.equal('staff_name' in first, false);
    assert.match(first.at, /\+00:00$/);

    const page2 = (await device.get(`${ACTIVITY}?per_page=3&page=2`)).json();
    assert.deepEqual(page2.pagination, { page: 2, per_page: 3, total: 4, pages: 2 });
    assert.deepEqual(
      page2.events.map((e: { id: number }) => e.id),
      [first.id],
    );
    const exact = (await device.get(`${ACTIVITY}?type=sign_in`)).json();
    assert.deepEqual(
      exact.events.map((e: { type: string }) => e.type),
      ['sign_in'],
    );
    const prefix = (await device.get(`${ACTIVITY}?type=token`)).json();
    assert.equal(prefix.pagination.total, 2);
    assert.equal((await device.get(`${ACTIVITY}?type=two_factor`)).json().pagination.total, 0);
    for (const bad of ['nonsense', 'tw', 'sign_in_', '%25']) {
      const res = await device.get(`${ACTIVITY}?type=${bad}`);
      assert.equal(res.statusCode, 422, bad);
      assert.ok(res.json().errors.type, bad);
    }
    assert.equal((await new Browser(t).get(ACTIVITY)).statusCode, 401);
  });

  test('an account sees its own events only', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const deviceA = await signIn(t, a);
    const deviceB = await signIn(t, b);
    await deviceA.post('/api/v1/client/tokens/', { name: 'mine', scopes: ['read'] }, { csrf: true });
    const seen = (await deviceB.get(`${ACTIVITY}?per_page=100`)).json().events as { id: number }[];
    const ids = new Set(seen.map((e) => e.id));
    for (const row of await rows(t, a.account.id)) assert.equal(ids.has(Number(row.id)), false);
    assert.deepEqual(
      seen.map((e) => e.id),
      (await rows(t, b.account.id)).map((r) => Number(r.id)).reverse(),
    );
  });

  test('the table is append-only: an UPDATE is refused', async () => {
    await assert.rejects(
      t.deps.database.db.updateTable('account_activity').set({ summary: 'rewritten' }).execute(),
      /append-only/,
    );
  });

  test('every type the log may hold is one the filter accepts', () => {
    assert.equal(new Set(ACTIVITY_TYPES).size, ACTIVITY_TYPES.length);
    for (const prefix of ['sign_in', 'two_factor', 'passkey', 'deposit', 'export', 'deletion', 'staff']) {
      assert.ok(
        ACTIVITY_TYPES.some((type) => type === prefix || type.startsWith(`${prefix}_`)),
        prefix,
      );
    }
  });
});

describe('the new-device mail', () => {
  const newSignIns = async (email: string) =>
    t.deps.database.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('to_address', '=', email)
      .where('template', '=', 'new_sign_in')
      .execute();

  test('not for the first sign-in nor a known device; once for a new one, however many sign in at once', async () => {
    const a = await newAccount();
    await signIn(t, a);
    await signIn(t, a);
    assert.equal((await newSignIns(a.account.email)).length, 0);
    const laptop = await signIn(t, a, FIREFOX_LINUX);
    assert.equal((await newSignIns(a.account.email)).length, 1);
    const mail = await lastMail(t, a.account.email);
    assert.equal(mail.row.subject, 'New sign-in to your Hostplane account');
    assert.match(mail.text, /Device: Firefox on Linux/);
    assert.match(mail.text, new RegExp(`IP address: ${laptop.ip.replaceAll('.', '\\.')}`));
    assert.match(mail.text, /IST \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
    assert.match(mail.text, /change your password now/);
    assert.match(mail.text, /http:\/\/localhost:8080\/account\/activity/);
    await signIn(t, a, FIREFOX_LINUX);
    assert.equal((await newSignIns(a.account.email)).length, 1);
    // Two sign-ins from one new device at the same moment: one mail.
    const phones = [new Device(t, SAFARI_IOS), new Device(t, SAFARI_IOS)];
    for (const p of phones) await p.bootstrap();
    const answers = await Promise.all(phones.map((p) => p.login(a.account.username, a.password)));
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    assert.equal((await newSignIns(a.account.email)).length, 2);
    assert.equal((await rows(t, a.account.id, 'sign_in')).length, 6);
  });
});

describe('orders, payments, single sign-on, consoles and online deposits', () => {
  const db = () => u.t.deps.database.db;
  let customer: TestAccount;
  let device: Device;
  let vps: number;

  const settled = (jobId: number) =>
    waitFor(
      `job ${jobId}`,
      async () => {
        const j = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
        return j.status === 'succeeded' || j.status === 'failed' ? j : null;
      },
      60_000,
    );
  const planId = async (label: string) =>
    (await db().selectFrom('plans').select('id').where('label', '=', label).executeTakeFirstOrThrow()).id;
  const order = async (body: Record<string, unknown>) => {
    const res = await device.post('/api/v1/client/orders/', body, { csrf: true });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal((await settled(res.json().job.id)).status, 'succeeded');
    return res.json().service.id as number;
  };

  before(async () => {
    customer = await newAccount(u.t);
    device = await signIn(u.t, customer);
    assert.equal(
      (await adminOf(u.t)('wallet', 'credit', customer.account.email, '3000', '--note', 'float')).exitCode,
      0,
    );
  });

  test("an order logs order_placed (self); a renewal payment (self); the cycle's payment (system)", async () => {
    vps = await order({
      plan_id: await planId('vps-1c-1g'),
      config: { server_name: 'activity-vps', region: 'mum1' },
      idempotency_key: 'activity-order-1',
    });
    // A replay of the same order places nothing and logs nothing.
    const replay = await device.post(
      '/api/v1/client/orders/',
      {
        plan_id: await planId('vps-1c-1g'),
        config: { server_name: 'activity-vps', region: 'mum1' },
        idempotency_key: 'activity-order-1',
      },
      { csrf: true },
    );
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    const placed = await only(u.t, customer.account.id, 'order_placed');
    assert.equal(placed.actor, 'self');
    assert.equal(placed.ip, device.ip);
    assert.equal(placed.details.service_id, vps);
    assert.equal(placed.details.label, 'activity-vps');

    const renewed = await device.post('/api/v1/client/services/', { id: vps, action: 'renew' }, { csrf: true });
    assert.equal(renewed.statusCode, 200, renewed.body);
    const paid = await only(u.t, customer.account.id, 'payment');
    assert.equal(paid.actor, 'self');
    assert.equal(paid.details.service_id, vps);

    const service = await db().selectFrom('services').selectAll().where('id', '=', vps).executeTakeFirstOrThrow();
    await u.t.deps.billing.run({
      at: new Date((service.period_end as Date).getTime() + 3_600_000),
      accountId: customer.account.id,
    });
    const payments = await rows(u.t, customer.account.id, 'payment');
    assert.equal(payments.length, 2);
    assert.equal(payments[1]?.actor, 'system');
    assert.match(payments[1]?.summary ?? '', /automatically/);

    const invoice = await db()
      .selectFrom('invoices')
      .select('number')
      .where('account_id', '=', customer.account.id)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const credited = await adminOf(u.t)(
      'invoices',
      'credit',
      invoice.number,
      '--reason',
      'outage credit',
      '--amount',
      '10',
    );
    assert.equal(credited.exitCode, 0, credited.stderr);
    const staff = await only(u.t, customer.account.id, 'staff_invoice_credited');
    assert.equal(staff.details.invoice, invoice.number);
    assert.equal(staff.staff_name, 'operator');
  });

  test('a console opened logs console once (its ticket used); a sign-in link to a panel logs sso, never its URL', async () => {
    const sso = await device.get(`/api/v1/client/services/?id=${vps}&action=sso`);
    assert.equal(sso.statusCode, 200, sso.body);
    const ticket = new URL(sso.json().sso.url).searchParams.get('t') as string;
    secrets.add(ticket);
    assert.equal((await rows(u.t, customer.account.id, 'console')).length, 0, 'a ticket is no console yet');
    const ws = new WebSocket(`${wsBase}/ws/console/?t=${ticket}`);
    ws.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
    });
    ws.close();
    const opened = await only(u.t, customer.account.id, 'console');
    assert.equal(opened.actor, 'self');
    assert.equal(opened.ip, '127.0.0.1');
    assert.deepEqual(opened.details, { service_id: vps, label: 'activity-vps', console: 'vnc' });

    const web = await order({
      plan_id: await planId('web-starter'),
      config: { region: 'mum1' },
      domain: 'activity.example.in',
      idempotency_key: 'activity-web-1',
    });
    const link = await device.get(`/api/v1/client/services/?id=${web}&action=sso`);
    assert.equal(link.statusCode, 200, link.body);
    secrets.add(link.json().sso.url);
    // Reading the credentials asks nothing of the panel's sign-on for a web service: no event.
    await device.get(`/api/v1/client/services/?id=${web}&action=credentials`);
    const signOn = await only(u.t, customer.account.id, 'sso');
    assert.equal(signOn.details.service_id, web);
    assert.equal(signOn.details.service_type, 'web');
    assert.deepEqual(Object.keys(signOn.details).sort(), ['label', 'service_id', 'service_type']);
    assert.equal(signOn.ip, device.ip);
  });

  test('online deposits: started (self), confirmed at checkout (self) or by webhook (system), refunded (staff)', async () => {
    const start = async (amount: string) => {
      const res = await device.post(DEPOSIT, { method: 'razorpay', amount }, { csrf: true });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { deposit: { id: number; public_id: string }; checkout: { order_id: string } };
    };
    const one = await start('120');
    const paid = emu.pay(one.checkout.order_id);
    secrets.add(paid.razorpay_signature);
    for (let i = 0; i < 2; i++) {
      const { razorpay_order_id, razorpay_payment_id, razorpay_signature } = paid;
      const res = await device.post(
        DEPOSIT,
        { action: 'razorpay_verify', razorpay_order_id, razorpay_payment_id, razorpay_signature },
        { csrf: true },
      );
      assert.equal(res.statusCode, 200, res.body);
    }
    const two = await start('80');
    const payment = emu.pay(two.checkout.order_id);
    const body = JSON.stringify({
      event: 'payment.captured',
      payload: { payment: { entity: { id: payment.razorpay_payment_id, order_id: two.checkout.order_id } } },
    });
    const signature = createHmac('sha256', emu.webhookSecret).update(body).digest('hex');
    for (let i = 0; i < 2; i++) {
      const res = await u.t.inject({
        method: 'POST',
        url: '/api/v1/webhooks/razorpay',
        headers: { 'content-type': 'application/json', 'x-razorpay-signature': signature },
        payload: body,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const created = await rows(u.t, customer.account.id, 'deposit_created');
    assert.deepEqual(
      created.map((r) => [r.details.deposit, r.details.method, r.actor]),
      [
        [one.deposit.public_id, 'razorpay', 'self'],
        [two.deposit.public_id, 'razorpay', 'self'],
      ],
    );
    const approved = await rows(u.t, customer.account.id, 'deposit_approved');
    assert.deepEqual(
      approved.map((r) => [r.details.deposit, r.actor, r.ip]),
      [
        [one.deposit.public_id, 'self', device.ip],
        [two.deposit.public_id, 'system', null],
      ],
    );
    const refunded = await adminOf(u.t)('deposits', 'refund', String(one.deposit.id), '--reason', 'asked for it back');
    assert.equal(refunded.exitCode, 0, refunded.stderr);
    const back = await only(u.t, customer.account.id, 'deposit_refunded');
    assert.equal(back.actor, 'staff');
    assert.equal(back.details.amount, '120.00');
  });
});

describe('what the log never holds', () => {
  test('no password, code, secret, token, signature, link or session cookie used above is in any event', async () => {
    assert.ok(secrets.size > 20, `${secrets.size} secrets collected`);
    for (const app of [t, u.t]) {
      const all = await app.deps.database.db.selectFrom('account_activity').selectAll().execute();
      assert.ok(all.length > 10);
      const text = all.map((r) => `${r.summary}\n${JSON.stringify(r.details)}\n${r.ip}\n${r.staff_name}`).join('\n');
      for (const secret of secrets) {
        // A short code is looked for as a word of its own (it could be part of a public id by chance).
        const found =
          secret.length >= 12
            ? text.includes(secret)
            : new RegExp(`(^|[^0-9A-Za-z])${secret.replace(/[^0-9A-Za-z]/g, '\\$&')}($|[^0-9A-Za-z])`).test(text);
        assert.equal(found, false, `a secret is in the log: ${secret}`);
      }
    }
  });
});

describe('retention', () => {
  test("the worker's sweep deletes events older than a year, as of the app's clock, and keeps the rest", async () => {
    const a = await newAccount();
    await signIn(t, a);
    clock.advance(200 * 86_400);
    await signIn(t, a, FIREFOX_LINUX);
    clock.advance(170 * 86_400);
    const sweep = jobHandlers(t.deps)['maintenance.sweep'];
    const context = {
      id: 'test',
      retryCount: 0,
      lastAttempt: false,
      signal: new AbortController().signal,
      logger: silentLogger,
    };
    await sweep({}, context);
    const left = await rows(t, a.account.id);
    assert.deepEqual(
      left.map((r) => [r.type, r.details.device]),
      [['sign_in', 'Firefox on Linux']],
    );
    const stale = await t.deps.database.db
      .selectFrom('account_activity')
      .select('id')
      .where('at', '<', new Date(clock.now().getTime() - 365 * 86_400_000))
      .execute();
    assert.equal(stale.length, 0);
  });
});
