// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The cPanel/WHM driver against the emulated server over real HTTP: every WebPanel method with
// what the server holds afterwards (packages, accounts, databases and grants, mailboxes, PHP,
// DNS, HTTPS), createAccount and removeAccount safe to repeat after a lost answer, how each
// refusal text maps to its reason (weak_password, bad_db_name, bad_mailbox, exists, not_found,
// limit), and how transport failures map to UpstreamError (401/403, 500, 503, down, hanging,
// pages that are not the API), with the token never in an error.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type CpanelEmulator, startCpanelEmulator } from '../../emulators/src/cpanel/index.ts';
import { recognise } from '../src/upstreams/cpanel/errors.ts';
import { type CpanelConfig, createCpanelPanel, parseCpanelNode } from '../src/upstreams/cpanel/index.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import type { WebAccountInfo, WebPanel } from '../src/upstreams/web-panel.ts';

/** Part of the token: no error text may ever contain it. */
const CANARY = 'CANARYSECRETXYZ';
const TOKEN = `${CANARY}${'K'.repeat(32 - CANARY.length)}`;
/** Strong enough for the emulator's strength 65. */
const STRONG = 'Zq8#vLp2!mW4xR7t';
const STRONG2 = 'Hy6$kTr9@bN3wQ5e';
const WEAK = 'password1';

let emulator: CpanelEmulator;
let cpanel: WebPanel;
const made: WebPanel[] = [];
let n = 0;

function driver(overrides: Partial<CpanelConfig> = {}): WebPanel {
  const panel = createCpanelPanel({
    endpoint: emulator.url,
    username: emulator.whmUser,
    apiToken: emulator.whmToken,
    requestTimeoutMs: 2000,
    ...overrides,
  });
  made.push(panel);
  return panel;
}

before(async () => {
  emulator = await startCpanelEmulator({ whmToken: TOKEN, autosslDelayMs: 150, minPasswordStrength: 65 });
  cpanel = driver();
});
after(async () => {
  for (const panel of made) panel.close();
  await emulator.stop();
});
beforeEach(() => emulator.reset());

const calls = (key: string) => emulator.calls.get(key) ?? 0;

/** Poll until `check` holds (a hang guard, not a timing assertion). */
async function waitFor<T>(read: () => Promise<T> | T, check: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Rejects with an UpstreamError that has these properties, and no token in any of its texts. */
async function rejectsWith(
  promise: Promise<unknown>,
  expected: {
    kind: string;
    reason?: string | null;
    retryable?: boolean;
    status?: number;
    message?: RegExp;
    detail?: RegExp;
  },
): Promise<UpstreamError> {
  let caught: UpstreamError | null = null;
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UpstreamError, `not an UpstreamError: ${String(error)}`);
    caught = error;
    return true;
  });
  const e = caught as unknown as UpstreamError;
  assert.equal(e.kind, expected.kind, e.message);
  if (expected.reason !== undefined) assert.equal(e.reason, expected.reason ?? undefined, e.message);
  if (expected.retryable !== undefined) assert.equal(e.retryable, expected.retryable, e.message);
  if (expected.status !== undefined) assert.equal(e.status, expected.status, e.message);
  if (expected.message) assert.match(e.message, expected.message);
  if (expected.detail) assert.match(e.detail ?? '', expected.detail);
  for (const text of [e.message, e.detail ?? '']) {
    assert.ok(!text.includes(CANARY), `the token leaked: ${text}`);
  }
  return e;
}

/** A fresh package name and account spec (usernames stay under 8 characters: the first 8 must be unique). */
function names() {
  n++;
  return { username: `site${n}`, domain: `site${n}.example.in`, package: `hostplane_p${n}` };
}

async function account(limits: Partial<Parameters<WebPanel['ensurePackage']>[0]> = {}): Promise<WebAccountInfo> {
  const { username, domain, package: pkg } = names();
  await cpanel.ensurePackage({
    name: pkg,
    diskMb: 1024,
    maxMailboxes: 10,
    maxDatabases: 5,
    maxAddonDomains: 0,
    maxSubdomains: 5,
    maxMailboxQuotaMb: 512,
    ...limits,
  });
  return cpanel.createAccount({ username, domain, package: pkg, password: STRONG, contactEmail: `ops@${domain}` });
}

const stateOf = (user: string) => {
  const a = emulator.state.accounts.get(user);
  assert.ok(a, `no account ${user}`);
  return a;
};

