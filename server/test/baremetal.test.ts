// Bare metal end to end (issue 16): a bare-metal plan ordered through the session surface claims
// one of the emulated machines (each a redfish node: one BMC, one machine), installs the OS from
// its install image over virtual media through the real Redfish driver (SSH keys, hostname and
// the root password's hash in the install), and runs; power actions map to ComputerSystem.Reset
// (an OS that ignores ACPI is forced off); terminating wipes the machine back into stock. A
// machine is never handed to two orders (concurrent orders for the last free one: exactly one
// succeeds, the other is refused and not charged). Faults: a dead BMC (retried, then failed,
// refunded, the machine kept out of stock until the clean-up pass wiped it), a BMC unreachable
// from the power-on into the installer and then back (retried, active, installed and charged
// once), failing BMC tasks (undone and refunded), an install that never finishes (timeout,
// wiped, refunded).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { RedfishEmulator, RedfishFaultKnobs, RedfishMachine } from '../../emulators/src/redfish/index.ts';
import { startRedfishEmulator } from '../../emulators/src/redfish/index.ts';
import { noInputs } from '../src/admin/inputs.ts';
import { runAdmin } from '../src/admin/run.ts';
import { sha512Crypt } from '../src/upstreams/redfish/index.ts';
import { retryCleanups } from '../src/worker/cleanup.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const PLAN = 'bm-2cpu-64g';
const WAIT = 60_000;
const RETRY_LIMIT = 2;
const FLOAT = 10_000;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB4zmacBHSGgE+FgleH0QGU7Ui1WcI52d7Xxy4VNI05Q ops@example.in';
const DEBIAN_IMAGE = 'https://cdimage.debian.org/cdimage/archive/12.9.0/amd64/iso-cd/debian-12.9.0-amd64-netinst.iso';

let u: UpstreamApp;
let orders = 0;

interface Client {
  browser: Browser;
  accountId: number;
}

interface Placed {
  client: Client;
  res: LightMyRequestResponse;
  serviceId: number;
  jobId: number;
}

const db = () => u.t.deps.database.db;
const emulator = (): RedfishEmulator => {
  assert.ok(u.redfish, 'the app has no Redfish emulator');
  return u.redfish;
};
const CLEAR: Partial<RedfishFaultKnobs> = {
  down: false,
  failTasks: 0,
  installHangs: false,
  installFails: false,
  ignoreAcpi: false,
};

async function newClient(): Promise<Client> {
  const { browser, account } = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(account.id, String(FLOAT), 'test float');
  return { browser, accountId: account.id };
}

const planRow = () =>
  db().selectFrom('plans').select(['id', 'price_paise']).where('label', '=', PLAN).executeTakeFirstOrThrow();

/** `client` orders the bare-metal plan in mum1 (not waited for). */
async function order(client: Client, config: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  const plan = await planRow();
  return client.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { region: 'mum1', ...config }, idempotency_key: `bm-${++orders}` },
    { csrf: true },
  );
}

async function place(config: Record<string, unknown> = {}, client?: Client): Promise<Placed> {
  const who = client ?? (await newClient());
  const res = await order(who, config);
  assert.equal(res.statusCode, 201, res.body);
  return { client: who, res, serviceId: res.json().service.id, jobId: res.json().job.id };
}

