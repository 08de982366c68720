// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The cPanel & WHM emulator over plain HTTP, as a driver sees it: token auth errors, the WHM
// and UAPI envelopes (and uapi_cpanel, and legacy API 0), packages, createacct's rules,
// suspend/unsuspend/removeacct, passwd, listaccts, one-click session URLs, every UAPI function
// the platform uses (Mysql prefix/limit/strength errors, Email, LangPHP, ResourceUsage, DNS,
// SSL with AutoSSL and HTTPS redirects, Passwd, DomainInfo, Tokens), the fault knobs, and the
// state file across a restart.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CpanelEmulator, startCpanelEmulator } from '../../emulators/src/cpanel/index.ts';

/** A parsed JSON answer (JSON.parse's own type); tests check it field by field. */
type Json = ReturnType<typeof JSON.parse>;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

const STRONG = 'Xk9#mQ2!vLp7$Rt';
const STRONG2 = 'Tz4&nW8@cHq3%Yb';

let emu: CpanelEmulator;

before(async () => {
  emu = await startCpanelEmulator({ autosslDelayMs: 60 });
});
after(async () => {
  await emu.stop();
});

async function request(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  target: CpanelEmulator = emu,
): Promise<Reply> {
  const res = await fetch(`${target.url}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: Json = {};
  try {
    json = text === '' ? {} : (JSON.parse(text) as Json);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** A WHM API 1 call (GET with a query string). */
function whm(fn: string, params: Record<string, string> = {}, target: CpanelEmulator = emu): Promise<Reply> {
  const query = new URLSearchParams({ 'api.version': '1', ...params });
  return request(
    'GET',
    `/json-api/${fn}?${query}`,
    { Authorization: `whm root:${target.whmToken}` },
    undefined,
    target,
  );
}

/** A UAPI call through WHM's uapi_cpanel; answers the UAPI result object. */
async function uapi(
  user: string,
  module: string,
  fn: string,
  params: Record<string, string> | [string, string][] = {},
  target: CpanelEmulator = emu,
): Promise<Json> {
  const query = new URLSearchParams([
    ['api.version', '1'],
    ['cpanel.user', user],
    ['cpanel.module', module],
    ['cpanel.function', fn],
    ...(Array.isArray(params) ? params : Object.entries(params)),
  ]);
  const r = await request(
    'GET',
    `/json-api/uapi_cpanel?${query}`,
    { Authorization: `whm root:${target.whmToken}` },
    undefined,
    target,
  );
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.metadata.command, 'uapi_cpanel');
  assert.equal(r.json.metadata.result, 1, r.text);
  return r.json.data.uapi;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

let made = 0;
/** A fresh account (unique name and domain) on a package; answers its username and domain. */
async function makeAccount(plan = 'default', target: CpanelEmulator = emu): Promise<{ user: string; domain: string }> {
  made += 1;
  const user = `cust${String(made).padStart(3, '0')}${String.fromCharCode(97 + (made % 26))}`;
  const domain = `${user}.example`;
  const r = await whm('createacct', { username: user, domain, plan, password: STRONG }, target);
  assert.equal(r.json.metadata.result, 1, r.text);
  return { user, domain };
}

describe('auth', () => {
  test('no credentials: 401 with a login page', async () => {
    const r = await request('GET', '/json-api/version?api.version=1', {});
    assert.equal(r.status, 401);
    assert.match(r.headers.get('content-type') ?? '', /text\/html/);
  });

  test('wrong token, wrong user, malformed header: 401', async () => {
    for (const header of [`whm root:${'A'.repeat(32)}`, `whm admin:${emu.whmToken}`, 'whm root', 'Bearer abc']) {
      const r = await request('GET', '/json-api/version?api.version=1', { Authorization: header });
      assert.equal(r.status, 401, header);
    }
  });

  test('a cPanel token only opens UAPI: WHM functions answer 403', async () => {
    const { user } = await makeAccount();
    const token = await uapi(user, 'Tokens', 'create_full_access', { name: 'driver' });
    assert.equal(token.status, 1);
    assert.match(token.data.token, /^[A-Z0-9]{32}$/);
    const auth = { Authorization: `cpanel ${user}:${token.data.token}` };
    const denied = await request('GET', '/json-api/createacct?api.version=1', auth);
    assert.equal(denied.status, 403);
    assert.equal(denied.text, 'Token authentication allows access to UAPI or API 2 calls only.');
    const ok = await request('GET', '/execute/Mysql/get_restrictions', auth);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.status, 1);
    assert.equal(ok.json.data.prefix, `${user.slice(0, 8)}_`);
    const wrong = await request('GET', '/execute/Mysql/get_restrictions', {
      Authorization: `cpanel ${user}:${'B'.repeat(32)}`,
    });
    assert.equal(wrong.status, 401);
    // Basic auth with the account password works for UAPI too.
    const basic = await request('GET', '/execute/DomainInfo/list_domains', {
      Authorization: `Basic ${Buffer.from(`${user}:${STRONG}`).toString('base64')}`,
    });
    assert.equal(basic.json.status, 1);
    // The WHM token is for WHM functions.
    const whmOnExecute = await request('GET', '/execute/Mysql/get_restrictions', {
      Authorization: `whm root:${emu.whmToken}`,
    });
    assert.equal(whmOnExecute.status, 403);
    // Revoked tokens stop working.
    assert.equal((await uapi(user, 'Tokens', 'revoke', { name: 'driver' })).data, 1);
    assert.equal((await request('GET', '/execute/Mysql/get_restrictions', auth)).status, 401);
  });
});

describe('envelopes', () => {
  test('WHM API 1: metadata + data; failures are HTTP 200 with result 0', async () => {
    const v = await whm('version');
    assert.equal(v.status, 200);
    assert.deepEqual(v.json.metadata, { command: 'version', version: 1, result: 1, reason: 'OK' });
    assert.match(v.json.data.version, /^11\.\d+\.\d+\.\d+$/);
    const unknown = await whm('no_such_function');
    assert.equal(unknown.status, 200);
    assert.equal(unknown.json.metadata.result, 0);
    assert.match(unknown.json.metadata.reason, /Unknown app\s+\(no_such_function\)\s+requested/);
    const ns = await whm('get_nameserver_config');
    assert.deepEqual(ns.json.data.nameservers, ['ns1.hostplane.test', 'ns2.hostplane.test']);
  });

  test('without api.version=1: the legacy API 0 shape', async () => {
    const r = await request('GET', '/json-api/version', { Authorization: `whm root:${emu.whmToken}` });
    assert.equal(r.status, 200);
    assert.equal(r.json.metadata, undefined);
    assert.equal(r.json.result[0].status, 1);
  });

  test('POST form-encoded parameters work like GET', async () => {
    const body = new URLSearchParams({ 'api.version': '1', name: 'formpkg', quota: '100' }).toString();
    const r = await request(
      'POST',
      '/json-api/addpkg',
      {
        Authorization: `whm root:${emu.whmToken}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body,
    );
    assert.equal(r.json.metadata.result, 1, r.text);
    assert.equal((await whm('getpkginfo', { pkg: 'formpkg' })).json.data.pkg.QUOTA, '100');
  });

  test('uapi_cpanel: the UAPI result under data.uapi; missing parameters fail in the WHM envelope', async () => {
    const { user } = await makeAccount();
    const result = await uapi(user, 'DomainInfo', 'list_domains');
    assert.deepEqual(Object.keys(result).sort(), ['data', 'errors', 'messages', 'metadata', 'status', 'warnings']);
    const missing = await whm('uapi_cpanel', { 'cpanel.module': 'Mysql', 'cpanel.function': 'list_databases' });
    assert.equal(missing.json.metadata.result, 0);
    assert.match(missing.json.metadata.reason, /cpanel\.user/);
    const nobody = await whm('uapi_cpanel', {
      'cpanel.user': 'nosuchuser',
      'cpanel.module': 'Mysql',
      'cpanel.function': 'list_databases',
    });
    assert.equal(nobody.json.metadata.result, 0);
    assert.equal(nobody.json.metadata.reason, 'You do not have a user named “nosuchuser”.');
    const badFn = await uapi(user, 'Mysql', 'no_such_fn');
    assert.equal(badFn.status, 0);
    assert.equal(badFn.errors.length, 1);
  });
});