describe('cpanel driver: configuration and ping', () => {
  test('parseCpanelNode reads credentials and settings with defaults', () => {
    const base = { name: 'web1', endpoint: 'https://web1.example.in:2087', settings: {} };
    const config = parseCpanelNode(
      { ...base, credentials: { username: 'root', api_token: TOKEN } },
      { requestTimeoutMs: 5000, pollIntervalMs: 7 },
    );
    assert.deepEqual(config, {
      metricsNode: 'web1',
      endpoint: 'https://web1.example.in:2087',
      username: 'root',
      apiToken: TOKEN,
      tls: { insecure: false },
      requestTimeoutMs: 5000,
    });
    const custom = parseCpanelNode(
      { ...base, credentials: {}, settings: { tls_insecure: true, tls_ca: '-----BEGIN CERTIFICATE-----' } },
      {},
    );
    assert.deepEqual(custom.tls, { insecure: true, ca: '-----BEGIN CERTIFICATE-----' });
    assert.equal(custom.apiToken, '');
    assert.equal(custom.username, '');
    assert.equal(custom.requestTimeoutMs, undefined);
  });

  test('a configuration that cannot work fails every call (not the creation), without echoing the token', async () => {
    const cases: [Partial<CpanelConfig>, RegExp][] = [
      [{ endpoint: 'ftp://web1' }, /http\(s\) URL/],
      [{ endpoint: 'not a url' }, /not a URL/],
      [{ endpoint: `https://root:${CANARY}@web1:2087` }, /must not contain credentials/],
      [{ endpoint: `${'https://web1:2087'}/?token=${CANARY}` }, /query or fragment/],
      [{ username: '' }, /WHM username is empty/],
      [{ username: 'root:x' }, /WHM username is empty or malformed/],
      [{ apiToken: '' }, /API token is empty/],
      [{ apiToken: `${CANARY} with spaces` }, /API token is empty or malformed/],
    ];
    for (const [overrides, message] of cases) {
      const panel = driver(overrides);
      await rejectsWith(panel.ping(), { kind: 'rejected', retryable: false, message });
      await rejectsWith(panel.listDatabases('site1'), { kind: 'rejected', message });
    }
    assert.equal(emulator.calls.size, 0, 'nothing was sent');
  });

  test('ping answers the cPanel version; a wrong token is auth (401), never echoed', async () => {
    assert.deepEqual(await cpanel.ping(), { version: '11.120.0.16' });
    assert.equal(calls('GET /json-api/version'), 1);
    const wrong = `${CANARY}${'W'.repeat(32 - CANARY.length)}`;
    await rejectsWith(driver({ apiToken: wrong }).ping(), { kind: 'auth', status: 401, retryable: false });
    await rejectsWith(driver({ username: 'reseller1' }).ping(), { kind: 'auth', status: 401 });
  });

  test('a web panel has no console', () => {
    assert.throws(
      () =>
        cpanel.openConsole(
          { kind: 'vnc', ticket: 't', port: 1, user: 'u', password: null, websocketPath: '/' },
          { ready() {}, output() {}, refused() {} },
          { maxPayload: 1024 },
        ),
      (error: unknown) => error instanceof UpstreamError && error.kind === 'rejected',
    );
    assert.equal(
      cpanel.consoleInput?.({ kind: 'vnc', ticket: 't', port: 1, user: 'u', password: null, websocketPath: '/' }),
      null,
    );
  });
});

