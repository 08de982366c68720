// Account deletion (issue 36 part D, CONTRACT §11): `POST account/ {action: "delete", password}`
// with a wrong password is 422 errors.password and counts toward the sign-in lockout; while a service
// runs, an order is unpaid, a deposit awaits review or the wallet holds money it is 409
// deletion_blocked with every reason in details.reasons; otherwise the erasure is scheduled 7 days on
// and the customer mailed. Signing in (password, one-time code, the second factor; not a half
// session) or `cancel_deletion` cancels it, with a mail. At the due time the job (here `accounts
// deletions run --at`) erases the account: afterwards the WHOLE database (every text, JSON, array and
// binary column of every table of every schema, found through information_schema) holds its e-mail
// address, name and username nowhere but in its tax invoices' frozen buyer (the legal record, kept 8
// years), the invoices are byte for byte what they were, the proof file is gone from disk, nothing
// signs in with what was the account, and the address can register anew. A deletion that something
// new stands in the way of is called off at the due time, and the customer told. Runs on PostgreSQL too.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { runAdmin } from '../src/admin/run.ts';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail, loginCode } from './support/factories.ts';
import { ManualClock } from './support/harness.ts';
import {
  ACCOUNT,
  adminJson,
  type Customer,
  EXPORT,
  enableTotp,
  orderVps,
  reportDeposit,
  richCustomer,
  SERVICES,
  signedIn,
  sshKey,
  WAIT,
} from './support/privacy.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const clock = new ManualClock();
let u: UpstreamApp;
before(async () => {
  u = await createUpstreamApp({ overrides: { clock: clock.now } });
});
after(() => u.close());

const db = () => u.t.deps.database.db;
const DAY = 86_400_000;

function askDeletion(browser: Browser, password: string) {
  return browser.post(ACCOUNT, { action: 'delete', password }, { csrf: true });
}

async function scheduled(browser: Browser): Promise<string | null> {
  const res = await browser.get(ACCOUNT);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().account.deletion_scheduled_for;
}

const codes = (res: { json(): { details: { reasons: { code: string }[] } } }) =>
  res.json().details.reasons.map((r) => r.code);

describe('asking for the deletion', () => {
  test('a wrong password is 422 errors.password and counts toward the sign-in lockout', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Lata Lockout');
    for (let i = 0; i < 5; i++) {
      const wrong = await askDeletion(browser, 'not-the-password-1');
      assert.equal(wrong.statusCode, 422, wrong.body);
      assert.equal(wrong.json().errors.password, 'is wrong');
    }
    const locked = await askDeletion(browser, password);
    assert.equal(locked.statusCode, 429, locked.body);
    assert.equal(locked.json().code, 'locked_out');
    const login = await new Browser(u.t, freshIp()).login(account.username, password);
    assert.equal(login.statusCode, 429, 'the same lock refuses the right password at sign-in');
    const missing = await browser.post(ACCOUNT, { action: 'delete' }, { csrf: true });
    assert.equal(missing.statusCode, 422, missing.body);
    assert.match(missing.json().errors.password, /required/);
    assert.equal(await scheduled(browser), null);
  });

  test('an action takes no profile fields; cancel takes no password', async () => {
    const { browser, password } = await signedIn(u.t, 'Mixed Fields');
    const mixed = await browser.post(ACCOUNT, { action: 'delete', password, name: 'New Name' }, { csrf: true });
    assert.equal(mixed.statusCode, 422, mixed.body);
    assert.match(mixed.json().errors.name, /not taken with action delete/);
    const cancel = await browser.post(ACCOUNT, { action: 'cancel_deletion', password }, { csrf: true });
    assert.equal(cancel.statusCode, 422, cancel.body);
    assert.ok(cancel.json().errors.password);
    const noCsrf = await browser.post(ACCOUNT, { action: 'delete', password }, { csrf: false });
    assert.equal(noCsrf.statusCode, 403);
  });

  test('each blocking reason is listed so the customer can act on it; nothing is scheduled', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Bina Blocked');
    await adminJson(u.t, 'wallet', 'credit', account.email, '1000', '--note', 'float');
    const placed = await orderVps(u.t, browser, sshKey('bina@laptop'));

    const first = await askDeletion(browser, password);
    assert.equal(first.statusCode, 409, first.body);
    assert.equal(first.json().code, 'deletion_blocked');
    assert.deepEqual(codes(first), ['services', 'wallet_balance']);
    const [services, wallet] = first.json().details.reasons;
    assert.match(services.message, new RegExp(`Terminate your services first.*${placed.service.label} \\(active\\)`));
    assert.deepEqual(services.items, [{ id: placed.service.id, ref: placed.service.label, status: 'active' }]);
    const balance = (await browser.get('/api/v1/client/wallet/')).json().wallet.balance;
    assert.match(wallet.message, new RegExp(`holds ₹${balance.replace('.', '\\.')}.*ask support to refund`));

    const deposit = await reportDeposit(browser, '150');
    assert.deepEqual(codes(await askDeletion(browser, password)), ['services', 'pending_deposits', 'wallet_balance']);

    // Support pays the balance back; at the end of the paid month the renewal cannot be paid.
    await adminJson(u.t, 'wallet', 'refund', account.email, balance, '--note', 'UPI refund UTR123');
    const service = (await browser.get(`${SERVICES}?id=${placed.service.id}`)).json().service;
    await adminJson(u.t, 'billing', 'run', '--at', new Date(Date.parse(service.paid_until) + 60_000).toISOString());
    const blocked = await askDeletion(browser, password);
    assert.deepEqual(codes(blocked), ['services', 'unpaid_orders', 'pending_deposits']);
    const unpaid = blocked.json().details.reasons[1];
    const order = await db()
      .selectFrom('orders')
      .select(['public_id', 'amount_paise'])
      .where('account_id', '=', account.id)
      .where('status', '=', 'unpaid')
      .executeTakeFirstOrThrow();
    assert.match(unpaid.message, /Pay your unpaid orders/);
    assert.equal(unpaid.items[0].ref, order.public_id);
    assert.match(blocked.json().details.reasons[2].message, new RegExp(deposit.public_id));
    assert.equal(await scheduled(browser), null);
  });
});