const jobOf = (jobId: number) => db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
const serviceRow = (id: number) =>
  db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function settled(jobId: number) {
  return waitFor(
    `job ${jobId} settled`,
    async () => {
      const job = await jobOf(jobId);
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    WAIT,
  );
}

async function succeeded(jobId: number) {
  const job = await settled(jobId);
  assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message} ${JSON.stringify(job.params)}`);
  return job;
}

/** The emulated machine behind a service's node (node `bmc-mum1-<i+1>` is machine i). */
async function machineOf(serviceId: number): Promise<RedfishMachine> {
  const service = await serviceRow(serviceId);
  assert.ok(service.node_id, 'the service has no node');
  const node = await db()
    .selectFrom('nodes')
    .select('name')
    .where('id', '=', service.node_id)
    .executeTakeFirstOrThrow();
  const index = Number(node.name.replace('bmc-mum1-', '')) - 1;
  const machine = emulator().state.machines[index];
  assert.ok(machine, `no machine for node ${node.name}`);
  return machine;
}

/** Off, nothing inserted, no override or install parameters, disks empty: ready for the next order. */
function assertStock(machine: RedfishMachine): void {
  assert.equal(machine.power, 'Off');
  assert.ok(
    machine.media.every((m) => !m.inserted && m.image === null),
    'media ejected',
  );
  assert.equal(machine.boot.enabled, 'Disabled');
  assert.equal(machine.installParams, null);
  assert.ok(
    machine.drives.every((d) => d.os === null),
    'disks wiped',
  );
}

/** How many machines an order could be given now (as the order service counts). */
async function freeMachines(): Promise<number> {
  const stock = await u.t.deps.catalog.stock();
  const mum1 = await db().selectFrom('locations').select('id').where('code', '=', 'mum1').executeTakeFirstOrThrow();
  return stock.get(mum1.id)?.slots.redfish ?? 0;
}

async function balance(accountId: number): Promise<number> {
  const wallet = await db()
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(wallet.balance_paise);
}

/** The account's ledger as [kind, paise] rows, oldest first. */
async function ledgerOf(accountId: number): Promise<[string, number][]> {
  const rows = await db()
    .selectFrom('wallet_transactions')
    .select(['kind', 'amount_paise'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  return rows.map((r) => [r.kind, Number(r.amount_paise)]);
}

/** Failed, the charge refunded (the ledger adds up to the float again), the client told. */
async function failedAndRefunded(placed: Placed): Promise<void> {
  const service = await serviceRow(placed.serviceId);
  assert.equal(service.status, 'failed');
  const price = Number((await planRow()).price_paise);
  assert.deepEqual(await ledgerOf(placed.client.accountId), [
    ['adjustment', FLOAT * 100],
    ['order', -price],
    ['refund', price],
  ]);
  assert.equal(await balance(placed.client.accountId), FLOAT * 100);
  const ip = await db()
    .selectFrom('ipv4_addresses')
    .select('id')
    .where('service_id', '=', placed.serviceId)
    .executeTakeFirst();
  assert.equal(ip, undefined, 'the IPv4 address was released');
  const notes = (await placed.client.browser.get('/api/v1/client/notifications/')).json().notifications;
  assert.ok(notes.some((n: { kind: string }) => n.kind === 'service_failed'));
}

const action = (client: Client, id: number, name: string) =>
  client.browser.post('/api/v1/client/services/action/', { id, action: name }, { csrf: true });

/** Run a power action to its end. */
async function power(client: Client, id: number, name: string): Promise<void> {
  const res = await action(client, id, name);
  assert.equal(res.statusCode, 202, res.body);
  await succeeded(res.json().job.id);
}

let first: Placed;

before(async () => {
  u = await createUpstreamApp({
    redfish: true,
    retryLimit: RETRY_LIMIT,
    env: { BAREMETAL_INSTALL_TIMEOUT: '5' },
  });
  first = await place({ hostname: 'metal1.example.in', os: 'debian-12', ssh_keys: [KEY] });
  await succeeded(first.jobId);
});
after(() => u.close());

describe('ordering and provisioning', () => {
  test('the machine runs the OS installed from its image, with the keys, hostname and root password', async () => {
    const service = await serviceRow(first.serviceId);
    assert.equal(service.status, 'active');
    assert.equal(service.type, 'baremetal');
    const machine = await machineOf(first.serviceId);
    assert.equal((service.external as { serial: string }).serial, machine.serial);
    // Its NICs' MAC addresses as the BMC reports them, kept with it: a search by one finds it.
    const macs = machine.nics.map((n) => n.mac);
    assert.ok(macs.length > 0);
    assert.deepEqual((service.external as { macs: string[] }).macs, macs);
    const found = await first.client.browser.get(
      `/api/v1/search/?q=${encodeURIComponent((macs[0] as string).toUpperCase().replace(/:/g, '-'))}`,
    );
    assert.equal(found.statusCode, 200, found.body);
    assert.equal(found.json().groups[0]?.items[0]?.id, `service:${first.serviceId}`, found.body);
    assert.equal(machine.power, 'On');
    const os = machine.drives[0]?.os;
    assert.ok(os, 'nothing was installed');
    assert.equal(os.image, DEBIAN_IMAGE);
    assert.equal(os.hostname, 'metal1.example.in');
    assert.deepEqual(os.sshKeys, [KEY]);
    // The install parameters and the media are gone from the BMC once the install is done.
    assert.equal(machine.installParams, null);
    assert.ok(machine.media.every((m) => !m.inserted));
    const ipv4 = await db()
      .selectFrom('ipv4_addresses')
      .select(['address', 'prefix', 'gateway'])
      .where('service_id', '=', first.serviceId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(os.ipv4, { Address: ipv4.address, PrefixLength: ipv4.prefix, Gateway: ipv4.gateway });
    const creds = (
      await first.client.browser.get(`/api/v1/client/services/?id=${first.serviceId}&action=credentials`)
    ).json().credentials;
    assert.equal(creds.username, 'root');
    assert.ok(os.passwordHash?.startsWith('$6$'), 'the password went in hashed');
    assert.equal(sha512Crypt(creds.password, os.passwordHash ?? ''), os.passwordHash, 'the hash is of that password');
    assert.ok(!JSON.stringify(emulator().state.machines).includes(creds.password), 'the BMC never saw the password');
    const price = Number((await planRow()).price_paise);
    assert.equal(await balance(first.client.accountId), FLOAT * 100 - price);
    const events = await db()
      .selectFrom('service_events')
      .select('kind')
      .where('service_id', '=', first.serviceId)
      .execute();
    for (const kind of ['order_placed', 'machine_claimed', 'install_started', 'active'])
      assert.ok(
        events.some((e) => e.kind === kind),
        kind,
      );
  });

  test('an OS without an install image, or unknown, is refused before anything is charged', async () => {
    const client = await newClient();
    await db().updateTable('os_templates').set({ image_url: null }).where('slug', '=', 'rocky-9').execute();
    try {
      const noImage = await order(client, { os: 'rocky-9' });
      assert.equal(noImage.statusCode, 422, noImage.body);
      assert.match(noImage.json().errors['config.os'], /no install image/);
      const unknown = await order(client, { os: 'windows-95' });
      assert.equal(unknown.statusCode, 422, unknown.body);
      const domain = await client.browser.post(
        '/api/v1/client/orders/',
        { plan_id: (await planRow()).id, config: {}, domain: 'metal.example.in', idempotency_key: `bm-${++orders}` },
        { csrf: true },
      );
      assert.equal(domain.statusCode, 422, domain.body);
      assert.equal(await balance(client.accountId), FLOAT * 100);
    } finally {
      await db()
        .updateTable('os_templates')
        .set({ image_url: 'https://download.rockylinux.org/pub/rocky/9/isos/x86_64/Rocky-9-latest-x86_64-minimal.iso' })
        .where('slug', '=', 'rocky-9')
        .execute();
    }
  });
});

describe('power and live state', () => {
  test('stop, start, restart, power_cycle and kill go through ComputerSystem.Reset', async () => {
    const { client, serviceId } = first;
    const machine = await machineOf(serviceId);
    machine.actions.length = 0;
    await power(client, serviceId, 'stop');
    assert.equal(machine.power, 'Off');
    await power(client, serviceId, 'start');
    assert.equal(machine.power, 'On');
    await power(client, serviceId, 'restart');
    await power(client, serviceId, 'power_cycle');
    assert.equal(machine.power, 'On');
    await power(client, serviceId, 'kill');
    assert.equal(machine.power, 'Off');
    await power(client, serviceId, 'start');
    assert.deepEqual(
      machine.actions.filter((a) => a.startsWith('ComputerSystem.Reset')),
      [
        'ComputerSystem.Reset GracefulShutdown',
        'ComputerSystem.Reset On',
        'ComputerSystem.Reset GracefulRestart',
        'ComputerSystem.Reset PowerCycle',
        'ComputerSystem.Reset ForceOff',
        'ComputerSystem.Reset On',
      ],
    );
    // The disk survives power: the installed system is still there.
    assert.ok(machine.drives[0]?.os);
  });

  test('stop forces the machine off when its OS ignores ACPI', async () => {
    const { client, serviceId } = first;
    const machine = await machineOf(serviceId);
    machine.actions.length = 0;
    await emulator().setFaults({ ignoreAcpi: true });
    try {
      await power(client, serviceId, 'stop');
    } finally {
      await emulator().setFaults(CLEAR);
    }
    assert.equal(machine.power, 'Off');
    assert.deepEqual(
      machine.actions.filter((a) => a.startsWith('ComputerSystem.Reset')),
      ['ComputerSystem.Reset GracefulShutdown', 'ComputerSystem.Reset ForceOff'],
    );
    await power(client, serviceId, 'start');
  });

  test('status: power, CPUs and memory from the BMC; the list shows the power; unsupported actions are 422', async () => {
    const { client, serviceId } = first;
    const status = await client.browser.get(`/api/v1/client/services/status/?id=${serviceId}`);
    assert.equal(status.statusCode, 200, status.body);
    const live = status.json().status;
    assert.equal(live.power, 'running');
    assert.equal(live.cpus, 2);
    assert.equal(live.memory.total_bytes, 64 * 1024 ** 3);
    // What the BMC cannot see inside the OS is null (unknown), never 0.
    assert.deepEqual(
      [live.cpu, live.memory.used_bytes, live.uptime_seconds, live.network.in_bytes, live.network.out_bytes],
      [null, null, null, null, null],
    );
    const stats = await (await apiClient(u.t, ['read'], '0', client.accountId)).call(
      'GET',
      `/api/v1/instances/${serviceId}/stats`,
    );
    assert.equal(stats.statusCode, 200, stats.body);
    assert.deepEqual(stats.json().stats, {
      power: 'running',
      cpu: null,
      cpus: 2,
      memory: { used_bytes: null, total_bytes: 64 * 1024 ** 3 },
      uptime_seconds: null,
    });
    const list = await client.browser.get('/api/v1/client/services/');
    const row = list.json().services.find((s: { id: number }) => s.id === serviceId);
    assert.equal(row.power, 'running');
    const reinstall = await client.browser.post(
      '/api/v1/client/services/action/',
      { id: serviceId, action: 'reinstall', os: 'debian-12', confirm: (await serviceRow(serviceId)).label },
      { csrf: true },
    );
    assert.equal(reinstall.statusCode, 422, reinstall.body);
    assert.equal(reinstall.json().code, 'not_supported');
    const api = await apiClient(u.t, ['*'], '0', client.accountId);
    const vnc = await api.call('POST', `/api/v1/instances/${serviceId}/vnc`, {});
    assert.equal(vnc.statusCode, 422, vnc.body);
    assert.match(vnc.body, /not_supported/);
    const graph = await client.browser.get(`/api/v1/client/services/graph/?id=${serviceId}&timeframe=hour`);
    assert.equal(graph.statusCode, 422, graph.body);
    assert.equal(graph.json().code, 'not_supported');
  });
});

describe('one machine, one order', () => {
  test('concurrent orders for the last free machine: exactly one succeeds, the other is refused and not charged', async () => {
    const second = await place();
    await succeeded(second.jobId);
    assert.equal(await freeMachines(), 1);
    // Three clients at once for the one machine left.
    const clients = [await newClient(), await newClient(), await newClient()];
    const answers = await Promise.all(clients.map((client) => order(client)));
    const codes = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 409, 409], answers.map((r) => r.body).join('\n'));
    const winnerIndex = answers.findIndex((r) => r.statusCode === 201);
    const winner = answers[winnerIndex] as LightMyRequestResponse;
    for (const [i, res] of answers.entries()) {
      if (i === winnerIndex) continue;
      assert.match(res.json().code, /^unavailable/);
      const loser = clients[i] as Client;
      assert.equal(await balance(loser.accountId), FLOAT * 100, 'a refused order is not charged');
      const placed = await db().selectFrom('orders').select('id').where('account_id', '=', loser.accountId).execute();
      assert.equal(placed.length, 0);
    }
    const a = clients[0] as Client;
    await succeeded(winner.json().job.id);
    // Every machine is held by exactly one live service.
    const live = await db()
      .selectFrom('services')
      .select(['node_id'])
      .where('type', '=', 'baremetal')
      .where('status', '=', 'active')
      .execute();
    assert.equal(live.length, 3);
    assert.equal(new Set(live.map((s) => s.node_id)).size, 3);
    assert.equal(await freeMachines(), 0);
    const catalog = (await a.browser.get('/api/v1/client/catalog/')).json();
    const plan = catalog.plans.find((p: { label: string }) => p.label === PLAN);
    assert.equal(plan.regions[0].reason, 'no_capacity');
    const full = await order(a);
    assert.equal(full.statusCode, 409, full.body);

    // Terminate returns each machine to stock, and the next order gets one of them.
    for (const placed of [second, { client: clients[winnerIndex] as Client, serviceId: winner.json().service.id }]) {
      const api = await apiClient(u.t, ['*'], '0', placed.client.accountId);
      const label = (await serviceRow(placed.serviceId)).label;
      const res = await api.call('DELETE', `/api/v1/instances/${placed.serviceId}`, { confirm: label });
      assert.equal(res.statusCode, 202, res.body);
      await succeeded(res.json().job.id);
      assert.equal((await serviceRow(placed.serviceId)).status, 'terminated');
      const machine = await machineOf(placed.serviceId);
      assertStock(machine);
      assert.ok(
        machine.drives.every((d) => d.erasures >= 1),
        'every disk was securely erased',
      );
    }
    assert.equal(await freeMachines(), 2);
    const again = await place();
    await succeeded(again.jobId);
    const freed = [second.serviceId, winner.json().service.id];
    const nodes = await Promise.all(freed.map(async (id) => (await serviceRow(id)).node_id));
    assert.ok(nodes.includes((await serviceRow(again.serviceId)).node_id), 'a freed machine was given out again');
    const api = await apiClient(u.t, ['*'], '0', again.client.accountId);
    const res = await api.call('DELETE', `/api/v1/instances/${again.serviceId}`, {
      confirm: (await serviceRow(again.serviceId)).label,
    });
    await succeeded(res.json().job.id);
    assert.equal(await freeMachines(), 2);
  });
});

describe('faults', () => {
  test('a dead BMC: retried, then failed and refunded; the untouched machine stays in stock', async () => {
    assert.equal(await freeMachines(), 2);
    await emulator().setFaults({ down: true });
    try {
      const placed = await place();
      const job = await settled(placed.jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.error_code, 'node_unreachable');
      assert.equal(job.attempts, RETRY_LIMIT + 1);
      await failedAndRefunded(placed);
      const events = await db()
        .selectFrom('service_events')
        .select('kind')
        .where('service_id', '=', placed.serviceId)
        .execute();
      assert.equal(events.filter((e) => e.kind === 'provision_retry').length, RETRY_LIMIT);
      // Nothing reached the machine: there is nothing to wipe, and it can be ordered again.
      assert.notEqual((await serviceRow(placed.serviceId)).config.cleanup_pending, true);
      assert.equal(await freeMachines(), 2);
    } finally {
      await emulator().setFaults(CLEAR);
    }
  });

  test('a BMC unreachable from the power-on into the installer, then back: retried, active, installed once, charged once', async () => {
    assert.equal(await freeMachines(), 2);
    const machines = emulator().state.machines;
    for (const m of machines) m.actions.length = 0;
    const boots = machines.map((m) => m.boots);
    const inserts = emulator().calls.get('VirtualMedia.InsertMedia') ?? 0;
    // The BMC stops answering (connections reset) the moment it has taken the power-on into the
    // installer, before the attempt saw the machine on. The machine boots and installs without
    // it, as real hardware does; the job can see none of it until the BMC is back.
    let cutting: Promise<void> | null = null;
    const watch = setInterval(() => {
      if (!cutting && machines.some((m) => m.power === 'PoweringOn')) cutting = emulator().setFaults({ down: true });
    }, 2);
    let placed: Placed;
    try {
      placed = await place();
      const retrying = await waitFor('an attempt failed on the unreachable BMC', async () => {
        const job = await jobOf(placed.jobId);
        return job.error_code === 'node_unreachable' || job.status === 'failed' ? job : null;
      });
      assert.notEqual(retrying.status, 'failed', `${retrying.error_code}: ${retrying.error_message}`);
      assert.ok(cutting, 'the BMC was cut');
      // Meanwhile the service keeps its machine: nobody else may order it.
      assert.equal((await serviceRow(placed.serviceId)).status, 'provisioning');
      assert.equal(await freeMachines(), 1);
    } finally {
      clearInterval(watch);
      await cutting;
      await emulator().setFaults(CLEAR);
    }
    const job = await succeeded(placed.jobId);
    assert.ok(job.attempts >= 2, `attempts: ${job.attempts}`);
    const service = await serviceRow(placed.serviceId);
    assert.equal(service.status, 'active');
    const machine = await machineOf(placed.serviceId);
    assert.equal((service.external as { serial: string }).serial, machine.serial);
    // Installed once: one image inserted, one power-on into the installer (the retry waited for
    // that install instead of starting another); no other machine was touched.
    assert.equal((emulator().calls.get('VirtualMedia.InsertMedia') ?? 0) - inserts, 1);
    assert.equal(machine.actions.filter((a) => a.startsWith('VirtualMedia.InsertMedia')).length, 1);
    assert.deepEqual(
      machine.actions.filter((a) => a.startsWith('ComputerSystem.Reset')),
      ['ComputerSystem.Reset On'],
    );
    assert.equal(machine.boots - (boots[machine.index] ?? 0), 1);
    assert.match(String(machine.lastBoot), /^Cd /);
    assert.ok(machine.drives[0]?.os, 'nothing was installed');
    assert.ok(machine.media.every((m) => !m.inserted));
    assert.equal(machine.installParams, null);
    for (const other of machines) if (other !== machine) assert.deepEqual(other.actions, [], `machine ${other.index}`);
    const events = await db()
      .selectFrom('service_events')
      .select('kind')
      .where('service_id', '=', placed.serviceId)
      .execute();
    const count = (kind: string) => events.filter((e) => e.kind === kind).length;
    assert.ok(count('provision_retry') >= 1);
    assert.deepEqual([count('machine_claimed'), count('install_started'), count('active')], [1, 1, 1]);
    // Charged once, nothing refunded; exactly one machine out of stock.
    const price = Number((await planRow()).price_paise);
    assert.deepEqual(await ledgerOf(placed.client.accountId), [
      ['adjustment', FLOAT * 100],
      ['order', -price],
    ]);
    assert.equal(await freeMachines(), 1);
    // Back into stock for the tests after this one.
    const api = await apiClient(u.t, ['*'], '0', placed.client.accountId);
    const res = await api.call('DELETE', `/api/v1/instances/${placed.serviceId}`, { confirm: service.label });
    assert.equal(res.statusCode, 202, res.body);
    await succeeded(res.json().job.id);
    assert.equal(await freeMachines(), 2);
  });

  test('a BMC that dies mid-install: failed and refunded; the machine stays out of stock until the clean-up wiped it', async () => {
    await emulator().setFaults({ installHangs: true });
    let placed: Placed;
    try {
      placed = await place();
      await waitFor('the install under way', async () => {
        const job = await jobOf(placed.jobId);
        return job.step === 'installing the operating system';
      });
      await emulator().setFaults({ down: true });
      const job = await settled(placed.jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.error_code, 'node_unreachable');
      await failedAndRefunded(placed);
      assert.equal((await serviceRow(placed.serviceId)).config.cleanup_pending, true);
      // The machine was not wiped: no order may get it.
      assert.equal(await freeMachines(), 1);
    } finally {
      await emulator().setFaults(CLEAR);
    }
    const cleaned = await retryCleanups(u.t.deps, u.t.deps.logger);
    assert.equal(cleaned.cleaned, 1);
    assert.equal((await serviceRow(placed.serviceId)).config.cleanup_pending, false);
    assertStock(await machineOf(placed.serviceId));
    assert.equal(await freeMachines(), 2);
  });

  test('failing BMC tasks (virtual media): retried, then undone (wiped) and refunded', async () => {
    await emulator().setFaults({ failTasks: RETRY_LIMIT + 1 });
    const placed = await place();
    const job = await settled(placed.jobId);
    await emulator().setFaults(CLEAR);
    assert.equal(job.status, 'failed');
    assert.equal(job.attempts, RETRY_LIMIT + 1);
    await failedAndRefunded(placed);
    const service = await serviceRow(placed.serviceId);
    assert.notEqual((service.config as { cleanup_pending?: boolean }).cleanup_pending, true);
    const machine = await machineOf(placed.serviceId);
    assertStock(machine);
    assert.ok(
      machine.actions.some((a) => a.startsWith('Drive.SecureErase')),
      'the undo wiped the machine',
    );
    assert.equal(await freeMachines(), 2);
  });

  test('an install that never finishes: timed out, wiped, refunded', async () => {
    await emulator().setFaults({ installHangs: true });
    const placed = await place();
    const job = await settled(placed.jobId);
    await emulator().setFaults(CLEAR);
    assert.equal(job.status, 'failed');
    assert.equal(job.step, 'installing the operating system');
    assert.match(String((job.params as { error_detail?: string }).error_detail), /BAREMETAL_INSTALL_TIMEOUT/);
    await failedAndRefunded(placed);
    const machine = await machineOf(placed.serviceId);
    assertStock(machine);
    assert.equal(machine.installState, 'idle');
    assert.equal(await freeMachines(), 2);
  });

  test('an install that fails: undone and refunded at once', async () => {
    await emulator().setFaults({ installFails: true });
    const placed = await place();
    const job = await settled(placed.jobId);
    await emulator().setFaults(CLEAR);
    assert.equal(job.status, 'failed');
    assert.equal(job.attempts, 1, 'a failed install is not retried');
    await failedAndRefunded(placed);
    assertStock(await machineOf(placed.serviceId));
  });
});

describe('staff', () => {
  test('nodes add --kind redfish (one machine: capacity 1 by default) and nodes check', async () => {
    const bmc = await startRedfishEmulator({ machines: 1, powerDelayMs: 10, taskDelayMs: 10 });
    try {
      const stdin = (text: string) => ({ ...noInputs, stdin: async () => text });
      const credentials = JSON.stringify({ username: bmc.username, password: bmc.password });
      const add = await runAdmin(
        [
          'nodes',
          'add',
          'bmc-blr1-spare',
          '--kind',
          'redfish',
          '--location',
          'blr1',
          '--endpoint',
          bmc.machines[0]?.url ?? '',
          '--credentials',
          '-',
          '--json',
        ],
        async () => u.t.deps,
        'staff',
        stdin(credentials),
      );
      assert.equal(add.exitCode, 0, add.stderr);
      const node = await db()
        .selectFrom('nodes')
        .selectAll()
        .where('name', '=', 'bmc-blr1-spare')
        .executeTakeFirstOrThrow();
      assert.equal(node.kind, 'redfish');
      assert.equal(node.capacity, 1);
      assert.ok(!add.stdout.includes(bmc.password));
      const check = await runAdmin(['nodes', 'check', 'bmc-blr1-spare', '--json'], async () => u.t.deps);
      assert.equal(check.exitCode, 0, check.stderr);
      const [row] = JSON.parse(check.stdout);
      assert.equal(row.health, 'up', check.stdout);
      assert.match(row.detail, /Redfish BMC .*\(Redfish /);
      const big = await runAdmin(
        [
          'nodes',
          'add',
          'bmc-blr1-big',
          '--kind',
          'redfish',
          '--location',
          'blr1',
          '--endpoint',
          bmc.machines[0]?.url ?? '',
          '--capacity',
          '4',
          '--credentials',
          '-',
        ],
        async () => u.t.deps,
        'staff',
        stdin(credentials),
      );
      assert.notEqual(big.exitCode, 0);
      assert.match(big.stderr, /one machine/);
      await db().updateTable('nodes').set({ active: false }).where('name', '=', 'bmc-blr1-spare').execute();
    } finally {
      await bmc.stop();
    }
  });
});
