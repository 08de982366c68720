// The catalog (spec 4.5): active plans only, live availability per region, ?plan_id=.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { noInputs } from '../src/admin/inputs.ts';
import { runAdmin } from '../src/admin/run.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
let browser: Browser;
before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
  browser = (await signedInBrowser(t, freshIp())).browser;
});
after(() => t.close());

const CATALOG = '/api/v1/client/catalog/';
const admin = async (...argv: string[]) => {
  const result = await runAdmin([...argv, '--json'], async () => t.deps);
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};
/** Node credentials go in on standard input (`--credentials -`), never on the command line. */
const stdin = (text: string) => ({ ...noInputs, stdin: async () => text });
const addNode = async (credentials: string, ...argv: string[]) => {
  const result = await runAdmin(
    ['nodes', 'add', ...argv, '--credentials', '-', '--json'],
    async () => t.deps,
    'staff',
    stdin(credentials),
  );
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};
type PlanJson = {
  id: number;
  label: string;
  type: string;
  available: boolean;
  price: { monthly: string };
  regions: { code: string; available: boolean; reason: string | null }[];
};
const plans = async (): Promise<PlanJson[]> => (await browser.get(CATALOG)).json().plans;
const planByLabel = async (label: string) => (await plans()).find((p) => p.label === label) as PlanJson;

describe('catalog', () => {
  test('lists the demo catalog: plans of all four types in INR, regions, OS templates, games', async () => {
    const res = await browser.get(CATALOG);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.currency, 'INR');
    assert.deepEqual([...new Set(body.plans.map((p: PlanJson) => p.type))], ['vps', 'game', 'web', 'baremetal']);
    const vps = body.plans.find((p: PlanJson) => p.label === 'vps-2c-4g');
    assert.equal(vps.price.monthly, '799.00');
    assert.deepEqual(vps.specs, { vcpu: 2, ram_mb: 4096, disk_gb: 80, bandwidth_tb: 3, backup_price: 9900 });
    assert.deepEqual(
      body.regions.map((r: { code: string }) => r.code),
      ['mum1', 'blr1', 'del1'],
    );
    assert.equal(body.regions[0].ipv4_free, 61);
    assert.ok(body.os.some((o: { slug: string }) => o.slug === 'ubuntu-24.04'));
    assert.ok(body.games.some((g: { slug: string }) => g.slug === 'minecraft-java'));
  });

  test('the demo seed is idempotent', async () => {
    const before = (await plans()).length;
    await seedDemoCatalog(t.deps.database.db);
    assert.equal((await plans()).length, before);
    assert.equal((await browser.get(CATALOG)).json().regions[0].ipv4_free, 61);
  });

  test('availability is live: no node → no_capacity; a node → available; no free IPv4 → no_ipv4; closed location → region_closed', async () => {
    assert.equal((await planByLabel('vps-4c-8g')).regions.find((r) => r.code === 'blr1')?.reason, 'no_capacity');
    await addNode(
      '{"token_id":"hp@pve!t","token_secret":"s3cret-token-value"}',
      'pve-blr1',
      '--kind',
      'proxmox',
      '--location',
      'blr1',
      '--endpoint',
      'https://pve.example.in:8006',
      '--capacity',
      '10',
    );
    let plan = await planByLabel('vps-4c-8g');
    assert.deepEqual(
      plan.regions.find((r) => r.code === 'blr1'),
      { code: 'blr1', name: 'Bengaluru 1', city: 'Bengaluru', available: true, reason: null },
    );
    assert.equal(plan.available, true);
    await t.deps.database.db
      .updateTable('ipv4_addresses')
      .set({ status: 'reserved' })
      .where('status', '=', 'free')
      .execute();
    plan = await planByLabel('vps-4c-8g');
    assert.equal(plan.regions.find((r) => r.code === 'blr1')?.reason, 'no_ipv4');
    await t.deps.database.db
      .updateTable('ipv4_addresses')
      .set({ status: 'free' })
      .where('status', '=', 'reserved')
      .execute();
    await t.deps.database.db.updateTable('locations').set({ active: false }).where('code', '=', 'blr1').execute();
    plan = await planByLabel('vps-4c-8g');
    assert.equal(plan.regions.find((r) => r.code === 'blr1')?.reason, 'region_closed');
    await t.deps.database.db.updateTable('locations').set({ active: true }).where('code', '=', 'blr1').execute();
  });

  test('?plan_id= one plan; unknown 404; retired 404 and unlisted; non-numeric 422', async () => {
    const some = await planByLabel('web-starter');
    const one = await browser.get(`${CATALOG}?plan_id=${some.id}`);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().plan.label, 'web-starter');
    assert.equal((await browser.get(`${CATALOG}?plan_id=999999`)).statusCode, 404);
    assert.equal((await browser.get(`${CATALOG}?plan_id=abc`)).statusCode, 422);
    for (const loose of ['0x2', '2e0', '%202', '2147483648', '99999999999999999999', '%00']) {
      const res = await browser.get(`${CATALOG}?plan_id=${loose}`);
      assert.equal(res.statusCode, 422, `plan_id=${loose}: ${res.body}`);
      assert.ok(res.json().errors['query.plan_id'] ?? res.json().errors.plan_id, res.body);
    }
    assert.equal((await browser.get(`${CATALOG}?plan_id=-1`)).statusCode, 422);
    await admin('plans', 'disable', 'web-starter');
    assert.equal((await browser.get(`${CATALOG}?plan_id=${some.id}`)).statusCode, 404);
    assert.equal(
      (await plans()).some((p) => p.label === 'web-starter'),
      false,
    );
    await admin('plans', 'enable', 'web-starter');
    assert.equal((await browser.get(`${CATALOG}?plan_id=${some.id}`)).statusCode, 200);
  });

  test('signed-in clients only', async () => {
    assert.equal((await new Browser(t, freshIp()).get(CATALOG)).statusCode, 401);
  });
});