describe('scheduling and changing one’s mind', () => {
  test('202 with the date 7 days on and a mail saying how to cancel; asking again keeps it', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Dev Schedule');
    const before = clock.now().getTime();
    const res = await askDeletion(browser, password);
    assert.equal(res.statusCode, 202, res.body);
    const at = Date.parse(res.json().deletion.scheduled_for);
    assert.ok(at >= before + 7 * DAY && at <= clock.now().getTime() + 7 * DAY, 'seven days on');
    assert.equal(res.json().account.deletion_scheduled_for, res.json().deletion.scheduled_for);
    assert.equal(await scheduled(browser), res.json().deletion.scheduled_for);
    const mail = await lastMail(u.t, account.email);
    assert.match(mail.row.subject, /^Your Hostplane account will be deleted on \d+ \w+ \d{4} at \d+:\d{2} [ap]m IST$/);
    assert.match(mail.text, /Sign in before then, or press "Cancel deletion"/);
    assert.match(mail.text, /8 years/);
    assert.match(mail.text, /http:\/\/localhost:8080\/account\/privacy/);
    const again = await askDeletion(browser, password);
    assert.equal(again.statusCode, 202);
    assert.equal(again.json().deletion.scheduled_for, res.json().deletion.scheduled_for);
    const listed = await adminJson(u.t, 'accounts', 'deletions', 'list');
    assert.ok(listed.some((r: { id: number }) => r.id === account.id));

    const cancel = await browser.post(ACCOUNT, { action: 'cancel_deletion' }, { csrf: true });
    assert.equal(cancel.statusCode, 200, cancel.body);
    assert.equal(cancel.json().deletion, null);
    assert.equal(cancel.json().account.deletion_scheduled_for, null);
    assert.equal(
      (await lastMail(u.t, account.email)).row.subject,
      'The deletion of your Hostplane account is cancelled',
    );
    const twice = await browser.post(ACCOUNT, { action: 'cancel_deletion' }, { csrf: true });
    assert.equal(twice.json().message, 'No deletion was scheduled.');
    // The activity log: scheduled once (asking again kept the date), cancelled once.
    const events = await u.t.deps.database.db
      .selectFrom('account_activity')
      .select(['type', 'details'])
      .where('account_id', '=', account.id)
      .where('type', 'like', 'deletion_%')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['deletion_scheduled', 'deletion_cancelled'],
    );
    assert.deepEqual(events[1]?.details, { by: 'request' });
  });

  test('signing in cancels it: with the password, with a one-time code, and with the second factor', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Esha Signin');
    assert.equal((await askDeletion(browser, password)).statusCode, 202);
    const again = new Browser(u.t, freshIp());
    const login = await again.login(account.email, password);
    assert.equal(login.statusCode, 200, login.body);
    assert.match(login.json().message, /cancelled the deletion/);
    assert.equal(login.json().account.deletion_scheduled_for, null);
    assert.equal(await scheduled(browser), null);
    const mail = await lastMail(u.t, account.email);
    assert.equal(mail.row.subject, 'The deletion of your Hostplane account is cancelled');
    assert.match(mail.text, /Someone signed in/);
    const byLogin = await u.t.deps.database.db
      .selectFrom('account_activity')
      .select('details')
      .where('account_id', '=', account.id)
      .where('type', '=', 'deletion_cancelled')
      .execute();
    assert.deepEqual(
      byLogin.map((e) => e.details),
      [{ by: 'sign_in' }],
    );

    assert.equal((await askDeletion(browser, password)).statusCode, 202);
    const otp = new Browser(u.t, freshIp());
    await otp.post('/api/v1/client/auth/otp-login/', { action: 'request', identifier: account.email });
    const code = loginCode((await lastMail(u.t, account.email)).text);
    const viaCode = await otp.post('/api/v1/client/auth/otp-login/', {
      action: 'verify',
      identifier: account.email,
      code,
    });
    assert.equal(viaCode.statusCode, 200, viaCode.body);
    assert.equal(await scheduled(browser), null, 'a code sign-in cancels it too');
  });

  test('with two-factor sign-in, the half session does not cancel it; completing the sign-in does', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Farah Twofactor');
    const { secret } = await enableTotp(browser, clock.now);
    clock.advance(60);
    assert.equal((await askDeletion(browser, password)).statusCode, 202);
    const half = new Browser(u.t, freshIp());
    const first = await half.login(account.username, password);
    assert.equal(first.json().two_factor_required, true);
    assert.notEqual(await scheduled(browser), null, 'the password alone did not sign in');
    const { Secret, TOTP } = await import('otpauth');
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() });
    const done = await half.post('/api/v1/client/auth/2fa/', { code }, { csrf: true });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(await scheduled(browser), null);
    assert.equal(
      (await lastMail(u.t, account.email)).row.subject,
      'The deletion of your Hostplane account is cancelled',
    );
  });

  test('something new in the way at the due time calls it off, and the customer is told why', async () => {
    const { browser, account, password } = await signedIn(u.t, 'Hari Changed');
    const res = await askDeletion(browser, password);
    const due = Date.parse(res.json().deletion.scheduled_for);
    await adminJson(u.t, 'wallet', 'credit', account.email, '50', '--note', 'goodwill');
    const run = await adminJson(u.t, 'accounts', 'deletions', 'run', '--at', new Date(due + 60_000).toISOString());
    assert.deepEqual(
      run.actions.filter((x: { account: number }) => x.account === account.id),
      [{ account: account.id, action: 'stopped', detail: 'wallet_balance' }],
    );
    assert.equal(await scheduled(browser), null);
    const mail = await lastMail(u.t, account.email);
    assert.equal(mail.row.subject, 'Your Hostplane account was not deleted');
    assert.match(mail.text, /holds ₹50\.00/);
  });
});

