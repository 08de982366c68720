// Orders (spec 4.7; CONTRACT §5; reliability T1, T2): validation per plan type, availability
// before any charge, the single ordering transaction, idempotency, and no double spend.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { Browser } from './support/browser.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
let plans: Record<string, number>;
before(async () => {
  t = await createTestApp(); // no worker: provisioning jobs stay queued
  await seedDemoCatalog(t.deps.database.db);
  for (const code of ['mum1', 'blr1', 'del1']) {
    await t.deps.nodes.add({
      name: `pve-${code}`,
      kind: 'proxmox',
      locationCode: code,
      endpoint: 'http://127.0.0.1:9',
      credentials: { token_id: 'a@pve!b', token_secret: 'x' },
      capacity: 500,
    });
    await t.deps.nodes.add({
      name: `ptero-${code}`,
      kind: 'pterodactyl',
      locationCode: code,
      endpoint: 'http://127.0.0.1:9',
      credentials: { app_key: 'ptla_x', client_key: 'ptlc_x' },
      capacity: 500,
    });
    await t.deps.nodes.add({
      name: `cpanel-${code}`,
      kind: 'cpanel',
      locationCode: code,
      endpoint: 'http://127.0.0.1:9',
      credentials: { username: 'root', api_token: 'x' },
      capacity: 500,
    });
  }
  const rows = await t.deps.database.db.selectFrom('plans').select(['id', 'label']).execute();
  plans = Object.fromEntries(rows.map((r) => [r.label, r.id]));
});
after(() => t.close());

const ORDERS = '/api/v1/client/orders/';
let keyCounter = 0;
const key = () => `key-${Date.now()}-${++keyCounter}`;
const vps = (extra: Record<string, unknown> = {}) => ({
  hostname: `web${++keyCounter}.example.in`,
  os: 'ubuntu-24.04',
  region: 'mum1',
  ...extra,
});

async function funded(rupees: string): Promise<Awaited<ReturnType<typeof signedInBrowser>>> {
  const client = await signedInBrowser(t, freshIp());
  await t.deps.wallet.credit(client.account.id, rupees, 'test float');
  return client;
}

const order = (browser: Browser, body: Record<string, unknown>) => browser.post(ORDERS, body, { csrf: true });

async function ledger(accountId: number) {
  const { rows } = await sql<{
    sum: string | null;
    n: string;
  }>`select sum(amount_paise) as sum, count(*) as n from wallet_transactions where account_id = ${accountId}`.execute(
    t.deps.database.db,
  );
  const wallet = await t.deps.database.db
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return { balance: BigInt(wallet?.balance_paise ?? '0'), sum: BigInt(rows[0]?.sum ?? '0'), rows: Number(rows[0]?.n) };
}