describe('cpanel driver: packages and accounts (WHM API 1)', () => {
  test('ensurePackage creates the package, repeats without writing, and edits what changed', async () => {
    const { package: name } = names();
    const spec = {
      name,
      diskMb: 2048,
      maxMailboxes: 0,
      maxDatabases: 3,
      maxAddonDomains: 1,
      maxSubdomains: 10,
      maxMailboxQuotaMb: 0,
    };
    await cpanel.ensurePackage(spec);
    const pkg = emulator.state.packages.get(name);
    assert.ok(pkg);
    assert.equal(pkg.settings.QUOTA, '2048');
    assert.equal(pkg.settings.MAXPOP, 'unlimited', '0 mailboxes = unlimited');
    assert.equal(pkg.settings.MAXSQL, '3');
    assert.equal(pkg.settings.MAXADDON, '1');
    assert.equal(pkg.settings.MAXSUB, '10');
    assert.equal(pkg.settings.MAX_EMAILACCT_QUOTA, 'unlimited');
    assert.equal(calls('POST /json-api/addpkg'), 1);

    await cpanel.ensurePackage(spec);
    assert.equal(calls('POST /json-api/addpkg'), 1, 'not added twice');
    assert.equal(calls('POST /json-api/editpkg'), 0, 'nothing to edit');

    await cpanel.ensurePackage({ ...spec, maxDatabases: 7, maxMailboxes: 20 });
    assert.equal(calls('POST /json-api/editpkg'), 1);
    assert.equal(emulator.state.packages.get(name)?.settings.MAXSQL, '7');
    assert.equal(emulator.state.packages.get(name)?.settings.MAXPOP, '20');
  });

  test('ensurePackage after a lost answer: the next call finds the package', async () => {
    const { package: name } = names();
    const spec = {
      name,
      diskMb: 100,
      maxMailboxes: 1,
      maxDatabases: 1,
      maxAddonDomains: 0,
      maxSubdomains: 0,
      maxMailboxQuotaMb: 50,
    };
    await emulator.setFaults({ loseNext: 'addpkg' });
    await rejectsWith(cpanel.ensurePackage(spec), { kind: 'unreachable', retryable: true });
    assert.ok(emulator.state.packages.has(name), 'the work was done');
    await cpanel.ensurePackage(spec);
    assert.equal(calls('POST /json-api/addpkg'), 1);
  });

  test('createAccount creates once, is found by username and domain, and returns the same account again', async () => {
    const { username, domain, package: pkg } = names();
    await cpanel.ensurePackage({
      name: pkg,
      diskMb: 500,
      maxMailboxes: 5,
      maxDatabases: 2,
      maxAddonDomains: 0,
      maxSubdomains: 2,
      maxMailboxQuotaMb: 100,
    });
    const spec = { username, domain, package: pkg, password: STRONG, contactEmail: `ops@${domain}` };
    const info = await cpanel.createAccount(spec);
    assert.deepEqual(info, {
      username,
      domain,
      package: pkg,
      suspended: false,
      suspendReason: null,
      ip: '192.0.2.10',
      diskUsedMb: info.diskUsedMb,
      diskLimitMb: 500,
      contactEmail: `ops@${domain}`,
    });
    assert.ok(info.diskUsedMb >= 0);
    const held = stateOf(username);
    assert.equal(held.domain, domain);
    assert.equal(held.plan, pkg);
    assert.equal(held.email, `ops@${domain}`);
    assert.ok(emulator.checkPassword(username, STRONG));

    assert.deepEqual(await cpanel.findAccount(username), info);
    assert.deepEqual(await cpanel.findAccountByDomain(domain.toUpperCase()), info);
    assert.equal(await cpanel.findAccount(`${username}9`), null);
    assert.equal(await cpanel.findAccount(username.slice(0, -1)), null, 'a part of the name is not the account');
    assert.equal(await cpanel.findAccountByDomain(`x${domain}`), null);

    assert.deepEqual(await cpanel.createAccount(spec), info, 'the same account again');
    assert.equal(calls('POST /json-api/createacct'), 1, 'created once');
  });

  test('createAccount after a lost answer: the retry returns the account the first call made', async () => {
    const { username, domain } = names();
    const spec = { username, domain, package: 'default', password: STRONG, contactEmail: `ops@${domain}` };
    await emulator.setFaults({ loseNext: 'createacct' });
    await rejectsWith(cpanel.createAccount(spec), { kind: 'unreachable', retryable: true });
    assert.ok(emulator.state.accounts.has(username), 'the server made it');
    const info = await cpanel.createAccount(spec);
    assert.equal(info.username, username);
    assert.equal(info.domain, domain);
    assert.equal(calls('POST /json-api/createacct'), 1, 'not sent again');
    // Without the contact e-mail it was made with, the same name and domain are not ours.
    await rejectsWith(cpanel.createAccount({ ...spec, contactEmail: `other@${domain}` }), {
      kind: 'rejected',
      reason: 'exists',
    });
    await rejectsWith(cpanel.createAccount({ ...spec, contactEmail: '' }), { kind: 'rejected', reason: 'exists' });
  });

  test('createAccount refusals: taken username (exists) or domain (domain_taken), weak password, unknown package (not_found)', async () => {
    const first = await account();
    const other = names();
    // The username is taken by an account of another domain: refused before asking.
    await rejectsWith(
      cpanel.createAccount({
        ...other,
        username: first.username,
        package: 'default',
        password: STRONG,
        contactEmail: '',
      }),
      { kind: 'rejected', reason: 'exists', detail: new RegExp(first.domain.replace(/\./g, '\\.')) },
    );
    // The domain belongs to another account: refused before asking (WHM would refuse it too).
    await rejectsWith(
      cpanel.createAccount({ ...other, domain: first.domain, package: 'default', password: STRONG, contactEmail: '' }),
      { kind: 'rejected', reason: 'domain_taken', detail: /already the domain of another account/ },
    );
    await rejectsWith(cpanel.createAccount({ ...other, package: 'default', password: WEAK, contactEmail: '' }), {
      kind: 'rejected',
      reason: 'weak_password',
      detail: /too weak/,
      retryable: false,
    });
    await rejectsWith(cpanel.createAccount({ ...other, package: 'nosuchplan', password: STRONG, contactEmail: '' }), {
      kind: 'rejected',
      reason: 'not_found',
      detail: /nosuchplan/,
    });
    await rejectsWith(
      cpanel.createAccount({ ...other, username: 'root', package: 'default', password: STRONG, contactEmail: '' }),
      { kind: 'rejected', detail: /reserved username/ },
    );
    assert.equal(emulator.state.accounts.has(other.username), false);
  });

  test('suspend and unsuspend, with the reason; a missing account is not_found', async () => {
    const info = await account();
    await cpanel.suspend(info.username, 'Unpaid invoice 42');
    assert.equal(stateOf(info.username).suspended, true);
    assert.equal(stateOf(info.username).suspendReason, 'Unpaid invoice 42');
    const found = await cpanel.findAccount(info.username);
    assert.equal(found?.suspended, true);
    assert.equal(found?.suspendReason, 'Unpaid invoice 42');
    await cpanel.suspend(info.username, 'Unpaid invoice 42');

    await cpanel.unsuspend(info.username);
    assert.equal(stateOf(info.username).suspended, false);
    const active = await cpanel.findAccount(info.username);
    assert.equal(active?.suspended, false);
    assert.equal(active?.suspendReason, null);

    await rejectsWith(cpanel.suspend('nosuchuser', 'x'), { kind: 'rejected', reason: 'not_found' });
    await rejectsWith(cpanel.unsuspend('nosuchuser'), { kind: 'rejected', reason: 'not_found' });
  });

  test('removeAccount removes; already gone (or gone after a lost answer) is success', async () => {
    const info = await account();
    await cpanel.removeAccount(info.username);
    assert.equal(emulator.state.accounts.has(info.username), false);
    assert.equal(calls('POST /json-api/removeacct'), 1);
    await cpanel.removeAccount(info.username);
    await cpanel.removeAccount('neverwas');
    assert.equal(calls('POST /json-api/removeacct'), 1, 'nothing to remove: not asked');

    const lost = await account();
    await emulator.setFaults({ loseNext: 'removeacct' });
    await rejectsWith(cpanel.removeAccount(lost.username), { kind: 'unreachable', retryable: true });
    assert.equal(emulator.state.accounts.has(lost.username), false);
    await cpanel.removeAccount(lost.username);
  });

  test('setPassword changes the account password; a weak one is weak_password', async () => {
    const info = await account();
    await cpanel.setPassword(info.username, STRONG2);
    assert.ok(emulator.checkPassword(info.username, STRONG2));
    assert.equal(emulator.checkPassword(info.username, STRONG), false);
    await rejectsWith(cpanel.setPassword(info.username, WEAK), {
      kind: 'rejected',
      reason: 'weak_password',
      detail: /strength rating of 65/,
    });
    assert.ok(emulator.checkPassword(info.username, STRONG2), 'unchanged');
    await rejectsWith(cpanel.setPassword('nosuchuser', STRONG), { kind: 'rejected', reason: 'not_found' });
  });

  test('ssoUrl is a one-time login URL into cPanel; nameservers are the server defaults', async () => {
    const info = await account();
    const url = await cpanel.ssoUrl(info.username);
    assert.ok(url.startsWith(`${emulator.url}/cpsess`), url);
    const first = await fetch(url, { redirect: 'manual' });
    assert.equal(first.status, 302, 'the login works');
    const again = await fetch(url, { redirect: 'manual' });
    assert.equal(again.status, 401, 'once');
    await rejectsWith(cpanel.ssoUrl('nosuchuser'), { kind: 'rejected', reason: 'not_found' });

    assert.deepEqual(await cpanel.nameservers(), ['ns1.hostplane.test', 'ns2.hostplane.test']);
  });
});