describe('packages', () => {
  test('addpkg, listpkgs, getpkginfo, editpkg', async () => {
    const add = await whm('addpkg', {
      name: 'pk_basic',
      quota: '500',
      maxpop: '2',
      maxsql: '1',
      maxaddon: '0',
      maxsub: '5',
      max_emailacct_quota: '100',
      bwlimit: 'unlimited',
    });
    assert.equal(add.json.metadata.result, 1, add.text);
    const again = await whm('addpkg', { name: 'pk_basic' });
    assert.equal(again.json.metadata.result, 0);
    assert.match(again.json.metadata.reason, /The package “pk_basic” already exists/);
    const bad = await whm('addpkg', { name: 'pk_bad', quota: 'lots' });
    assert.equal(bad.json.metadata.result, 0);
    assert.match(bad.json.metadata.reason, /Invalid value “lots” for the “quota” setting/);
    const list = await whm('listpkgs');
    const names = list.json.data.pkg.map((p: { name: string }) => p.name);
    assert.ok(names.includes('default') && names.includes('pk_basic'));
    const info = await whm('getpkginfo', { pkg: 'pk_basic' });
    assert.equal(info.json.data.pkg.QUOTA, '500');
    assert.equal(info.json.data.pkg.BWLIMIT, null);
    assert.equal(info.json.data.pkg.MAX_EMAILACCT_QUOTA, '100');
    const missing = await whm('getpkginfo', { pkg: 'nope' });
    assert.equal(missing.json.metadata.result, 0);
    assert.equal(missing.json.metadata.reason, 'The package “nope” does not exist.');
    // Editing a package changes the accounts on it.
    const { user } = await makeAccount('pk_basic');
    assert.equal((await whm('editpkg', { name: 'pk_basic', maxsql: '3' })).json.metadata.result, 1);
    const summary = await whm('accountsummary', { user });
    assert.equal(summary.json.data.acct[0].maxsql, '3');
  });
});