describe('placing an order', () => {
  test('a VPS order: 201 with order, service and queued job; the wallet debited; an IPv4 held', async () => {
    const { browser, account } = await funded('1000');
    const res = await order(browser, { plan_id: plans['vps-2c-4g'], config: vps(), idempotency_key: key() });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.match(body.order.public_id, /^order_[0-9a-z]{16}$/);
    assert.equal(body.order.amount, '799.00');
    assert.equal(body.order.status, 'paid');
    assert.equal(body.service.status, 'provisioning');
    assert.equal(body.service.region.code, 'mum1');
    assert.equal(body.job.type, 'provision');
    assert.equal(body.job.status, 'queued');
    assert.deepEqual(await ledger(account.id), { balance: 20_100n, sum: 20_100n, rows: 2 });
    const ip = await t.deps.database.db
      .selectFrom('ipv4_addresses')
      .select('status')
      .where('service_id', '=', body.service.id)
      .executeTakeFirst();
    assert.equal(ip?.status, 'allocated');
    const listed = await browser.get(ORDERS);
    assert.equal(listed.json().orders[0].public_id, body.order.public_id);
    assert.equal((await browser.get(`${ORDERS}?id=${body.order.id}`)).json().order.id, body.order.id);
  });

  test('per-type validation answers with the spec codes and charges nothing', async () => {
    const { browser, account } = await funded('5000');
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { plan_id: plans['vps-1c-1g'], config: vps({ hostname: 'bad_host!' }) },
        'bad_config_hostname',
        'config.hostname',
      ],
      [{ plan_id: plans['vps-1c-1g'], config: vps({ os: 'windows-95' }) }, 'bad_config_os', 'config.os'],
      [
        { plan_id: plans['vps-1c-1g'], config: vps({ ssh_keys: ['not a key'] }) },
        'bad_config_ssh_keys',
        'config.ssh_keys',
      ],
      [{ plan_id: plans['vps-1c-1g'], config: vps({ region: 'lon1' }) }, 'bad_config_region', 'config.region'],
      [{ plan_id: plans['vps-1c-1g'], config: vps({ colour: 'red' }) }, 'bad_config_colour', 'config.colour'],
      [{ plan_id: plans['mc-java-2g'], config: { server_name: 'smp' } }, 'bad_config_eula', 'config.eula'],
      [{ plan_id: plans['web-starter'], config: {} }, 'domain_required', 'domain'],
      [{ plan_id: plans['web-starter'], config: {}, domain: 'not a domain' }, 'bad_domain', 'domain'],
      [{ plan_id: plans['vps-1c-1g'], config: vps(), domain: 'example.in' }, 'bad_domain', 'domain'],
    ];
    const before = await fingerprint(t);
    for (const [body, code, field] of cases) {
      const res = await order(browser, { ...body, idempotency_key: key() });
      assert.equal(res.statusCode, 422, `${code}: ${res.body}`);
      assert.equal(res.json().code, code);
      assert.ok(res.json().errors[field], `${code} names ${field}`);
    }
    const unknownPlan = await order(browser, { plan_id: 999_999, config: {}, idempotency_key: key() });
    assert.equal(unknownPlan.statusCode, 422);
    const noKey = await order(browser, { plan_id: plans['vps-1c-1g'], config: vps() });
    assert.equal(noKey.json().errors.idempotency_key, 'is required (any unique string per order, 1–255 characters)');
    assert.deepEqual(await fingerprint(t), before, 'nothing was written');
    assert.deepEqual(await ledger(account.id), { balance: 500_000n, sum: 500_000n, rows: 1 });
  });

  test('only what the spec requires is required: a VPS order with an empty config gets the default OS and a label', async () => {
    const { browser } = await funded('1000');
    const res = await order(browser, { plan_id: plans['vps-1c-1g'], config: {}, idempotency_key: key() });
    assert.equal(res.statusCode, 201, res.body);
    const { service } = res.json();
    assert.equal(service.os, 'ubuntu-24.04');
    assert.match(service.label, /^vps-[0-9a-z]{6}$/);
    assert.equal(service.hostname, service.label);
    const named = await order(browser, {
      plan_id: plans['vps-1c-1g'],
      config: { server_name: 'named1' },
      idempotency_key: key(),
    });
    assert.equal(named.statusCode, 201, named.body);
    assert.equal(named.json().service.hostname, 'named1', 'the hostname defaults to the label');
  });

  test('the default OS is ubuntu-24.04 while it is active, else the oldest active template', async () => {
    const { browser } = await funded('1000');
    await t.deps.database.db
      .updateTable('os_templates')
      .set({ active: false })
      .where('slug', '=', 'ubuntu-24.04')
      .execute();
    try {
      const res = await order(browser, { plan_id: plans['vps-1c-1g'], config: {}, idempotency_key: key() });
      assert.equal(res.statusCode, 201, res.body);
      const oldest = await t.deps.database.db
        .selectFrom('os_templates')
        .select('slug')
        .where('active', '=', true)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      assert.equal(res.json().service.os, oldest.slug);
    } finally {
      await t.deps.database.db
        .updateTable('os_templates')
        .set({ active: true })
        .where('slug', '=', 'ubuntu-24.04')
        .execute();
    }
  });

  test('every failing field at once, the code naming the first; nothing charged', async () => {
    const { browser, account } = await funded('1000');
    const res = await order(browser, {
      plan_id: plans['vps-1c-1g'],
      config: { hostname: '-x-', os: 'nope', region: 'mars1' },
      idempotency_key: key(),
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().code, 'bad_config_hostname');
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['config.hostname', 'config.os', 'config.region']);
    assert.match(res.json().errors['config.region'], /mum1/);
    const shape = await order(browser, { plan_id: 'two', config: [], idempotency_key: '' });
    assert.equal(shape.statusCode, 422, shape.body);
    assert.deepEqual(Object.keys(shape.json().errors).sort(), ['config', 'idempotency_key', 'plan_id']);
    const mixed = await order(browser, { plan_id: 'two', config: { hostname: '-x-' }, idempotency_key: key() });
    assert.deepEqual(Object.keys(mixed.json().errors).sort(), ['config.hostname', 'plan_id']);
    const unknownPlan = await order(browser, {
      plan_id: 999_999,
      config: { os: 'nope', eula: 'yes' },
      idempotency_key: key(),
    });
    assert.deepEqual(Object.keys(unknownPlan.json().errors).sort(), ['config.eula', 'config.os', 'plan_id']);
    assert.deepEqual(await ledger(account.id), { balance: 100_000n, sum: 100_000n, rows: 1 });
  });

  test('game and web orders', async () => {
    const { browser } = await funded('1000');
    const game = await order(browser, {
      plan_id: plans['mc-java-2g'],
      config: { server_name: 'smp', eula: true, region: 'blr1' },
      idempotency_key: key(),
    });
    assert.equal(game.statusCode, 201, game.body);
    assert.equal(game.json().service.label, 'smp');
    const web = await order(browser, {
      plan_id: plans['web-starter'],
      config: {},
      domain: 'Shop.Example.IN',
      idempotency_key: key(),
    });
    assert.equal(web.statusCode, 201, web.body);
    assert.equal(web.json().service.domain, 'shop.example.in');
    const dup = await order(browser, {
      plan_id: plans['mc-java-2g'],
      config: { server_name: 'smp', eula: true },
      idempotency_key: key(),
    });
    assert.equal(dup.json().code, 'bad_config_server_name', 'labels are unique per account');
  });

  test('unavailable (409) before any charge: retired plan, no capacity, no IPv4 left', async () => {
    const { browser, account } = await funded('10000');
    await t.deps.catalog.setPlanActive('vps-4c-8g', false);
    const retired = await order(browser, { plan_id: plans['vps-4c-8g'], config: vps(), idempotency_key: key() });
    assert.equal(retired.statusCode, 409);
    assert.equal(retired.json().code, 'unavailable:plan_inactive');
    await t.deps.catalog.setPlanActive('vps-4c-8g', true);
    await t.deps.database.db.updateTable('nodes').set({ health: 'down' }).where('name', '=', 'pve-blr1').execute();
    const noNode = await order(browser, {
      plan_id: plans['vps-1c-1g'],
      config: vps({ region: 'blr1' }),
      idempotency_key: key(),
    });
    assert.equal(noNode.json().code, 'unavailable:no_capacity');
    await t.deps.database.db.updateTable('nodes').set({ health: 'up' }).where('name', '=', 'pve-blr1').execute();
    const del1 = await t.deps.database.db
      .selectFrom('locations')
      .select('id')
      .where('code', '=', 'del1')
      .executeTakeFirstOrThrow();
    await t.deps.database.db
      .updateTable('ipv4_addresses')
      .set({ status: 'reserved' })
      .where('location_id', '=', del1.id)
      .where('status', '=', 'free')
      .execute();
    const noIp = await order(browser, {
      plan_id: plans['vps-1c-1g'],
      config: vps({ region: 'del1' }),
      idempotency_key: key(),
    });
    assert.equal(noIp.statusCode, 409);
    assert.equal(noIp.json().code, 'unavailable:no_ipv4');
    assert.deepEqual(await ledger(account.id), { balance: 1_000_000n, sum: 1_000_000n, rows: 1 }, 'nothing charged');
    const orders = await t.deps.database.db
      .selectFrom('orders')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(orders.length, 0);
  });

  test('insufficient funds: 422 with balance, required and shortfall; nothing written', async () => {
    const { browser, account } = await funded('100.50');
    const res = await order(browser, { plan_id: plans['vps-2c-4g'], config: vps(), idempotency_key: key() });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().code, 'insufficient_funds');
    assert.match(res.json().message, /100\.50.*799\.00/);
    assert.deepEqual(await ledger(account.id), { balance: 10_050n, sum: 10_050n, rows: 1 });
  });
});

