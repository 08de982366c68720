// Search (issue 15, spec 4.13, CONTRACT §8) through both surfaces: every shape finds what it
// should among the caller's own rows, operators narrow, another account's rows never appear,
// LIKE metacharacters are literal, the limit and totals, the rate limit.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let owner: { browser: Browser; accountId: number; username: string };
let other: { browser: Browser; accountId: number };
let api: ApiClient;
let vpsId: number;
let otherVpsId: number;
let vpsIp: string;
let n = 0;

async function order(b: Browser, label: string, hostname: string): Promise<number> {
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const res = await b.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { server_name: label, hostname, region: 'mum1' }, idempotency_key: `search-${++n}` },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const jobId = res.json().job.id;
  await waitFor(
    'provisioned',
    async () =>
      (await u.t.deps.database.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow())
        .status === 'succeeded',
    60_000,
  );
  return res.json().service.id;
}

const search = (b: Browser, q: string, extra = '') => b.get(`/api/v1/search/?q=${encodeURIComponent(q)}${extra}`);

before(async () => {
  u = await createUpstreamApp();
  const a = await signedInBrowser(u.t, freshIp());
  owner = { browser: a.browser, accountId: a.account.id, username: a.account.username };
  const b = await signedInBrowser(u.t, freshIp());
  other = { browser: b.browser, accountId: b.account.id };
  await u.t.deps.wallet.credit(owner.accountId, '2000', 'Café float 100%_off');
  await u.t.deps.wallet.credit(other.accountId, '2000', 'float');
  vpsId = await order(owner.browser, 'shopfront', 'shop.example.in');
  otherVpsId = await order(other.browser, 'shopother', 'shop.other.in');
  const row = await u.t.deps.database.db
    .selectFrom('ipv4_addresses')
    .select('address')
    .where('service_id', '=', vpsId)
    .executeTakeFirstOrThrow();
  vpsIp = row.address;
  api = await apiClient(u.t, ['read'], '0', owner.accountId);
});
after(() => u.close());