describe('createacct', () => {
  test('success: reason, data, password, zone and placeholder certificate', async () => {
    const r = await whm('createacct', {
      username: 'shopone',
      domain: 'shop-one.example',
      plan: 'default',
      password: STRONG,
      contactemail: 'owner@mail.example',
    });
    assert.equal(r.json.metadata.result, 1, r.text);
    assert.equal(r.json.metadata.reason, 'Account Creation Ok');
    assert.match(r.json.metadata.output.raw, /shop-one\.example/);
    assert.equal(r.json.data.ip, '192.0.2.10');
    assert.equal(r.json.data.nameserver, 'ns1.hostplane.test');
    assert.equal(r.json.data.nameserver2, 'ns2.hostplane.test');
    assert.equal(r.json.data.package, 'default');
    assert.ok(emu.checkPassword('shopone', STRONG));
    assert.ok(!emu.checkPassword('shopone', 'wrong'));
    const acct = emu.state.accounts.get('shopone');
    assert.equal(acct?.email, 'owner@mail.example');
    assert.equal(acct?.certs['shop-one.example']?.isSelfSigned, true);
  });

  test('without a password one is generated', async () => {
    const r = await whm('createacct', { username: 'nopass', domain: 'nopass.example' });
    assert.equal(r.json.metadata.result, 1, r.text);
    assert.ok(emu.state.accounts.has('nopass'));
  });

  test('username rules', async () => {
    const cases: [string, RegExp][] = [
      ['', /No user name supplied/],
      ['Upper', /“Upper” is not a valid username on this system\./],
      ['1abc', /is not a valid username/],
      ['has_underscore', /is not a valid username/],
      ['abcdefghijklmnopq', /is not a valid username/],
      ['testuser', /“testuser” is a reserved username on this system\./],
      ['root', /reserved username/],
      ['shopone', /This system already has an account named “shopone”\./],
    ];
    for (const [username, re] of cases) {
      const r = await whm('createacct', { username, domain: `ok-${made++}.example`, password: STRONG });
      assert.equal(r.status, 200);
      assert.equal(r.json.metadata.result, 0, username);
      assert.match(r.json.metadata.reason, re, username);
    }
  });

  test('first 8 characters must be unique', async () => {
    assert.equal(
      (await whm('createacct', { username: 'longname1', domain: 'ln1.example', password: STRONG })).json.metadata
        .result,
      1,
    );
    const r = await whm('createacct', { username: 'longname2', domain: 'ln2.example', password: STRONG });
    assert.equal(r.json.metadata.result, 0);
    assert.equal(
      r.json.metadata.reason,
      'The name of another account on this server has the same initial 8 characters as the given username (longname2). Each username’s first 8 characters must be unique.',
    );
  });

  test('domain, package and password rules', async () => {
    const bad = await whm('createacct', { username: 'baddom', domain: 'not a domain', password: STRONG });
    assert.equal(bad.json.metadata.reason, '“not a domain” is not a valid domain.');
    const taken = await whm('createacct', { username: 'takendom', domain: 'shop-one.example', password: STRONG });
    assert.equal(taken.json.metadata.result, 0);
    // Cpanel::Validate::Component::Domain::HasUserDataDomainsEntry's text (root is told whose it is).
    assert.equal(
      taken.json.metadata.reason,
      'The domain “shop-one.example” already exists in the userdata for the user “shopone”.',
    );
    const noPkg = await whm('createacct', {
      username: 'nopkg',
      domain: 'nopkg.example',
      plan: 'gold',
      password: STRONG,
    });
    assert.equal(noPkg.json.metadata.reason, 'The package “gold” does not exist.');
    const weak = await whm('createacct', { username: 'weakpw', domain: 'weakpw.example', password: 'password1' });
    assert.equal(weak.json.metadata.result, 0);
    assert.match(weak.json.metadata.reason, /too weak.*strength rating of 65 or higher\./);
    const hasUser = await whm('createacct', {
      username: 'inpass',
      domain: 'inpass.example',
      password: `Q7!inpass#Zr2`,
    });
    assert.match(hasUser.json.metadata.reason, /may not contain the username/);
    assert.ok(!emu.state.accounts.has('weakpw'));
    const strength = await whm('get_password_strength', { password: STRONG });
    assert.equal(strength.json.data.strength, 100);
  });
});