describe('idempotency', () => {
  test('replay: byte-identical body with Idempotent-Replayed; the payload in another key order is the same request', async () => {
    const { browser, account } = await funded('2000');
    const k = key();
    const config = vps();
    const first = await order(browser, { plan_id: plans['vps-1c-1g'], config, idempotency_key: k });
    assert.equal(first.statusCode, 201);
    for (let i = 0; i < 5; i++) {
      const again = await order(browser, {
        idempotency_key: k,
        config: Object.fromEntries(Object.entries(config).reverse()),
        plan_id: plans['vps-1c-1g'],
      });
      assert.equal(again.statusCode, 201);
      assert.equal(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
    }
    assert.equal((await ledger(account.id)).rows, 2, 'one credit, one debit');
  });

  test('the same key with another payload: 409 idempotency_conflict, nothing written', async () => {
    const { browser } = await funded('2000');
    const k = key();
    assert.equal(
      (await order(browser, { plan_id: plans['vps-1c-1g'], config: vps(), idempotency_key: k })).statusCode,
      201,
    );
    const before = await fingerprint(t);
    const other = await order(browser, { plan_id: plans['vps-1c-1g'], config: vps(), idempotency_key: k });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().code, 'idempotency_conflict');
    assert.deepEqual(await fingerprint(t), before);
  });

  test('the key may come as the Idempotency-Key header; both must agree; keys are per account', async () => {
    const a = await funded('2000');
    const b = await funded('2000');
    const k = key();
    const body = { plan_id: plans['vps-1c-1g'], config: vps() };
    assert.equal(
      (await a.browser.post(ORDERS, body, { csrf: true, headers: { 'idempotency-key': k } })).statusCode,
      201,
    );
    const mismatch = await a.browser.post(
      ORDERS,
      { ...body, idempotency_key: 'other' },
      { csrf: true, headers: { 'idempotency-key': k } },
    );
    assert.equal(mismatch.statusCode, 422);
    const otherAccount = await b.browser.post(
      ORDERS,
      { ...body, config: { ...body.config, hostname: 'b.example.in' } },
      { csrf: true, headers: { 'idempotency-key': k } },
    );
    assert.equal(otherAccount.statusCode, 201, "another account's identical key is its own");
    assert.equal((await order(a.browser, { ...body, idempotency_key: 'x'.repeat(256) })).statusCode, 422);
  });

  test('a refused order is not stored: the same key succeeds after a top-up', async () => {
    const { browser, account } = await funded('100');
    const k = key();
    const body = { plan_id: plans['vps-1c-1g'], config: vps(), idempotency_key: k };
    assert.equal((await order(browser, body)).json().code, 'insufficient_funds');
    await t.deps.wallet.credit(account.id, '500', 'top-up');
    assert.equal((await order(browser, body)).statusCode, 201);
  });

  test('T2: 50 concurrent identical requests → one order and one debit; every answer the 201 or 409 in progress', async () => {
    const { browser, account } = await funded('1000');
    const body = { plan_id: plans['vps-1c-1g'], config: vps(), idempotency_key: key() };
    const results = await Promise.all(Array.from({ length: 50 }, () => order(browser, body)));
    const created = results.filter((r) => r.statusCode === 201);
    assert.ok(created.length >= 1);
    for (const r of results) {
      assert.ok(
        r.statusCode === 201 || (r.statusCode === 409 && r.json().code === 'idempotency_in_progress'),
        `${r.statusCode} ${r.body}`,
      );
    }
    assert.ok(
      created.every((r) => r.body === created[0]?.body),
      'every 201 is the same answer',
    );
    const orders = await t.deps.database.db
      .selectFrom('orders')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(orders.length, 1);
    assert.deepEqual(await ledger(account.id), { balance: 70_100n, sum: 70_100n, rows: 2 });
  });
});