describe('catalog staff commands', () => {
  test('plans add validates everything and the plan appears in the catalog', async () => {
    const bad = await runAdmin(
      [
        'plans',
        'add',
        'Bad Label',
        '--name',
        'X',
        '--type',
        'vps',
        '--price',
        '1.001',
        '--specs',
        '{"vcpu":0,"extra":1}',
        '--regions',
        'mum1,nowhere',
      ],
      async () => t.deps,
    );
    assert.equal(bad.exitCode, 1);
    for (const field of ['label', 'price', 'specs.vcpu', 'specs.ram_mb', 'specs.extra', 'regions'])
      assert.match(bad.stderr, new RegExp(field.replace('.', '\\.')));
    const added = await admin(
      'plans',
      'add',
      'vps-8c-16g',
      '--name',
      'Cloud VPS 16 GB',
      '--type',
      'vps',
      '--price',
      '2999',
      '--specs',
      '{"vcpu":8,"ram_mb":16384,"disk_gb":320,"bandwidth_tb":8}',
      '--regions',
      'mum1',
    );
    assert.equal(added.price, '2999.00');
    assert.equal((await planByLabel('vps-8c-16g')).price.monthly, '2999.00');
    const game = await runAdmin(
      [
        'plans',
        'add',
        'rust-8g',
        '--name',
        'Rust',
        '--type',
        'game',
        '--price',
        '999',
        '--specs',
        '{"game":"rust","ram_mb":8192,"cpu_percent":300,"disk_gb":40,"slots":50}',
        '--regions',
        'mum1',
      ],
      async () => t.deps,
    );
    assert.match(game.stderr, /no game "rust"/);
  });

  test('locations add, os add, ips add (gateway excluded, too large refused), ips list', async () => {
    await admin('locations', 'add', 'hyd1', '--name', 'Hyderabad 1', '--city', 'Hyderabad');
    const range = await admin('ips', 'add', 'hyd1', '100.64.10.0/29', '--gateway', '100.64.10.6');
    assert.deepEqual(range, { location: 'hyd1', cidr: '100.64.10.0/29', gateway: '100.64.10.6', added: 5, skipped: 0 });
    const again = await admin('ips', 'add', 'hyd1', '100.64.10.0/29', '--gateway', '100.64.10.6');
    assert.equal(again.added, 0);
    const huge = await runAdmin(['ips', 'add', 'hyd1', '10.0.0.0/8'], async () => t.deps);
    assert.equal(huge.exitCode, 1);
    const summary = await admin('ips', 'list');
    assert.ok(summary.some((r: { location: string; count: number }) => r.location === 'hyd1' && r.count === 5));
    const os = await admin(
      'os',
      'add',
      'debian-13',
      '--name',
      'Debian 13',
      '--family',
      'debian',
      '--version',
      '13',
      '--template-vmid',
      '9010',
    );
    assert.equal(os.slug, 'debian-13');
    assert.equal(
      (
        await runAdmin(
          ['os', 'add', 'debian-13', '--name', 'x', '--family', 'debian', '--version', '13', '--template-vmid', '9011'],
          async () => t.deps,
        )
      ).exitCode,
      1,
    );
  });

  test('node credentials are stored encrypted and never listed', async () => {
    await addNode(
      '{"token_id":"hp@pve!x","token_secret":"CANARY-NODE-SECRET-42"}',
      'pve-mum1',
      '--kind',
      'proxmox',
      '--location',
      'mum1',
      '--endpoint',
      'https://10.0.0.5:8006',
      '--settings',
      '{"node":"pve1"}',
      '--capacity',
      '5',
    );
    const listed = await runAdmin(['nodes', 'list', '--json'], async () => t.deps);
    assert.doesNotMatch(listed.stdout, /CANARY-NODE-SECRET-42/);
    const row = await t.deps.database.db
      .selectFrom('nodes')
      .selectAll()
      .where('name', '=', 'pve-mum1')
      .executeTakeFirstOrThrow();
    assert.doesNotMatch(row.credentials_sealed, /CANARY/);
    assert.equal(t.deps.nodes.credentials(row).token_secret, 'CANARY-NODE-SECRET-42');
    const missing = await runAdmin(
      [
        'nodes',
        'add',
        'x1',
        '--kind',
        'proxmox',
        '--location',
        'mum1',
        '--endpoint',
        'ftp://x',
        '--credentials',
        '-',
        '--capacity',
        '1',
      ],
      async () => t.deps,
      'staff',
      stdin('{}'),
    );
    assert.match(missing.stderr, /endpoint/);
    assert.match(missing.stderr, /token_id/);
  });
});