describe('account lifecycle', () => {
  test('suspend, unsuspend, listaccts, accountsummary, removeacct', async () => {
    const { user, domain } = await makeAccount();
    const s = await whm('suspendacct', { user, reason: 'Unpaid invoice' });
    assert.equal(s.json.metadata.result, 1);
    assert.equal(s.json.metadata.reason, 'OK');
    let acct = (await whm('accountsummary', { user })).json.data.acct[0];
    assert.equal(acct.suspended, 1);
    assert.equal(acct.suspendreason, 'Unpaid invoice');
    // Changes through UAPI are refused while suspended; reads still work.
    const refused = await uapi(user, 'Mysql', 'create_database', { name: `${user.slice(0, 8)}_x` });
    assert.equal(refused.status, 0);
    assert.equal(refused.errors[0], `The account “${user}” is suspended.`);
    assert.equal((await uapi(user, 'Mysql', 'list_databases')).status, 1);
    const session = await whm('create_user_session', { user, service: 'cpaneld' });
    assert.equal(session.json.metadata.result, 0);
    assert.match(session.json.metadata.reason, /currently suspended/);
    assert.equal((await whm('unsuspendacct', { user })).json.metadata.result, 1);
    acct = (await whm('accountsummary', { user })).json.data.acct[0];
    assert.equal(acct.suspended, 0);
    assert.equal(acct.suspendreason, 'not suspended');
    // listaccts searches.
    const byDomain = await whm('listaccts', { search: domain, searchtype: 'domain', want: 'user,domain,plan' });
    assert.deepEqual(byDomain.json.data.acct, [{ user, domain, plan: 'default' }]);
    const none = await whm('listaccts', { search: '^zzz-none$', searchtype: 'user' });
    assert.equal(none.json.metadata.result, 1);
    assert.equal(none.json.data, undefined);
    const badType = await whm('listaccts', { searchtype: 'color' });
    assert.equal(badType.json.metadata.reason, 'Unknown search type.');
    // Remove (there is no terminateacct).
    const rm = await whm('removeacct', { user });
    assert.equal(rm.json.metadata.result, 1);
    assert.equal(rm.json.metadata.reason, `${user} account removed`);
    assert.ok(!emu.state.accounts.has(user));
    const again = await whm('removeacct', { user });
    assert.equal(again.json.metadata.result, 0);
    const summary = await whm('accountsummary', { user });
    assert.equal(summary.json.metadata.result, 0);
    assert.equal(summary.json.metadata.reason, 'Account does not exist.');
    assert.equal((await whm('terminateacct', { user })).json.metadata.result, 0);
  });

  test('passwd and Passwd::change_password', async () => {
    const { user } = await makeAccount();
    const weak = await whm('passwd', { user, password: 'abc12345' });
    assert.equal(weak.json.metadata.result, 0);
    assert.match(weak.json.metadata.reason, /^Sorry, the password you selected cannot be used/);
    const ok = await whm('passwd', { user, password: STRONG2 });
    assert.equal(ok.json.metadata.result, 1, ok.text);
    assert.ok(emu.checkPassword(user, STRONG2));
    const wrongOld = await uapi(user, 'Passwd', 'change_password', { oldpass: STRONG, newpass: STRONG });
    assert.equal(wrongOld.status, 0);
    const changed = await uapi(user, 'Passwd', 'change_password', { oldpass: STRONG2, newpass: STRONG });
    assert.equal(changed.status, 1, JSON.stringify(changed));
    assert.ok(emu.checkPassword(user, STRONG));
  });

  test('changepackage applies the new limits', async () => {
    await whm('addpkg', { name: 'pk_small', maxsql: '1' });
    await whm('addpkg', { name: 'pk_big', maxsql: '10' });
    const { user } = await makeAccount('pk_small');
    const r = await whm('changepackage', { user, pkg: 'pk_big' });
    assert.equal(r.json.metadata.result, 1);
    const acct = (await whm('accountsummary', { user })).json.data.acct[0];
    assert.equal(acct.plan, 'pk_big');
    assert.equal(acct.maxsql, '10');
    assert.equal((await whm('changepackage', { user, pkg: 'nope' })).json.metadata.result, 0);
  });
});

describe('create_user_session', () => {
  test('the URL logs in once, then is spent; an unused one expires', async () => {
    const { user } = await makeAccount();
    const r = await whm('create_user_session', { user, service: 'cpaneld' });
    assert.equal(r.json.metadata.result, 1, r.text);
    const { url, session, expires } = r.json.data;
    assert.match(url, /\/cpsess\d{10}\/login\/\?session=/);
    assert.ok(session.startsWith(`${user}:`));
    assert.ok(expires > Date.now() / 1000);
    const first = await fetch(url, { redirect: 'manual' });
    assert.equal(first.status, 302);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    assert.match(cookie, /^cpsession=/);
    const home = await fetch(new URL(first.headers.get('location') ?? '', url), { headers: { cookie } });
    assert.equal(home.status, 200);
    assert.match(await home.text(), /cPanel/);
    const second = await fetch(url, { redirect: 'manual' });
    assert.equal(second.status, 401);
    // An unused URL past its lifetime no longer works.
    const late = await whm('create_user_session', { user, service: 'cpaneld' });
    const stored = emu.state.sessions.get(late.json.data.session);
    assert.ok(stored);
    stored.expires = Math.floor(Date.now() / 1000) - 1;
    assert.equal((await fetch(late.json.data.url, { redirect: 'manual' })).status, 401);
    const nobody = await whm('create_user_session', { user: 'ghost', service: 'cpaneld' });
    assert.match(nobody.json.metadata.reason, /because they do not exist/);
  });
});