describe('T1: no double spend', () => {
  // The wallet covers 6 and the hourly order allowance (deploy_account, 10) admits 10 of the 50 at once:
  // the 10 admitted race for the wallet, the other 40 are refused before any charge.
  test('50 concurrent orders of ₹299 against ₹2,000.00: exactly 6 succeed, the rest insufficient_funds or rate_limited, no 5xx, ledger == balance', async () => {
    const { browser, account } = await funded('2000');
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        order(browser, { plan_id: plans['vps-1c-1g'], config: vps({ region: 'blr1' }), idempotency_key: key() }),
      ),
    );
    const ok = results.filter((r) => r.statusCode === 201).length;
    assert.equal(ok, 6);
    for (const r of results)
      assert.ok(
        r.statusCode === 201 || ['insufficient_funds', 'rate_limited'].includes(r.json().code),
        `${r.statusCode} ${r.body}`,
      );
    assert.ok(
      results.some((r) => r.json().code === 'insufficient_funds'),
      'some admitted orders found the wallet short',
    );
    const state = await ledger(account.id);
    assert.equal(state.balance, 200_000n - 6n * 29_900n);
    assert.equal(state.sum, state.balance);
    const jobs = await t.deps.database.db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(jobs.length, 6, 'one job per order');
  });
});