describe('cpanel driver: databases (UAPI Mysql through WHM)', () => {
  test('rules, databases, users and grants, with the server state after each', async () => {
    const info = await account();
    const rules = await cpanel.databaseRules(info.username);
    const prefix = `${info.username}_`;
    assert.deepEqual(rules, { prefix, maxNameLength: 64, maxUserLength: 32 });
    assert.equal(calls('uapi Mysql::get_restrictions'), 1);

    await cpanel.createDatabase(info.username, `${prefix}shop`);
    await cpanel.createDatabaseUser(info.username, `${prefix}app`, STRONG);
    await cpanel.grant(info.username, `${prefix}app`, `${prefix}shop`, ['SELECT', 'INSERT', 'UPDATE']);
    const held = stateOf(info.username);
    assert.deepEqual(
      held.databases.map((d) => d.name),
      [`${prefix}shop`],
    );
    assert.ok(emulator.checkDbUserPassword(`${prefix}app`, STRONG));
    assert.deepEqual(held.grants, [
      { user: `${prefix}app`, database: `${prefix}shop`, privileges: ['INSERT', 'SELECT', 'UPDATE'] },
    ]);

    const dbs = await cpanel.listDatabases(info.username);
    assert.equal(dbs.length, 1);
    assert.equal(dbs[0]?.name, `${prefix}shop`);
    assert.deepEqual(dbs[0]?.users, [`${prefix}app`]);
    assert.ok((dbs[0]?.diskBytes ?? 0) > 0);
    assert.deepEqual(await cpanel.listDatabaseUsers(info.username), [
      { name: `${prefix}app`, databases: [`${prefix}shop`] },
    ]);

    await cpanel.grant(info.username, `${prefix}app`, `${prefix}shop`, ['ALL PRIVILEGES']);
    assert.deepEqual(stateOf(info.username).grants[0]?.privileges, ['ALL PRIVILEGES']);

    await cpanel.deleteDatabaseUser(info.username, `${prefix}app`);
    await cpanel.deleteDatabase(info.username, `${prefix}shop`);
    assert.deepEqual(await cpanel.listDatabases(info.username), []);
    assert.deepEqual(await cpanel.listDatabaseUsers(info.username), []);
    assert.equal(stateOf(info.username).grants.length, 0);
  });

  test('refusals: prefix, reserved, length, characters (bad_db_name), taken, weak, missing, package limit', async () => {
    const info = await account({ maxDatabases: 1 });
    const prefix = `${info.username}_`;
    await rejectsWith(cpanel.createDatabase(info.username, 'shop'), {
      kind: 'rejected',
      reason: 'bad_db_name',
      detail: /does not begin with the required prefix “site\d+_”/,
    });
    await rejectsWith(cpanel.createDatabase(info.username, 'mysql'), { kind: 'rejected', reason: 'bad_db_name' });
    await rejectsWith(cpanel.createDatabase(info.username, `${prefix}${'x'.repeat(70)}`), {
      kind: 'rejected',
      reason: 'bad_db_name',
      detail: /too long/,
    });
    await rejectsWith(cpanel.createDatabase(info.username, `${prefix}a/b`), {
      kind: 'rejected',
      reason: 'bad_db_name',
    });
    await rejectsWith(cpanel.createDatabase(info.username, ''), { kind: 'rejected', reason: 'bad_db_name' });
    await rejectsWith(cpanel.createDatabaseUser(info.username, `${prefix}a b`, STRONG), {
      kind: 'rejected',
      reason: 'bad_db_name',
    });
    await rejectsWith(cpanel.createDatabaseUser(info.username, 'app', STRONG), {
      kind: 'rejected',
      reason: 'bad_db_name',
    });

    await cpanel.createDatabase(info.username, `${prefix}one`);
    await rejectsWith(cpanel.createDatabase(info.username, `${prefix}one`), { kind: 'rejected', reason: 'limit' });
    await cpanel.ensurePackage({
      name: stateOf(info.username).plan,
      diskMb: 1024,
      maxMailboxes: 10,
      maxDatabases: 5,
      maxAddonDomains: 0,
      maxSubdomains: 5,
      maxMailboxQuotaMb: 512,
    });
    await rejectsWith(cpanel.createDatabase(info.username, `${prefix}one`), { kind: 'rejected', reason: 'exists' });
    await cpanel.createDatabase(info.username, `${prefix}two`);
    await rejectsWith(cpanel.createDatabaseUser(info.username, `${prefix}app`, WEAK), {
      kind: 'rejected',
      reason: 'weak_password',
      detail: /The given password is too weak/,
    });
    await cpanel.createDatabaseUser(info.username, `${prefix}app`, STRONG);
    await rejectsWith(cpanel.createDatabaseUser(info.username, `${prefix}app`, STRONG), {
      kind: 'rejected',
      reason: 'exists',
    });
    await rejectsWith(cpanel.grant(info.username, `${prefix}app`, `${prefix}one`, ['FLY']), {
      kind: 'rejected',
      reason: null,
      detail: /not a valid MySQL privilege/,
    });
    await rejectsWith(cpanel.deleteDatabase(info.username, `${prefix}nope`), { kind: 'rejected', reason: 'not_found' });
    await rejectsWith(cpanel.deleteDatabaseUser(info.username, `${prefix}nope`), {
      kind: 'rejected',
      reason: 'not_found',
    });
    await rejectsWith(cpanel.listDatabases('nosuchuser'), { kind: 'rejected', reason: 'not_found' });
  });
});