describe('UAPI Mysql', () => {
  test('prefix rule, validation texts, limit, strength, grants, listing', async () => {
    await whm('addpkg', { name: 'pk_sql2', maxsql: '2' });
    const { user } = await makeAccount('pk_sql2');
    const prefix = `${user.slice(0, 8)}_`;
    const restrictions = await uapi(user, 'Mysql', 'get_restrictions');
    assert.deepEqual(restrictions.data, { prefix, max_database_name_length: 64, max_username_length: 32 });
    const noPrefix = await uapi(user, 'Mysql', 'create_database', { name: 'wordpress' });
    assert.equal(noPrefix.status, 0);
    assert.deepEqual(noPrefix.errors, [`The name “wordpress” does not begin with the required prefix “${prefix}”.`]);
    assert.equal(noPrefix.data, null);
    assert.deepEqual((await uapi(user, 'Mysql', 'create_database', {})).errors, ['Provide the “name” argument.']);
    assert.equal(
      (await uapi(user, 'Mysql', 'create_database', { name: 'information_schema' })).errors[0],
      '“information_schema” is a reserved name for databases on this system.',
    );
    assert.match(
      (await uapi(user, 'Mysql', 'create_database', { name: `${prefix}${'x'.repeat(60)}` })).errors[0],
      /is too long by \d+ characters\. A database name cannot exceed 64 characters\./,
    );
    assert.match((await uapi(user, 'Mysql', 'create_database', { name: `${prefix}a'b` })).errors[0], /quote/);
    assert.match(
      (await uapi(user, 'Mysql', 'create_database', { name: `${prefix}db`, 'prefix-size': '12' })).errors[0],
      /prefix size/,
    );
    assert.equal((await uapi(user, 'Mysql', 'create_database', { name: `${prefix}one` })).status, 1);
    assert.equal(
      (await uapi(user, 'Mysql', 'create_database', { name: `${prefix}one` })).errors[0],
      `The database “${prefix}one” already exists.`,
    );
    assert.equal((await uapi(user, 'Mysql', 'create_database', { name: `${prefix}two` })).status, 1);
    const limit = await uapi(user, 'Mysql', 'create_database', { name: `${prefix}three` });
    assert.equal(limit.status, 0);
    assert.equal(limit.errors[0], 'You have reached your maximum allotment of databases (2).');
    // Users.
    const weak = await uapi(user, 'Mysql', 'create_user', { name: `${prefix}app`, password: 'hunter22' });
    assert.deepEqual(weak.errors, [
      'The given password is too weak. Please enter a password with a strength rating of 65 or higher.',
    ]);
    assert.match(
      (await uapi(user, 'Mysql', 'create_user', { name: 'app', password: STRONG })).errors[0],
      /does not begin with the required prefix/,
    );
    assert.equal((await uapi(user, 'Mysql', 'create_user', { name: `${prefix}app`, password: STRONG })).status, 1);
    assert.ok(emu.checkDbUserPassword(`${prefix}app`, STRONG));
    const grant = await uapi(user, 'Mysql', 'set_privileges_on_database', {
      user: `${prefix}app`,
      database: `${prefix}one`,
      privileges: 'ALL PRIVILEGES',
    });
    assert.equal(grant.status, 1, JSON.stringify(grant));
    const dbs = await uapi(user, 'Mysql', 'list_databases');
    const one = dbs.data.find((d: { database: string }) => d.database === `${prefix}one`);
    assert.deepEqual(one.users, [`${prefix}app`]);
    assert.equal(typeof one.disk_usage, 'number');
    const users = await uapi(user, 'Mysql', 'list_users');
    assert.deepEqual(users.data[0].databases, [`${prefix}one`]);
    assert.equal(users.data[0].shortuser, 'app');
    assert.equal((await uapi(user, 'Mysql', 'set_password', { user: `${prefix}app`, password: STRONG2 })).status, 1);
    assert.ok(emu.checkDbUserPassword(`${prefix}app`, STRONG2));
    const ghost = await uapi(user, 'Mysql', 'delete_user', { name: `${prefix}ghost` });
    assert.equal(ghost.errors[0], `The system user “${user}” does not control a MySQL user named “${prefix}ghost”.`);
    assert.equal((await uapi(user, 'Mysql', 'delete_user', { name: `${prefix}app` })).status, 1);
    assert.equal((await uapi(user, 'Mysql', 'delete_database', { name: `${prefix}one` })).status, 1);
    assert.match(
      (await uapi(user, 'Mysql', 'delete_database', { name: `${prefix}one` })).errors[0],
      /does not control/,
    );
    assert.equal((await uapi(user, 'Mysql', 'list_databases')).data.length, 1);
  });

  test('a 16-character prefix server', async () => {
    const wide = await startCpanelEmulator({ prefixSize: 16, autosslDelayMs: 10 });
    try {
      const r = await whm(
        'createacct',
        { username: 'averylongusernam', domain: 'long.example', password: STRONG },
        wide,
      );
      assert.equal(r.json.metadata.result, 1, r.text);
      const restrictions = await uapi('averylongusernam', 'Mysql', 'get_restrictions', {}, wide);
      assert.equal(restrictions.data.prefix, 'averylongusernam_');
      // prefix-size=8 accepts the short prefix.
      const short = await uapi(
        'averylongusernam',
        'Mysql',
        'create_database',
        { name: 'averylon_db', 'prefix-size': '8' },
        wide,
      );
      assert.equal(short.status, 1, JSON.stringify(short));
    } finally {
      await wide.stop();
    }
  });
});

describe('UAPI Email', () => {
  test('add_pop with limits and strength, quotas, passwords, usage, delete', async () => {
    await whm('addpkg', { name: 'pk_mail', maxpop: '2', max_emailacct_quota: '250' });
    const { user, domain } = await makeAccount('pk_mail');
    const added = await uapi(user, 'Email', 'add_pop', { email: 'info', domain, password: STRONG, quota: '100' });
    assert.equal(added.status, 1, JSON.stringify(added));
    assert.equal(added.data, `info+${domain}`);
    assert.ok(emu.checkMailboxPassword(`info@${domain}`, STRONG));
    const dup = await uapi(user, 'Email', 'add_pop', { email: `info@${domain}`, password: STRONG });
    assert.equal(dup.status, 0);
    const weak = await uapi(user, 'Email', 'add_pop', { email: 'weak', domain, password: 'qwerty12' });
    assert.match(weak.errors[0], /^Sorry, the password you selected cannot be used/);
    const big = await uapi(user, 'Email', 'add_pop', { email: 'big', domain, password: STRONG, quota: '500' });
    assert.match(big.errors[0], /cannot exceed the maximum allowed quota of 250 MB/);
    const unlimited = await uapi(user, 'Email', 'add_pop', { email: 'big', domain, password: STRONG, quota: '0' });
    assert.equal(unlimited.status, 0);
    assert.equal((await uapi(user, 'Email', 'add_pop', { email: 'sales', domain, password: STRONG2 })).status, 1);
    const third = await uapi(user, 'Email', 'add_pop', { email: 'third', domain, password: STRONG });
    assert.match(third.errors[0], /more than 2 email accounts/);
    // Usage grows with time.
    const list = await uapi(user, 'Email', 'list_pops_with_disk', { domain });
    assert.equal(list.data.length, 2);
    const info = list.data.find((m: { email: string }) => m.email === `info@${domain}`);
    assert.equal(info.diskquota, 100);
    assert.equal(info._diskquota, 100 * 1024 * 1024);
    assert.ok(info._diskused > 0);
    const box = emu.state.accounts.get(user)?.mailboxes.find((m) => m.user === 'info');
    assert.ok(box);
    box.createdAt -= 3600_000;
    const later = (await uapi(user, 'Email', 'list_pops_with_disk', { email: `info@${domain}` })).data[0];
    assert.ok(later._diskused > info._diskused);
    // Quota and password changes.
    assert.equal((await uapi(user, 'Email', 'edit_pop_quota', { email: 'info', domain, quota: '200' })).status, 1);
    assert.equal(emu.state.accounts.get(user)?.mailboxes.find((m) => m.user === 'info')?.quotaMb, 200);
    assert.equal((await uapi(user, 'Email', 'passwd_pop', { email: 'info', domain, password: STRONG2 })).status, 1);
    assert.ok(emu.checkMailboxPassword(`info@${domain}`, STRONG2));
    assert.equal((await uapi(user, 'Email', 'delete_pop', { email: 'info', domain })).status, 1);
    assert.equal((await uapi(user, 'Email', 'delete_pop', { email: 'info', domain })).status, 0);
    // ResourceUsage counts mailboxes against the package.
    const usages = (await uapi(user, 'ResourceUsage', 'get_usages')).data;
    const email = usages.find((u: { id: string }) => u.id === 'email_accounts');
    assert.deepEqual([email.usage, email.maximum], [1, 2]);
  });
});