describe('search', () => {
  test('text finds the own service (case, accents, substring, fuzzy), never another account’s', async () => {
    for (const q of ['shop', 'SHOPFRONT', 'shopfrnt', 'shop.example.in']) {
      const res = await search(owner.browser, q);
      assert.equal(res.statusCode, 200, res.body);
      const services = res.json().groups.find((g: { type: string }) => g.type === 'service');
      assert.ok(services, `${q}: ${res.body}`);
      assert.deepEqual(
        services.items.map((i: { id: string }) => i.id),
        [`service:${vpsId}`],
        q,
      );
      assert.match(services.items[0].url, /^http:\/\/localhost:8080\/api\/v1\/client\/services\/\?id=/);
      assert.doesNotMatch(res.body, /shopother|shop\.other\.in/);
    }
    const cafe = await search(owner.browser, 'cafe');
    assert.equal(cafe.json().groups[0].type, 'transaction', cafe.body);
  });

  test('a space in the text stands for any one space or punctuation mark, not for a letter', async () => {
    const fresh = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(fresh.account.id, '1', 'São-Paulo.uplink');
    await u.t.deps.wallet.credit(fresh.account.id, '1', 'web11 spare');
    // The account's only rows are these two credits (a transaction's title does not show its note).
    const found = async (q: string) => {
      const res = await search(fresh.browser, q);
      assert.equal(res.statusCode, 200, res.body);
      return res
        .json()
        .groups.map((g: { type: string; total: number }) => `${g.type}:${g.total}`)
        .join(' ');
    };
    assert.equal(await found('sao paulo'), 'transaction:1');
    assert.equal(await found('PAULO UPLINK'), 'transaction:1');
    assert.equal(await found('web11 spare'), 'transaction:1');
    assert.equal(await found('web 11'), '', 'a space is no letter or digit');
    assert.equal(await found('sao  uplink'), '', 'the words in order and adjacent');
  });

  test('a MAC address in any notation finds the server whose NIC has it (as its node shows it), and its addresses', async () => {
    /** The MAC of a service's VM as the Proxmox node has it (`virtio=BC:24:11:…,bridge=vmbr0`). */
    const macOf = (serviceId: number) => {
      const vm = [...u.pve.state.vms.values()].find(
        (v) => v.name === `hp-${u.t.deps.installation.id}-svc-${serviceId}`,
      );
      const mac = /=((?:[0-9A-F]{2}:){5}[0-9A-F]{2}),/i.exec(vm?.config.net0 ?? '')?.[1];
      assert.ok(mac, `service ${serviceId}: ${vm?.config.net0}`);
      return mac.toUpperCase();
    };
    const mine = macOf(vpsId);
    const cisco = mine.replace(/:/g, '').replace(/(.{4})(?=.)/g, '$1.');
    // Through the token surface (the session's 30 searches are the other tests').
    const bySearch = (q: string) => api.call('GET', `/api/v1/search/?q=${encodeURIComponent(q)}`);
    for (const q of [mine, mine.toLowerCase().replace(/:/g, '-'), cisco]) {
      const res = await bySearch(q);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().kind, 'mac', q);
      assert.deepEqual(
        res.json().groups.map((g: { type: string; items: { id: string }[] }) => [g.type, g.items.length]),
        [
          ['service', 1],
          ['ip', 1],
        ],
        `${q}: ${res.body}`,
      );
      assert.equal(res.json().groups[0].items[0].id, `service:${vpsId}`);
    }
    // Another account's server: nothing, though it exists.
    assert.deepEqual((await bySearch(macOf(otherVpsId))).json().groups, []);
    const staff = await runAdmin(['search', macOf(otherVpsId)], async () => u.t.deps, 'staff:test');
    assert.equal(staff.exitCode, 0, staff.stderr);
    assert.match(staff.stdout, new RegExp(`service:${otherVpsId}\\b`));
  });

  test('an address, a CIDR containing it, #id and order_/pay_ ids', async () => {
    const byIp = await search(owner.browser, vpsIp);
    assert.equal(byIp.json().kind, 'ipv4');
    assert.deepEqual(
      byIp.json().groups.map((g: { type: string }) => g.type),
      ['service', 'ip'],
    );
    const byCidr = await search(owner.browser, '203.0.113.0/26');
    assert.equal(byCidr.json().kind, 'cidr');
    assert.ok(byCidr.json().groups.find((g: { type: string }) => g.type === 'ip')?.total >= 1, byCidr.body);
    const byId = await search(owner.browser, `#${vpsId}`);
    assert.equal(byId.json().kind, 'number');
    assert.equal(byId.json().groups[0].items[0].id, `service:${vpsId}`);
    const order = await u.t.deps.database.db
      .selectFrom('orders')
      .select('public_id')
      .where('account_id', '=', owner.accountId)
      .executeTakeFirstOrThrow();
    const byOrder = await search(owner.browser, order.public_id);
    assert.equal(byOrder.json().kind, 'order_id');
    assert.deepEqual(
      byOrder.json().groups.map((g: { type: string; total: number }) => [g.type, g.total]),
      [['order', 1]],
    );
    const foreign = await u.t.deps.database.db
      .selectFrom('orders')
      .select('public_id')
      .where('account_id', '=', other.accountId)
      .executeTakeFirstOrThrow();
    assert.deepEqual((await search(owner.browser, foreign.public_id)).json().groups, []);
  });

  test('operators narrow; an unknown operator is 422; user: names only oneself; LIKE metacharacters are literal', async () => {
    const active = await search(owner.browser, 'status:active shop');
    assert.deepEqual(
      active.json().groups.map((g: { type: string }) => g.type),
      ['service'],
    );
    const none = await search(owner.browser, 'status:suspended shop');
    assert.deepEqual(none.json().groups, []);
    const loc = await search(owner.browser, 'loc:mum1 type:service');
    assert.equal(loc.json().groups[0].total, 1);
    const unknown = await search(owner.browser, 'colour:red');
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.match(unknown.json().errors.q, /colour/);
    const notMe = await search(owner.browser, 'user:somebody');
    assert.equal(notMe.statusCode, 422);
    const me = await search(owner.browser, `user:${owner.username} shop`);
    assert.equal(me.statusCode, 200, me.body);
    const percent = await search(owner.browser, '100%_off');
    assert.equal(percent.json().groups[0]?.type, 'transaction', percent.body);
    const wildcard = await search(owner.browser, '%');
    assert.deepEqual(
      wildcard.json().groups.filter((g: { type: string }) => g.type === 'service'),
      [],
    );
    const long = await search(owner.browser, 'x'.repeat(1001));
    assert.equal(long.statusCode, 422);
    const empty = await search(owner.browser, '');
    assert.equal(empty.statusCode, 200, empty.body);
  });

  test('the token surface with a read token, in its envelope; without a session 401', async () => {
    const res = await api.call('GET', `/api/v1/search/?q=shop`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().ok, true);
    assert.equal(res.json().groups[0].items[0].id, `service:${vpsId}`);
    const bad = await api.call('GET', `/api/v1/search/?q=${encodeURIComponent('colour:red')}`);
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().error, 'validation_failed');
    const anonymous = await u.t.inject({ method: 'GET', url: '/api/v1/search/?q=shop' });
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.json().success, false);
  });

  test('plan names are matched as the catalog now says (the per-process plan cache follows changes)', async () => {
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select(['id', 'name'])
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const groupsOf = async (q: string) => {
      const res = await api.call('GET', `/api/v1/search/?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().groups.map((g: { type: string; total: number }) => `${g.type}:${g.total}`);
    };
    assert.deepEqual(await groupsOf('quasarcompact'), []);
    // A write through the app's own database handle, as staff tools make: the next search sees it.
    await u.t.deps.database.db.updateTable('plans').set({ name: 'Quasarcompact' }).where('id', '=', plan.id).execute();
    try {
      assert.deepEqual(await groupsOf('quasarcompact'), ['service:1', 'order:1']);
    } finally {
      await u.t.deps.database.db.updateTable('plans').set({ name: plan.name }).where('id', '=', plan.id).execute();
    }
    assert.deepEqual(await groupsOf('quasarcompact'), []);
    // Operators naming no location, and shapes nothing is stored under, find nothing (no statement runs).
    assert.deepEqual(await groupsOf('loc:atlantis shop'), []);
  });

  test('staff search across accounts (npm run admin -- search), narrowed by user:', async () => {
    const all = await runAdmin(['search', 'shop', '--json'], async () => u.t.deps, 'staff:test');
    assert.equal(all.exitCode, 0, all.stderr);
    const services = JSON.parse(all.stdout).groups.find((g: { type: string }) => g.type === 'service');
    assert.equal(services.total, 2, 'both accounts');
    const mine = await runAdmin(
      ['search', `user:${owner.username} shop`, '--json'],
      async () => u.t.deps,
      'staff:test',
    );
    assert.equal(JSON.parse(mine.stdout).groups.find((g: { type: string }) => g.type === 'service').total, 1);
    const text = await runAdmin(['search', 'shop'], async () => u.t.deps, 'staff:test');
    assert.match(text.stdout, /service:\d+/);
  });

  test('30 searches per 10 seconds per session: the 31st is 429 with Retry-After', async () => {
    const fresh = await signedInBrowser(u.t, freshIp());
    let last = await search(fresh.browser, 'x');
    for (let i = 0; i < 30; i++) last = await search(fresh.browser, 'x');
    assert.equal(last.statusCode, 429, last.body);
    assert.ok(Number(last.headers['retry-after']) >= 1);
  });

  test('30 searches per 10 seconds per token, counted with its 600 a minute: the headers tell the tighter', async () => {
    const token = await apiClient(u.t, ['read'], '0', owner.accountId);
    const first = await token.call('GET', '/api/v1/search/?q=x');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['ratelimit-limit'], '30');
    assert.equal(first.headers['ratelimit-remaining'], '29');
    let last = first;
    for (let i = 0; i < 30; i++) last = await token.call('GET', '/api/v1/search/?q=x');
    assert.equal(last.statusCode, 429, last.body);
    assert.equal(last.json().error, 'rate_limited');
    assert.ok(Number(last.headers['retry-after']) >= 1);
    // Other routes of the token still answer: only its searches are spent.
    const plans = await token.call('GET', '/api/v1/plans');
    assert.equal(plans.statusCode, 200, plans.body);
    assert.equal(plans.headers['ratelimit-limit'], '600');
    assert.equal(plans.headers['ratelimit-remaining'], String(600 - 32));
  });
});