describe('cpanel driver: mailboxes (UAPI Email)', () => {
  test('create, list, password, quota, delete, with the server state after each', async () => {
    const info = await account({ maxMailboxQuotaMb: 0 });
    await cpanel.createMailbox(info.username, { local: 'Sales', domain: info.domain, password: STRONG, quotaMb: 100 });
    await cpanel.createMailbox(info.username, { local: 'info', domain: info.domain, password: STRONG2, quotaMb: 0 });
    const boxes = stateOf(info.username).mailboxes;
    assert.deepEqual(boxes.map((m) => [m.email, m.quotaMb]).sort(), [
      [`info@${info.domain}`, 0],
      [`sales@${info.domain}`, 100],
    ]);
    assert.ok(emulator.checkMailboxPassword(`sales@${info.domain}`, STRONG));

    const listed = await cpanel.listMailboxes(info.username, info.domain);
    assert.deepEqual(
      listed.map((m) => [m.email, m.quotaBytes, m.suspendedLogin]),
      [
        [`info@${info.domain}`, null],
        [`sales@${info.domain}`, 100 * 1024 * 1024],
      ].map(([e, q]) => [e, q, false]),
    );
    assert.ok(listed.every((m) => m.diskUsedBytes > 0));

    await cpanel.setMailboxPassword(info.username, 'sales', info.domain, STRONG2);
    assert.ok(emulator.checkMailboxPassword(`sales@${info.domain}`, STRONG2));
    await cpanel.setMailboxQuota(info.username, 'sales', info.domain, 250);
    await cpanel.setMailboxQuota(info.username, 'info', info.domain, 10);
    const after = stateOf(info.username).mailboxes;
    assert.equal(after.find((m) => m.user === 'sales')?.quotaMb, 250);
    assert.equal(after.find((m) => m.user === 'info')?.quotaMb, 10);

    await cpanel.deleteMailbox(info.username, 'sales', info.domain);
    assert.deepEqual(
      (await cpanel.listMailboxes(info.username, info.domain)).map((m) => m.email),
      [`info@${info.domain}`],
    );
  });

  test('refusals: bad name (bad_mailbox), taken, weak, missing, quota and count limits', async () => {
    const info = await account({ maxMailboxes: 1, maxMailboxQuotaMb: 200 });
    const box = (local: string, extra: Partial<{ password: string; quotaMb: number }> = {}) => ({
      local,
      domain: info.domain,
      password: STRONG,
      quotaMb: 50,
      ...extra,
    });
    await rejectsWith(cpanel.createMailbox(info.username, box('no good')), {
      kind: 'rejected',
      reason: 'bad_mailbox',
      detail: /not a valid email address/,
    });
    await rejectsWith(cpanel.createMailbox(info.username, box('weak', { password: WEAK })), {
      kind: 'rejected',
      reason: 'weak_password',
    });
    await rejectsWith(cpanel.createMailbox(info.username, box('big', { quotaMb: 500 })), {
      kind: 'rejected',
      reason: 'limit',
    });
    await rejectsWith(cpanel.createMailbox(info.username, box('unl', { quotaMb: 0 })), {
      kind: 'rejected',
      reason: 'limit',
    });
    await cpanel.createMailbox(info.username, box('one'));
    await rejectsWith(cpanel.createMailbox(info.username, box('one')), { kind: 'rejected', reason: 'exists' });
    await rejectsWith(cpanel.createMailbox(info.username, box('two')), { kind: 'rejected', reason: 'limit' });
    await rejectsWith(cpanel.setMailboxQuota(info.username, 'one', info.domain, 999), {
      kind: 'rejected',
      reason: 'limit',
    });
    await rejectsWith(cpanel.setMailboxPassword(info.username, 'one', info.domain, WEAK), {
      kind: 'rejected',
      reason: 'weak_password',
    });
    await rejectsWith(cpanel.deleteMailbox(info.username, 'ghost', info.domain), {
      kind: 'rejected',
      reason: 'not_found',
    });
    await rejectsWith(cpanel.createMailbox(info.username, { ...box('x'), domain: 'elsewhere.example.in' }), {
      kind: 'rejected',
      reason: 'not_found',
    });
  });
});