describe('retiring OS templates and closing locations (staff CLI)', () => {
  const fail = async (...argv: string[]) => {
    const result = await runAdmin(argv, async () => t.deps);
    assert.equal(result.exitCode, 1, result.stdout);
    return result.stderr;
  };
  const audits = (action: string) =>
    t.deps.database.db.selectFrom('audit_log').selectAll().where('action', '=', action).execute();
  let customer: Awaited<ReturnType<typeof signedInBrowser>>;
  let n = 0;
  const order = async (config: Record<string, unknown>) => {
    const plan = await planByLabel('vps-4c-8g');
    const body = { plan_id: plan.id, config: { hostname: `r${++n}.example.in`, ...config }, idempotency_key: `r-${n}` };
    return customer.browser.post('/api/v1/client/orders/', body, { csrf: true });
  };
  before(async () => {
    customer = await signedInBrowser(t, freshIp());
    await t.deps.wallet.credit(customer.account.id, '20000', 'test float');
  });

  test('os retire: not listed, orders refuse it (422), the default skips it, its service is untouched; unretire restores', async () => {
    const placed = await order({ os: 'ubuntu-24.04', region: 'blr1' });
    assert.equal(placed.statusCode, 201, placed.body);
    const serviceId = placed.json().service.id;
    const retired = await admin('os', 'retire', 'ubuntu-24.04');
    assert.equal(retired.active, false);
    assert.equal((await audits('os.retire')).length, 1);
    assert.equal((await admin('os', 'retire', 'ubuntu-24.04')).active, false, 'again: no change');
    assert.equal((await audits('os.retire')).length, 1, 'again: no second audit row');
    const catalog = (await browser.get(CATALOG)).json();
    assert.equal(
      catalog.os.some((o: { slug: string }) => o.slug === 'ubuntu-24.04'),
      false,
    );
    const refused = await order({ os: 'ubuntu-24.04', region: 'blr1' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.match(refused.json().errors['config.os'], /is retired/);
    const unknown = await order({ os: 'temple-os', region: 'blr1' });
    assert.match(unknown.json().errors['config.os'], /is not an OS template/);
    const byDefault = await order({ region: 'blr1' });
    assert.equal(byDefault.statusCode, 201, byDefault.body);
    const config = async (id: number) =>
      (await t.deps.database.db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow())
        .config as { os: string };
    assert.equal((await config(byDefault.json().service.id)).os, 'debian-12', 'the oldest active template');
    const kept = await t.deps.database.db
      .selectFrom('services')
      .selectAll()
      .where('id', '=', serviceId)
      .executeTakeFirstOrThrow();
    assert.equal((kept.config as { os: string }).os, 'ubuntu-24.04');
    assert.notEqual(kept.status, 'terminated');

    assert.equal((await admin('os', 'unretire', 'ubuntu-24.04')).active, true);
    assert.equal((await audits('os.unretire')).length, 1);
    const again = await order({ region: 'blr1' });
    assert.equal((await config(again.json().service.id)).os, 'ubuntu-24.04');
    assert.match(await fail('os', 'retire', 'no-such-os'), /No OS template "no-such-os"/);
  });

  test('os retire refuses the last template offered', async () => {
    const all = (await admin('os', 'list')) as { slug: string; active: boolean }[];
    const [last, ...others] = all.filter((o) => o.active);
    for (const o of others) await admin('os', 'retire', o.slug);
    assert.match(await fail('os', 'retire', (last as { slug: string }).slug), /last OS template offered/);
    for (const o of others) await admin('os', 'unretire', o.slug);
  });

  test('locations close: orders there are refused, the catalog shows it closed; open restores', async () => {
    const closed = await admin('locations', 'close', 'blr1');
    assert.equal(closed.active, false);
    const [row] = await audits('location.close');
    assert.deepEqual(row?.after, { location: 'blr1', active: false });
    const plan = await planByLabel('vps-4c-8g');
    assert.deepEqual(
      [plan.regions.find((r) => r.code === 'blr1')?.available, plan.regions.find((r) => r.code === 'blr1')?.reason],
      [false, 'region_closed'],
    );
    const regions = (await browser.get(CATALOG)).json().regions.map((r: { code: string }) => r.code);
    assert.equal(regions.includes('blr1'), false);
    const refused = await order({ region: 'blr1' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().code, 'unavailable:region_closed');
    assert.match(await fail('locations', 'close', 'nowhere'), /No location "nowhere"/);

    assert.equal((await admin('locations', 'open', 'blr1')).active, true);
    assert.equal((await audits('location.open')).length, 1);
    assert.equal((await planByLabel('vps-4c-8g')).regions.find((r) => r.code === 'blr1')?.available, true);
    assert.equal((await order({ region: 'blr1' })).statusCode, 201);
  });
});