describe('UAPI LangPHP, ResourceUsage, DNS, DomainInfo', () => {
  test('PHP versions per vhost', async () => {
    const { user, domain } = await makeAccount();
    const installed = await uapi(user, 'LangPHP', 'php_get_installed_versions');
    assert.deepEqual(installed.data.versions, ['ea-php74', 'ea-php80', 'ea-php81', 'ea-php82', 'ea-php83']);
    const before = await uapi(user, 'LangPHP', 'php_get_vhost_versions');
    assert.equal(before.data[0].vhost, domain);
    assert.deepEqual(before.data[0].phpversion_source, { system_default: 1 });
    const set = await uapi(user, 'LangPHP', 'php_set_vhost_versions', { version: 'ea-php83', vhost: domain });
    assert.deepEqual(set.data, { vhosts: [domain] });
    const one = await uapi(user, 'LangPHP', 'php_get_vhost_versions', { vhost: domain });
    assert.equal(one.data.version, 'ea-php83');
    const unknown = await uapi(user, 'LangPHP', 'php_set_vhost_versions', { version: 'ea-php99', vhost: domain });
    assert.deepEqual(unknown.errors, ['“ea-php99” is not installed on the system.']);
    const noVhost = await uapi(user, 'LangPHP', 'php_get_vhost_versions', { vhost: 'other.example' });
    assert.equal(noVhost.status, 0);
    const partial = await uapi(user, 'LangPHP', 'php_set_vhost_versions', [
      ['version', 'inherit'],
      ['vhost', domain],
      ['vhost', 'other.example'],
    ]);
    assert.equal(partial.status, 0);
    assert.deepEqual(partial.data, { vhosts: [domain] });
  });

  test('ResourceUsage maxima come from the package', async () => {
    await whm('addpkg', { name: 'pk_usage', quota: '2048', maxsql: '4', bwlimit: '10240' });
    const { user } = await makeAccount('pk_usage');
    const rows = (await uapi(user, 'ResourceUsage', 'get_usages')).data as {
      id: string;
      usage: number;
      maximum: number | null;
    }[];
    const by = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.equal(by.disk_usage?.maximum, 2048 * 1024 * 1024);
    assert.ok((by.disk_usage?.usage ?? 0) > 0);
    assert.equal(by.mysql_databases?.maximum, 4);
    assert.equal(by.bandwidth?.maximum, 10240 * 1024 * 1024);
    assert.equal(by.subdomains?.maximum, null);
  });

  test('DNS::parse_zone answers the seeded zone base64-encoded', async () => {
    const { user, domain } = await makeAccount();
    const zone = await uapi(user, 'DNS', 'parse_zone', { zone: domain });
    assert.equal(zone.status, 1);
    const decode = (s: string) => Buffer.from(s, 'base64').toString('utf8');
    const records = zone.data
      .filter((l: { type: string }) => l.type === 'record')
      .map((l: { dname_b64: string; record_type: string; data_b64: string[] }) => ({
        name: decode(l.dname_b64),
        type: l.record_type,
        data: l.data_b64.map(decode),
      }));
    const types = records.map((r: { type: string }) => r.type);
    assert.deepEqual(types.filter((t: string) => t === 'NS').length, 2);
    for (const t of ['SOA', 'A', 'MX', 'TXT']) assert.ok(types.includes(t), t);
    const a = records.filter((r: { type: string }) => r.type === 'A').map((r: { name: string }) => r.name);
    assert.deepEqual(a.sort(), [`${domain}.`, `mail.${domain}.`, `www.${domain}.`]);
    const txt = records.find((r: { type: string }) => r.type === 'TXT');
    assert.match(txt.data[0], /^v=spf1 /);
    const control = zone.data.find((l: { type: string }) => l.type === 'control');
    assert.equal(decode(control.text_b64), '$TTL 14400');
    const other = await uapi(user, 'DNS', 'parse_zone', { zone: 'someone-else.example' });
    assert.equal(other.status, 0);
    assert.equal(other.errors[0], 'You do not control a DNS zone named “someone-else.example”.');
    // mass_edit_zone: the serial must be current; records are added, edited and removed.
    const soa = records.find((r: { type: string }) => r.type === 'SOA');
    const serial = soa.data[2];
    const stale = await uapi(user, 'DNS', 'mass_edit_zone', {
      zone: domain,
      serial: '1',
      add: JSON.stringify({ dname: 'blog', ttl: 300, record_type: 'CNAME', data: [`${domain}.`] }),
    });
    assert.equal(stale.status, 0);
    assert.equal(stale.data.type, 'Stale');
    const ns = await uapi(user, 'DNS', 'mass_edit_zone', {
      zone: domain,
      serial,
      add: JSON.stringify({ dname: 'x', ttl: 300, record_type: 'NS', data: ['ns.example.'] }),
    });
    assert.match(ns.errors[0], /cannot create “NS” records/);
    const txtLine = zone.data.find((l: { record_type?: string }) => l.record_type === 'TXT').line_index;
    const edit = await uapi(user, 'DNS', 'mass_edit_zone', [
      ['zone', domain],
      ['serial', serial],
      ['add', JSON.stringify({ dname: 'blog', ttl: 300, record_type: 'CNAME', data: [`${domain}.`] })],
      ['remove', String(txtLine)],
    ]);
    assert.equal(edit.status, 1, JSON.stringify(edit));
    assert.ok(Number(edit.data.new_serial) > Number(serial));
    const after = (await uapi(user, 'DNS', 'parse_zone', { zone: domain })).data;
    const afterTypes = after.map((l: { record_type?: string }) => l.record_type);
    assert.ok(afterTypes.includes('CNAME'));
    assert.ok(!afterTypes.includes('TXT'));
  });

  test('DomainInfo', async () => {
    const { user, domain } = await makeAccount();
    const list = await uapi(user, 'DomainInfo', 'list_domains');
    assert.deepEqual(list.data, { main_domain: domain, addon_domains: [], sub_domains: [], parked_domains: [] });
    const single = await uapi(user, 'DomainInfo', 'single_domain_data', {
      domain,
      return_https_redirect_status: '1',
    });
    assert.equal(single.data.documentroot, `/home/${user}/public_html`);
    assert.equal(single.data.is_https_redirecting, 0);
  });
});