describe('cpanel driver: PHP, usage, DNS, HTTPS', () => {
  test('php: installed versions, inherit, set a version; unknown version or vhost refused', async () => {
    const info = await account();
    const php = await cpanel.php(info.username, info.domain);
    assert.deepEqual(php, {
      installed: ['ea-php74', 'ea-php80', 'ea-php81', 'ea-php82', 'ea-php83'],
      current: 'inherit',
    });
    await cpanel.setPhp(info.username, info.domain, 'ea-php81');
    assert.equal(stateOf(info.username).php[info.domain], 'ea-php81');
    assert.equal((await cpanel.php(info.username, info.domain)).current, 'ea-php81');
    await cpanel.setPhp(info.username, info.domain, 'inherit');
    assert.equal((await cpanel.php(info.username, info.domain)).current, 'inherit');

    await rejectsWith(cpanel.setPhp(info.username, info.domain, 'ea-php99'), {
      kind: 'rejected',
      detail: /not installed/,
    });
    await rejectsWith(cpanel.php(info.username, 'other.example.in'), { kind: 'rejected', reason: 'not_found' });
    await rejectsWith(cpanel.setPhp(info.username, 'other.example.in', 'ea-php81'), {
      kind: 'rejected',
      reason: 'not_found',
    });
  });

  test('usage: units from the formatter, limits from the package (null = unlimited)', async () => {
    const info = await account({ diskMb: 300, maxDatabases: 4 });
    await cpanel.createMailbox(info.username, { local: 'a', domain: info.domain, password: STRONG, quotaMb: 10 });
    const usage = await cpanel.usage(info.username);
    const byId = new Map(usage.map((u) => [u.id, u]));
    assert.deepEqual(byId.get('disk_usage'), {
      id: 'disk_usage',
      description: 'Disk Usage',
      usage: byId.get('disk_usage')?.usage,
      maximum: 300 * 1024 * 1024,
      unit: 'bytes',
    });
    assert.ok((byId.get('disk_usage')?.usage ?? 0) > 0);
    assert.deepEqual(byId.get('mysql_databases'), {
      id: 'mysql_databases',
      description: 'MySQL® Databases',
      usage: 0,
      maximum: 4,
      unit: null,
    });
    assert.equal(byId.get('email_accounts')?.usage, 1);
    assert.equal(byId.get('forwarders')?.maximum, null);
  });

  test('dnsZone: the records, names and data decoded; comments and controls left out', async () => {
    const info = await account();
    const zone = await cpanel.dnsZone(info.username, info.domain);
    const apex = `${info.domain}.`;
    assert.ok(zone.every((r) => r.type !== '' && r.name !== ''));
    const soa = zone.find((r) => r.type === 'SOA');
    assert.equal(soa?.name, apex);
    assert.equal(soa?.data[0], 'ns1.hostplane.test.');
    assert.deepEqual(
      zone.filter((r) => r.type === 'NS').map((r) => r.data[0]),
      ['ns1.hostplane.test.', 'ns2.hostplane.test.'],
    );
    const www = zone.find((r) => r.name === `www.${apex}`);
    assert.deepEqual(www && { ttl: www.ttl, type: www.type, data: www.data }, {
      ttl: 14400,
      type: 'A',
      data: ['192.0.2.10'],
    });
    assert.ok(zone.some((r) => r.type === 'TXT' && r.data[0]?.startsWith('v=spf1')));
    assert.ok(zone.every((r, i) => i === 0 || r.line > (zone[i - 1]?.line ?? -1)));
    await rejectsWith(cpanel.dnsZone(info.username, 'other.example.in'), { kind: 'rejected', reason: 'not_found' });
  });

  test('httpsStatus: self-signed then AutoSSL; the redirect on and off; AutoSSL problems', async () => {
    const info = await account();
    const early = await cpanel.httpsStatus(info.username, info.domain);
    assert.equal(early.certificate?.selfSigned, true, 'a new account has a self-signed certificate');
    assert.deepEqual(
      { ...early, certificate: null },
      { certificate: null, autosslInProgress: true, problems: [], forced: false },
    );
    await rejectsWith(cpanel.setHttpsRedirect(info.username, info.domain, true), {
      kind: 'rejected',
      detail: /failed to validate/,
    });

    const issued = Date.now(); // AutoSSL issues the certificate after this
    const ready = await waitFor(
      () => cpanel.httpsStatus(info.username, info.domain),
      (s) => s.certificate !== null && !s.certificate.selfSigned,
      'AutoSSL',
    );
    assert.equal(ready.autosslInProgress, false);
    assert.equal(ready.certificate?.issuer, 'cPanel, Inc.');
    assert.equal(ready.certificate?.selfSigned, false);
    assert.ok(ready.certificate?.domains.includes(info.domain));
    // Valid for months from its issue, whatever time has passed since.
    assert.ok(Date.parse(ready.certificate?.notAfter ?? '') > issued + 80 * 86400_000);
    assert.equal(ready.forced, false);

    await cpanel.setHttpsRedirect(info.username, info.domain, true);
    assert.deepEqual(stateOf(info.username).sslRedirects, [info.domain]);
    assert.equal((await cpanel.httpsStatus(info.username, info.domain)).forced, true);
    await cpanel.setHttpsRedirect(info.username, info.domain, false);
    assert.deepEqual(stateOf(info.username).sslRedirects, []);
    assert.equal((await cpanel.httpsStatus(info.username, info.domain)).forced, false);

    await emulator.setFaults({ autosslFails: true });
    const failing = await account();
    const problems = await waitFor(
      () => cpanel.httpsStatus(failing.username, failing.domain),
      (s) => !s.autosslInProgress && s.problems.length > 0,
      'AutoSSL problems',
    );
    assert.equal(problems.certificate?.selfSigned ?? true, true, 'no issued certificate');
    assert.deepEqual(
      problems.problems.map((p) => p.domain).sort(),
      [failing.domain, `mail.${failing.domain}`, `www.${failing.domain}`].sort(),
    );
    assert.ok(problems.problems.every((p) => /DCV/.test(p.problem)));
    // Another account's problems are not this domain's.
    assert.deepEqual((await cpanel.httpsStatus(info.username, info.domain)).problems, []);
  });
});