describe('node capacity', () => {
  test('12 concurrent orders for a node with 3 free slots: exactly 3 placed, the rest 409 no_capacity and not charged', async () => {
    await t.deps.catalog.addLocation({ code: 'pnq1', name: 'Pune 1', city: 'Pune' });
    const pnq = await t.deps.catalog.location('pnq1');
    const { addRange } = await import('../src/core/catalog/ipv4.ts');
    await addRange(t.deps.database.db, pnq.id, '100.64.20.0/26');
    await t.deps.database.db
      .insertInto('plan_locations')
      .values({ plan_id: plans['vps-1c-1g'] as number, location_id: pnq.id })
      .execute();
    await t.deps.nodes.add({
      name: 'pve-pnq1',
      kind: 'proxmox',
      locationCode: 'pnq1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { token_id: 'a@pve!b', token_secret: 'x' },
      capacity: 3,
    });
    const clients = await Promise.all(Array.from({ length: 4 }, () => funded('2000')));
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        order((clients[i % 4] as { browser: Browser }).browser, {
          plan_id: plans['vps-1c-1g'],
          config: vps({ region: 'pnq1' }),
          idempotency_key: key(),
        }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 3);
    for (const r of results)
      assert.ok(r.statusCode === 201 || r.json().code === 'unavailable:no_capacity', `${r.statusCode} ${r.body}`);
    let spent = 0n;
    for (const c of clients) spent += 200_000n - (await ledger(c.account.id)).balance;
    assert.equal(spent, 3n * 29_900n, 'only the placed orders were charged');
  });
});