describe('UAPI SSL', () => {
  test('self-signed first, AutoSSL after the delay, then HTTPS redirects', async () => {
    const { user, domain } = await makeAccount();
    const first = (await uapi(user, 'SSL', 'installed_hosts')).data;
    // AutoSSL may already have finished (the delay is short), but a self-signed one is installed at creation.
    await waitFor('AutoSSL certificate', async () => {
      const hosts = (await uapi(user, 'SSL', 'installed_hosts')).data;
      return hosts[0]?.certificate.is_self_signed === 0;
    });
    assert.equal(first.length, 1);
    const hosts = (await uapi(user, 'SSL', 'installed_hosts')).data;
    assert.equal(hosts[0].servername, domain);
    assert.equal(hosts[0].certificate['issuer.organizationName'], 'cPanel, Inc.');
    assert.ok(hosts[0].certificate.domains.includes(`www.${domain}`));
    assert.ok(hosts[0].certificate.not_after > Date.now() / 1000);
    assert.equal((await uapi(user, 'SSL', 'is_autossl_check_in_progress')).data, 0);
    assert.deepEqual((await uapi(user, 'SSL', 'get_autossl_problems')).data, []);
    // Redirect on, read it back, off.
    const on = await uapi(user, 'SSL', 'toggle_ssl_redirect_for_domains', { domains: domain, state: '1' });
    assert.equal(on.status, 1, JSON.stringify(on));
    assert.deepEqual(on.data, [domain]);
    const data = await uapi(user, 'DomainInfo', 'domains_data', { return_https_redirect_status: '1' });
    assert.equal(data.data.main_domain.is_https_redirecting, 1);
    const single = await uapi(user, 'DomainInfo', 'single_domain_data', { domain, return_https_redirect_status: '1' });
    assert.equal(single.data.is_https_redirecting, 1);
    assert.equal(single.data.can_https_redirect, 1);
    const off = await uapi(user, 'SSL', 'toggle_ssl_redirect_for_domains', { domains: domain, state: '0' });
    assert.equal(off.status, 1);
    assert.deepEqual(emu.state.accounts.get(user)?.sslRedirects, []);
    const foreign = await uapi(user, 'SSL', 'toggle_ssl_redirect_for_domains', {
      domains: 'not-mine.example',
      state: '1',
    });
    assert.deepEqual(foreign.errors, ['One or more domains passed failed to validate.']);
  });

  test('no redirect on a self-signed certificate; a check in progress; AutoSSL problems', async () => {
    const slow = await startCpanelEmulator({ autosslDelayMs: 60_000 });
    try {
      const r = await whm('createacct', { username: 'slowssl', domain: 'slowssl.example', password: STRONG }, slow);
      assert.equal(r.json.metadata.result, 1);
      const hosts = (await uapi('slowssl', 'SSL', 'installed_hosts', {}, slow)).data;
      assert.equal(hosts[0].certificate.is_self_signed, 1);
      assert.equal((await uapi('slowssl', 'SSL', 'is_autossl_check_in_progress', {}, slow)).data, 1);
      const refused = await uapi(
        'slowssl',
        'SSL',
        'toggle_ssl_redirect_for_domains',
        { domains: 'slowssl.example', state: '1' },
        slow,
      );
      assert.equal(refused.status, 0);
      // A failing AutoSSL run records problems.
      await slow.setFaults({ autosslFails: true });
      const account = slow.state.accounts.get('slowssl');
      assert.ok(account);
      account.autosslDueAt = Date.now() - 1;
      const problems = (await uapi('slowssl', 'SSL', 'get_autossl_problems', {}, slow)).data;
      assert.ok(problems.length > 0);
      assert.equal(problems[0].domain, 'slowssl.example');
      assert.match(problems[0].problem, /DCV/);
      // start_autossl_check queues another run.
      assert.equal((await uapi('slowssl', 'SSL', 'start_autossl_check', {}, slow)).status, 1);
      assert.equal((await uapi('slowssl', 'SSL', 'is_autossl_check_in_progress', {}, slow)).data, 1);
    } finally {
      await slow.stop();
    }
  });
});