describe('cpanel driver: failures', () => {
  test('the reason table: the texts of upstreams.md §3.3 and the emulator', () => {
    const table: [string, Parameters<typeof recognise>[1], string | undefined][] = [
      ['The name “shop” does not begin with the required prefix “bob_”.', 'database', 'bad_db_name'],
      ['A database name cannot be empty.', 'database', 'bad_db_name'],
      ['“mysql” is a reserved name for databases on this system.', 'database', 'bad_db_name'],
      [
        '“bob_xxx” is too long by 7 characters. A database name cannot exceed 64 characters.',
        'database',
        'bad_db_name',
      ],
      [
        'The given password is too weak. Please enter a password with a strength rating of 65 or higher.',
        'database',
        'weak_password',
      ],
      [
        'Sorry, the password you selected cannot be used because it is too weak and would be too easy to guess. Please select a password with strength rating of 65 or higher.',
        'mailbox',
        'weak_password',
      ],
      ['The database “bob_shop” already exists.', 'database', 'exists'],
      ['This system already has an account named “bob”.', 'account', 'exists'],
      ['Sorry, a DNS entry for bob.example.in already exists', 'account', 'exists'],
      ['Sorry, the domain is already set up (userdata)', 'account', 'exists'],
      ['The username “bob” is taken.', 'account', 'exists'],
      [
        'The name of another account on this server has the same initial 8 characters as the given username (bobbobbob). Each username’s first 8 characters must be unique.',
        'account',
        'exists',
      ],
      ['You do not have a user named “bob”.', 'account', 'not_found'],
      ['The package “gold” does not exist.', 'package', 'not_found'],
      ['Cannot find vhost “x.example.in”.', 'other', 'not_found'],
      ['You have reached your maximum allotment of databases (1).', 'database', 'limit'],
      ['You cannot create more than 1 email account.', 'mailbox', 'limit'],
      ['You have exceeded the maximum allowed email accounts.', 'mailbox', 'limit'],
      ['The quota cannot exceed the maximum allowed quota of 200 MB for this account.', 'mailbox', 'limit'],
      ['“no good@bob.example.in” is not a valid email address.', 'mailbox', 'bad_mailbox'],
      ['“FLY” is not a valid MySQL privilege.', 'database', undefined],
      ['One or more domains passed failed to validate.', 'other', undefined],
      ['“bob” is not a valid username on this system.', 'account', undefined],
    ];
    for (const [text, area, reason] of table) assert.equal(recognise(text, area), reason, text);
  });

  test('a function the server fails (failNext) is rejected with its text, retryable (it says "Try again"); UAPI too', async () => {
    const info = await account();
    await emulator.setFaults({ failNext: { createacct: 1, 'Mysql::create_database': 1 } });
    const other = names();
    await rejectsWith(cpanel.createAccount({ ...other, package: 'default', password: STRONG, contactEmail: '' }), {
      kind: 'rejected',
      detail: /internal error/,
      retryable: true,
    });
    assert.equal(emulator.state.accounts.has(other.username), false);
    await rejectsWith(cpanel.createDatabase(info.username, `${info.username}_x`), {
      kind: 'rejected',
      detail: /internal error/,
    });
    assert.equal(stateOf(info.username).databases.length, 0);
    await cpanel.createDatabase(info.username, `${info.username}_x`);
  });

  test('500, 503 (upgrading), a dead server and a hanging one are retryable unreachable / timeout', async () => {
    const info = await account();
    await emulator.setFaults({ errorRate: 1 });
    await rejectsWith(cpanel.ping(), { kind: 'unreachable', status: 500, retryable: true });
    await rejectsWith(cpanel.listDatabases(info.username), { kind: 'unreachable', status: 500, retryable: true });
    emulator.reset();

    await emulator.setFaults({ upgrading: true });
    await rejectsWith(cpanel.findAccount(info.username), {
      kind: 'unreachable',
      status: 503,
      retryable: true,
      message: /being updated/,
    });
    emulator.reset();

    await emulator.setFaults({ down: true });
    await rejectsWith(cpanel.ping(), { kind: 'unreachable', retryable: true });
    await rejectsWith(cpanel.usage(info.username), { kind: 'unreachable', retryable: true });
    emulator.reset();

    await emulator.setFaults({ hang: true });
    await rejectsWith(driver({ requestTimeoutMs: 200 }).ping(), { kind: 'timeout', retryable: true });
    emulator.reset();

    await emulator.setFaults({ latencyMs: 50 });
    assert.deepEqual(await cpanel.ping(), { version: '11.120.0.16' }, 'slow but working');
  });

  test('403, pages that are not the API, an unknown function, and a server echoing the token', async () => {
    const seen: string[] = [];
    const fake = await listen((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const echo = `Access denied for ${req.headers.authorization ?? ''}`;
      if (path.endsWith('/version')) {
        res.writeHead(403, { 'content-type': 'text/plain' });
        return res.end(echo);
      }
      if (path.endsWith('/get_nameserver_config')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>Login</html>');
      }
      if (path.endsWith('/listpkgs')) {
        res.writeHead(301, { location: 'https://x:2087/' });
        return res.end();
      }
      if (path.endsWith('/listaccts')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            metadata: { result: 0, reason: 'Unknown app (listaccts) requested for this version (1) of the API.' },
          }),
        );
      }
      if (path.endsWith('/uapi_cpanel')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ metadata: { result: 1, reason: 'OK' }, data: { something: 'else' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      const reason = path.endsWith('/unsuspendacct') ? 'Access denied' : `Refused: ${req.headers.authorization}`;
      res.end(JSON.stringify({ metadata: { result: 0, reason } }));
    });
    try {
      const panel = driver({ endpoint: fake.url });
      const e = await rejectsWith(panel.ping(), { kind: 'auth', status: 403, retryable: false });
      assert.match(e.message, /Access denied for whm root:\*\*\*/, 'a short plain-text body is quoted, redacted');
      await rejectsWith(panel.unsuspend('bob'), { kind: 'forbidden', retryable: false, detail: /Access denied/ });
      await rejectsWith(panel.nameservers(), { kind: 'protocol', message: /not JSON/ });
      await rejectsWith(
        panel.ensurePackage({
          name: 'p',
          diskMb: 1,
          maxMailboxes: 1,
          maxDatabases: 1,
          maxAddonDomains: 0,
          maxSubdomains: 0,
          maxMailboxQuotaMb: 1,
        }),
        { kind: 'protocol', status: 301 },
      );
      await rejectsWith(panel.findAccount('bob'), { kind: 'protocol', message: /does not know this call/ });
      await rejectsWith(panel.usage('bob'), { kind: 'protocol', message: /UAPI result/ });
      const d = await rejectsWith(panel.suspend('bob', 'x'), { kind: 'rejected' });
      assert.match(d.detail ?? '', /whm root:\*\*\*/);
      // Passwords travel in form bodies, never in a URL.
      await rejectsWith(panel.setPassword('bob', STRONG), { kind: 'rejected' });
      assert.ok(
        seen.every((line) => !line.includes(STRONG) && !line.includes('Zq8')),
        seen.join('\n'),
      );
    } finally {
      await fake.stop();
    }
  });
});

/** A throwaway HTTP server on 127.0.0.1 (stopped by the caller). */
async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