/** Every column of every table that can hold text, in every schema but the system's. */
async function textColumns() {
  const { rows } = await sql<{ schema: string; table: string; column: string; type: string }>`
    select c.table_schema as schema, c.table_name as "table", c.column_name as "column", c.data_type as type
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where t.table_type = 'BASE TABLE'
      and c.table_schema not in ('pg_catalog', 'information_schema')
      and c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea', 'USER-DEFINED')
    order by 1, 2, 3`.execute(db());
  return rows;
}

/** Where in the whole database `needle` occurs (case-insensitive), as schema.table.column. */
async function occurrences(needle: string): Promise<string[]> {
  const found: string[] = [];
  const like = `%${needle.replace(/[\\%_]/g, '\\$&')}%`;
  for (const c of await textColumns()) {
    const value = c.type === 'bytea' ? sql`encode(${sql.ref(c.column)}, 'escape')` : sql`${sql.ref(c.column)}::text`;
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from ${sql.table(`${c.schema}.${c.table}`)} where ${value} ilike ${like}`.execute(db());
    if (Number(rows[0]?.n) > 0) found.push(`${c.schema}.${c.table}.${c.column}`);
  }
  return found;
}

describe('the erasure at the due time', () => {
  let g: Customer;
  let other: Customer;
  let due = 0;
  let proofFile = '';
  const invoicesOf = (accountId: number) =>
    sql`select * from invoices where account_id = ${accountId} order by id`.execute(db()).then((r) => r.rows);
  let invoicesBefore: unknown[] = [];
  let otherInvoicesBefore: unknown[] = [];
  let ledgerBefore = 0;

  before(async () => {
    g = await richCustomer(u.t, 'Gita Deleteme', { twoFactor: true, now: clock.now });
    other = await richCustomer(u.t, 'Omar Stays', { now: clock.now });
    clock.advance(60);
  });

  test('once everything is settled (services terminated, balance refunded, deposit reviewed) it is scheduled', async () => {
    const asked = await g.browser.post(
      SERVICES,
      { id: g.serviceId, action: 'request_terminate', note: `Leaving, ${g.name} <${g.email}>` },
      { csrf: true },
    );
    assert.equal(asked.statusCode, 200, asked.body);
    const requests = await adminJson(u.t, 'requests', 'list');
    const mine = requests.find((r: { service: string }) => r.service.startsWith(`${g.serviceId} `));
    await adminJson(u.t, 'requests', 'approve', String(mine.id));
    await waitFor(
      'the service to be terminated',
      async () => (await g.browser.get(`${SERVICES}?id=${g.serviceId}`)).json().service.status === 'terminated',
      WAIT,
    );
    const deposit = await db()
      .selectFrom('deposits')
      .select(['id', 'screenshot_file'])
      .where('account_id', '=', g.id)
      .executeTakeFirstOrThrow();
    proofFile = join(u.t.dataDir, 'uploads', 'deposits', deposit.screenshot_file as string);
    assert.ok(existsSync(proofFile));
    await adminJson(u.t, 'deposits', 'reject', String(deposit.id), '--reason', 'no such payment found');
    const balance = (await g.browser.get('/api/v1/client/wallet/')).json().wallet.balance;
    await adminJson(u.t, 'wallet', 'refund', g.email, balance, '--note', 'NEFT refund UTR998877');
    assert.equal((await g.browser.post(EXPORT, {}, { csrf: true })).statusCode, 202);

    // The scan below finds what it looks for: before the erasure the address is all over the database.
    const spread = await occurrences(g.email);
    for (const where of [
      'public.accounts.email',
      'public.mail_outbox.to_address',
      'public.services.config',
      'public.orders.config',
      'public.service_requests.note',
    ]) {
      assert.ok(spread.includes(where), `before: ${where} holds the address (${spread.join(', ')})`);
    }
    assert.ok(
      (await textColumns()).some((c) => c.schema === 'pgboss'),
      "the queue's tables are scanned too",
    );

    invoicesBefore = await invoicesOf(g.id);
    otherInvoicesBefore = await invoicesOf(other.id);
    assert.equal(invoicesBefore.length, 2, 'an invoice and its credit note');
    ledgerBefore = (await db().selectFrom('wallet_transactions').select('id').where('account_id', '=', g.id).execute())
      .length;
    const res = await askDeletion(g.browser, g.password);
    assert.equal(res.statusCode, 202, res.body);
    due = Date.parse(res.json().deletion.scheduled_for);
  });

  test('before it is due, and on a dry run, nothing happens', async () => {
    const early = await adminJson(u.t, 'accounts', 'deletions', 'run', '--at', new Date(due - 60_000).toISOString());
    assert.ok(!early.actions.some((x: { account: number }) => x.account === g.id));
    const dry = await adminJson(
      u.t,
      'accounts',
      'deletions',
      'run',
      '--at',
      new Date(due + 60_000).toISOString(),
      '--dry-run',
    );
    assert.equal(dry.actions.find((x: { account: number }) => x.account === g.id).action, 'would_erase');
    assert.equal((await g.browser.get(ACCOUNT)).statusCode, 200, 'still there');
  });

  test('at the due time it is erased', async () => {
    const run = await adminJson(u.t, 'accounts', 'deletions', 'run', '--at', new Date(due + 60_000).toISOString());
    assert.deepEqual(
      run.actions.find((x: { account: number }) => x.account === g.id),
      { account: g.id, action: 'erased', detail: '1 proof file' },
    );
    const row = await db().selectFrom('accounts').selectAll().where('id', '=', g.id).executeTakeFirstOrThrow();
    assert.equal(row.email, `deleted-${g.id}@invalid`);
    assert.equal(row.name, 'Deleted account');
    assert.notEqual(row.deleted_at, null);
    assert.equal(row.deletion_scheduled_for, null);
    const shown = await adminJson(u.t, 'accounts', 'show', String(g.id));
    assert.equal(shown.status, 'deleted');
    const revive = await runAdmin(['accounts', 'unsuspend', String(g.id)], async () => u.t.deps);
    assert.equal(revive.exitCode, 1, 'a tombstone cannot be brought back');
  });

  test('the whole database holds its e-mail, name and username nowhere but its invoices’ frozen buyer', async () => {
    // The legal record: a tax invoice (and credit note) names its buyer as issued, kept 8 years
    // (CGST Act s.36); here the buyer's legal name, from the billing details, contains the name.
    assert.deepEqual(await occurrences(g.name), ['public.invoices.buyer']);
    assert.deepEqual(await occurrences(g.email), []);
    assert.deepEqual(await occurrences(g.username), []);
    assert.deepEqual(await occurrences(g.tokenHint), []);
    assert.deepEqual(await occurrences(g.sshKeyLine.split(' ')[1] as string), []);
    for (const table of [
      'sessions',
      'api_tokens',
      'ssh_keys',
      'two_factor',
      'recovery_codes',
      'login_codes',
      'account_tokens',
      'billing_profiles',
      'notifications',
      'mail_outbox',
      'account_exports',
      'idempotency_keys',
      'api_request_log',
    ] as const) {
      const { rows } = await sql<{ n: string }>`
        select count(*) as n from ${sql.table(table)} where account_id = ${g.id}`.execute(db());
      assert.equal(rows[0]?.n, '0', `${table} keeps no row of the account`);
    }
    const service = await db()
      .selectFrom('services')
      .select(['credentials_sealed', 'config', 'status'])
      .where('id', '=', g.serviceId)
      .executeTakeFirstOrThrow();
    assert.equal(service.credentials_sealed, null);
    assert.equal('ssh_keys' in service.config, false);
    assert.equal(existsSync(proofFile), false, 'the proof file is deleted from disk');
    const deposit = await db()
      .selectFrom('deposits')
      .selectAll()
      .where('account_id', '=', g.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(deposit.proof_erased_at, null);
    assert.equal(deposit.status, 'rejected', 'the deposit itself stays');
  });

  test('its invoices, credit note and ledger are intact; the other account is untouched', async () => {
    assert.deepEqual(await invoicesOf(g.id), invoicesBefore);
    assert.deepEqual(await invoicesOf(other.id), otherInvoicesBefore);
    const ledger = await db().selectFrom('wallet_transactions').select('id').where('account_id', '=', g.id).execute();
    assert.equal(ledger.length, ledgerBefore);
    const theirs = await other.browser.get(ACCOUNT);
    assert.equal(theirs.statusCode, 200);
    assert.equal(theirs.json().account.email, other.email);
    assert.ok((await occurrences(other.email)).includes('public.accounts.email'));
  });

  test('nothing signs in as it again; the address can register anew', async () => {
    assert.equal((await g.browser.get(ACCOUNT)).statusCode, 401, 'its session ended');
    const me = await u.t.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { authorization: `Bearer ${g.tokenSecret}` },
    });
    assert.equal(me.statusCode, 401, 'its API token is gone');
    for (const identifier of [g.email, g.username, `deleted-${g.id}@invalid`]) {
      const login = await new Browser(u.t, freshIp()).login(identifier, g.password);
      assert.equal(login.statusCode, 401, `${identifier}: ${login.body}`);
    }
    const fresh = new Browser(u.t, freshIp());
    await fresh.bootstrap();
    const again = await fresh.post(
      '/api/v1/client/auth/register/',
      { name: g.name, email: g.email, username: g.username, password: 'a-new-start-2027' },
      { csrf: true },
    );
    assert.equal(again.statusCode, 201, again.body);
    assert.notEqual(again.json().account.id, g.id);
  });
});