describe('faults', () => {
  test('errorRate answers 500, upgrading 503, failNext fails one function', async () => {
    await emu.setFaults({ errorRate: 1 });
    const crashed = await whm('version');
    assert.equal(crashed.status, 500);
    await emu.setFaults({ errorRate: 0, upgrading: true });
    assert.equal((await whm('version')).status, 503);
    await emu.setFaults({ upgrading: false, failNext: { createacct: 1, 'Mysql::create_database': 1 } });
    const failed = await whm('createacct', { username: 'failedone', domain: 'failedone.example', password: STRONG });
    assert.equal(failed.status, 200);
    assert.equal(failed.json.metadata.result, 0);
    assert.ok(!emu.state.accounts.has('failedone'));
    const { user } = await makeAccount();
    const db = await uapi(user, 'Mysql', 'create_database', { name: `${user.slice(0, 8)}_f` });
    assert.equal(db.status, 0);
    assert.equal(emu.state.accounts.get(user)?.databases.length, 0);
    assert.equal((await uapi(user, 'Mysql', 'create_database', { name: `${user.slice(0, 8)}_f` })).status, 1);
  });

  test('loseNext and loseResponses do the work and cut the answer', async () => {
    await emu.setFaults({ loseNext: 'GET /json-api/createacct' });
    await assert.rejects(whm('createacct', { username: 'lostone', domain: 'lostone.example', password: STRONG }));
    assert.ok(emu.state.accounts.has('lostone'));
    await emu.setFaults({ loseNext: 'Mysql::create_database' });
    await assert.rejects(uapi('lostone', 'Mysql', 'create_database', { name: 'lostone_db' }));
    assert.equal(emu.state.accounts.get('lostone')?.databases.length, 1);
    await emu.setFaults({ loseResponses: 1 });
    await assert.rejects(whm('suspendacct', { user: 'lostone' }));
    assert.equal(emu.state.accounts.get('lostone')?.suspended, true);
    assert.equal((await whm('version')).status, 200);
    assert.ok((emu.calls.get('GET /json-api/createacct') ?? 0) > 0);
    assert.ok((emu.calls.get('uapi Mysql::create_database') ?? 0) > 0);
  });

  test('down resets connections, hang never answers, latency still answers', async () => {
    await emu.setFaults({ down: true });
    await assert.rejects(whm('version'));
    await emu.setFaults({ down: false, hang: true });
    await assert.rejects(
      fetch(`${emu.url}/json-api/version?api.version=1`, {
        headers: { Authorization: `whm root:${emu.whmToken}` },
        signal: AbortSignal.timeout(200),
      }),
    );
    await emu.setFaults({ hang: false, latencyMs: 20 });
    assert.equal((await whm('version')).status, 200);
    await emu.setFaults({ latencyMs: 0 });
  });

  test('control routes: faults over HTTP, state, reset', async () => {
    const bad = await request('POST', '/__emulator/faults', { 'Content-Type': 'application/json' }, '{"nope":1}');
    assert.equal(bad.status, 400);
    const set = await request('POST', '/__emulator/faults', {}, JSON.stringify({ failNext: { version: 1 } }));
    assert.equal(set.status, 200);
    assert.equal((await whm('version')).json.metadata.result, 0);
    const state = await request('GET', '/__emulator/state', {});
    assert.ok(Array.isArray(state.json.accounts));
    assert.equal(state.json.accounts[0].password, undefined);
    await request('POST', '/__emulator/reset', {}, '{}');
    assert.equal(emu.calls.size, 0);
  });
});

describe('state file', () => {
  test('accounts, databases, mailboxes and the token survive a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpanel-emu-'));
    const file = join(dir, 'state.json');
    try {
      const one = await startCpanelEmulator({ stateFile: file, autosslDelayMs: 10 });
      const token = one.whmToken;
      assert.equal(
        (await whm('createacct', { username: 'keeper', domain: 'keeper.example', password: STRONG }, one)).json.metadata
          .result,
        1,
      );
      assert.equal((await uapi('keeper', 'Mysql', 'create_database', { name: 'keeper_db' }, one)).status, 1);
      assert.equal(
        (await uapi('keeper', 'Email', 'add_pop', { email: 'me', domain: 'keeper.example', password: STRONG }, one))
          .status,
        1,
      );
      await one.stop();
      const two = await startCpanelEmulator({ stateFile: file, autosslDelayMs: 10 });
      try {
        assert.equal(two.whmToken, token);
        assert.ok(two.checkPassword('keeper', STRONG));
        assert.ok(two.checkMailboxPassword('me@keeper.example', STRONG));
        const dbs = await uapi('keeper', 'Mysql', 'list_databases', {}, two);
        assert.deepEqual(
          dbs.data.map((d: { database: string }) => d.database),
          ['keeper_db'],
        );
      } finally {
        await two.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
