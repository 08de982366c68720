// Live power in lists under load (issue 18), for every product that has it, through the list
// routes themselves (session /api/v1/client/services/, token /api/v1/instances, /cloud/v1/instances
// where the product is listed there): however many lists ask at once, each node is probed once
// per interval (a Proxmox node's listing of its VMs, one BMC per bare-metal machine) or, where
// the upstream has no such listing, each server once (the game panel's `resources`); a fresh
// answer is never probed again; a slow upstream gets its last answer served with its time rather
// than a slow list; an upstream that fails shows `unknown`, never a 500; and web hosting, which
// has no live state, never reaches cPanel from a list. Counts are taken at the emulators (the
// game panel and the BMCs count requests as they arrive, before any fault knob). Time passes by
// moving the process clock; no test asserts how long something took.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { LiveState } from '../src/core/product-kit/live.ts';
import type { Service } from '../src/db/tables.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { orderGame, panelServer } from './support/game.ts';
import { ManualClock } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WAIT = 60_000;
const BURST = 50;
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB4zmacBHSGgE+FgleH0QGU7Ui1WcI52d7Xxy4VNI05Q ops@example.in';
/** A panel or BMC slower than a list waits for (PROBE_STALE_WAIT_MS), quicker than the driver's timeout. */
const SLOW_MS = 1_000;

let u: UpstreamApp;
const clock = new ManualClock();
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let api: ApiClient;
/** Two VMs on two nodes (mum1, blr1), two game servers on one panel node, two machines. */
const vps: number[] = [];
const game: number[] = [];
const metal: number[] = [];
let webId: number;

const db = () => u.t.deps.database.db;
const ptero = () => {
  assert.ok(u.ptero);
  return u.ptero;
};
const redfish = () => {
  assert.ok(u.redfish);
  return u.redfish;
};

async function settled(jobId: number): Promise<string> {
  return waitFor(
    `job ${jobId}`,
    async () => {
      const job = await db().selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
      return job.status === 'succeeded' || job.status === 'failed' ? job.status : null;
    },
    WAIT,
  );
}

async function orderMetal(n: number): Promise<number> {
  const plan = await db().selectFrom('plans').select('id').where('label', '=', 'bm-2cpu-64g').executeTakeFirstOrThrow();
  const res = await owner.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { region: 'mum1', hostname: `metal${n}.example.in`, os: 'debian-12', ssh_keys: [KEY] },
      idempotency_key: `probes-metal-${n}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(await settled(res.json().job.id), 'succeeded');
  return res.json().service.id;
}

async function deployKvm(region: string, n: number): Promise<number> {
  const res = await api.call('POST', '/cloud/v1/instances', {
    type: 'kvm',
    plan: 'vps-1c-1g',
    region,
    image: 'debian-12',
    hostname: `probes${n}.example.in`,
    idempotency_key: `probes-kvm-${n}`,
  });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(await settled(res.json().job.id), 'succeeded');
  return res.json().instance.id;
}

// ---- what reached the emulators ----

/** Proxmox node listings (both nodes point at one emulator; counted when answered). */
const listings = () => u.pve.calls.get('GET /nodes/:/qemu') ?? 0;

/** `resources` reads of each game server (in `game` order), as they arrived at the panel. */
function resourceReads(): number[] {
  return game.map(
    (id) => ptero().received.get(`GET /api/client/servers/${panelServer(u, id).identifier}/resources`) ?? 0,
  );
}

/** The machine index behind each bare-metal service (node `bmc-mum1-<i+1>` is machine i). */
const machineIndex = new Map<number, number>();

/** Reads of each machine's system (in `metal` order), as they arrived at its BMC: the power probe. */
function systemReads(): number[] {
  return metal.map((id) => {
    const index = machineIndex.get(id) ?? -1;
    const machine = redfish().machines[index];
    assert.ok(machine);
    return redfish().received[index]?.get(`GET /redfish/v1/Systems/${machine.systemId}`) ?? 0;
  });
}

interface Probed {
  listings: number;
  resources: number[];
  systems: number[];
}
const probed = (): Probed => ({ listings: listings(), resources: resourceReads(), systems: systemReads() });
const since = (before: Probed): Probed => {
  const now = probed();
  return {
    listings: now.listings - before.listings,
    resources: now.resources.map((n, i) => n - (before.resources[i] ?? 0)),
    systems: now.systems.map((n, i) => n - (before.systems[i] ?? 0)),
  };
};
/** One probe of each VPS node (two), of each game server, of each machine. */
/**
 * Wait until the probes started since `before` are `expected`. A list that has an older answer
 * waits only PROBE_STALE_WAIT_MS for the new one, so on a loaded machine the lists can come back
 * before the probe they started has reached the emulator's counters.
 */
async function probesReach(before: Probed, expected: Probed, what: string): Promise<void> {
  await waitFor(what, async () => JSON.stringify(since(before)) === JSON.stringify(expected), WAIT).catch(() => {});
  assert.deepEqual(since(before), expected, what);
}

const ONCE: Probed = { listings: 2, resources: [1, 1], systems: [1, 1] };
const NONE: Probed = { listings: 0, resources: [0, 0], systems: [0, 0] };

// ---- the lists ----

type Row = { id: number; power: string | null; live_as_of?: string | null };

function ok(res: LightMyRequestResponse): LightMyRequestResponse {
  assert.equal(res.statusCode, 200, res.body);
  return res;
}

const routes: Record<string, { list: () => Promise<Row[]>; products: number[][]; probes: Probed }> = {
  'session /api/v1/client/services/': {
    list: async () => ok(await owner.browser.get('/api/v1/client/services/?per_page=50')).json().services,
    products: [vps, game, metal],
    probes: ONCE,
  },
  'token /api/v1/instances': {
    list: async () => ok(await api.call('GET', '/api/v1/instances?per_page=50')).json().instances,
    products: [vps, game, metal],
    probes: ONCE,
  },
  'token /cloud/v1/instances': {
    list: async () => ok(await api.call('GET', '/cloud/v1/instances?per_page=50')).json().instances,
    products: [vps, metal],
    // Game servers are not listed there: nothing asks the panel.
    probes: { ...ONCE, resources: [0, 0] },
  },
};

const powerOf = (rows: Row[], id: number) => rows.find((r) => r.id === id)?.power;

/** The live state of services as the lists read it (the session and token lists show its power only). */
async function liveOf(ids: number[]): Promise<Map<number, LiveState>> {
  const rows = (await db().selectFrom('services').selectAll().where('id', 'in', ids).execute()) as Service[];
  return u.t.deps.serviceActions.liveStates(rows);
}

before(async () => {
  u = await createUpstreamApp({ game: true, web: true, redfish: true, overrides: { clock: clock.now } });
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '100000', 'test float');
  api = await apiClient(u.t, ['*'], '0', owner.account.id);
  vps.push(await deployKvm('mum1', 1), await deployKvm('blr1', 2));
  for (let i = 0; i < 2; i++) game.push((await orderGame(u, owner)).serviceId);
  // A new game server is installed stopped, its EULA not accepted yet: accept it and start both.
  for (const id of game) {
    const eula = await owner.browser.post(`/api/v1/client/game/?service=${id}&action=eula_accept`, {}, { csrf: true });
    assert.equal(eula.statusCode, 200, eula.body);
    const start = await api.call('POST', `/api/v1/instances/${id}/start`);
    assert.equal(start.statusCode, 202, start.body);
    assert.equal(await settled(start.json().job.id), 'succeeded');
    const server = panelServer(u, id);
    await waitFor(
      `game server ${id} running`,
      async () => ptero().state.runtimeOf(server.id).state === 'running' || null,
      WAIT,
    );
  }
  metal.push(await orderMetal(1), await orderMetal(2));
  for (const id of metal) {
    const row = await db()
      .selectFrom('services')
      .innerJoin('nodes', 'nodes.id', 'services.node_id')
      .select('nodes.name')
      .where('services.id', '=', id)
      .executeTakeFirstOrThrow();
    machineIndex.set(id, Number(row.name.replace('bmc-mum1-', '')) - 1);
  }
  assert.notEqual(machineIndex.get(metal[0] as number), machineIndex.get(metal[1] as number));
  // A web service on a cPanel node (no account behind it: a list must never ask).
  const node = await db().selectFrom('nodes').select('id').where('name', '=', 'cpanel-mum1').executeTakeFirstOrThrow();
  const plan = await db().selectFrom('plans').select('id').where('type', '=', 'web').executeTakeFirstOrThrow();
  const kvm = await db()
    .selectFrom('services')
    .selectAll()
    .where('id', '=', vps[0] as number)
    .executeTakeFirstOrThrow();
  const web = await db()
    .insertInto('services')
    .values({
      account_id: owner.account.id,
      plan_id: plan.id,
      order_id: null,
      type: 'web',
      label: 'site1',
      status: 'active',
      location_id: kvm.location_id,
      node_id: node.id,
      price_paise: kvm.price_paise,
      config: JSON.stringify({ domain: 'site1.example.in' }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  webId = web.id;
});
after(() => u.close());

describe('one probe per node (or game server) per interval, however many lists ask', () => {
  for (const [name, route] of Object.entries(routes)) {
    test(`${name}: ${BURST} concurrent lists, one probe each; a second burst while fresh, none`, async () => {
      clock.advance(4); // past whatever is cached
      const before = probed();
      const answers = await Promise.all(Array.from({ length: BURST }, () => route.list()));
      await probesReach(before, route.probes, 'one probe of each node and each game server listed');
      for (const rows of answers) {
        for (const id of route.products.flat()) assert.equal(powerOf(rows, id), 'running', `service ${id}`);
      }
      const between = probed();
      const again = await Promise.all(Array.from({ length: BURST }, () => route.list()));
      assert.deepEqual(since(between), NONE, 'a fresh answer is served as it is: no probe');
      assert.equal(again.length, BURST);
    });
  }

  test('the three lists at once share the same probes', async () => {
    clock.advance(4);
    const before = probed();
    await Promise.all(
      Array.from({ length: BURST }, (_, i) => Object.values(routes)[i % 3]?.list() ?? Promise.resolve([])),
    );
    await probesReach(before, ONCE, 'one probe of each');
  });

  test('game servers: utilisation from `resources` against the plan limits, measured when probed', async () => {
    clock.advance(4);
    const asked = clock.now().getTime();
    const live = await liveOf(game);
    for (const id of game) {
      const state = live.get(id);
      assert.equal(state?.power, 'running');
      assert.ok(state?.utilisation, JSON.stringify(state));
      assert.equal(state.gap, null);
      assert.equal(state.utilisation.cpus, 2, 'a 150% CPU limit is two CPUs');
      assert.equal(state.utilisation.memoryTotalBytes, 2048 * 1024 * 1024);
      assert.ok(state.utilisation.memoryBytes !== null && state.utilisation.memoryBytes > 0);
      assert.ok(state.utilisation.cpu !== null && state.utilisation.cpu >= 0);
      assert.ok(state.measuredAt && state.measuredAt.getTime() >= asked);
    }
    const machines = await liveOf(metal);
    for (const id of metal) {
      assert.equal(machines.get(id)?.power, 'running');
      assert.equal(machines.get(id)?.utilisation, null);
      assert.equal(machines.get(id)?.gap, 'not_reported', 'a BMC does not see the OS');
    }
  });
});

describe('a slow upstream: the last answer with its time, not a slow list', () => {
  test('every product: the first list after the interval is served the old answer; each is asked once', async () => {
    clock.advance(4);
    const all = [...vps, ...game, ...metal];
    const fresh = await liveOf(all);
    const cloudFresh = await routes['token /cloud/v1/instances']?.list();
    assert.ok(cloudFresh);
    const tokenFresh = (await routes['token /api/v1/instances']?.list()) ?? [];
    const sessionFresh = (await routes['session /api/v1/client/services/']?.list()) ?? [];
    const measured = (id: number) => fresh.get(id)?.measuredAt?.getTime();
    for (const id of all) assert.ok(measured(id), `service ${id} has a measured time`);
    await Promise.all([
      u.pve.setFaults({ latencyMs: SLOW_MS }),
      ptero().setFaults({ latencyMs: SLOW_MS }),
      redfish().setFaults({ latencyMs: SLOW_MS }),
    ]);
    try {
      clock.advance(4);
      const before = probed();
      // Hang guard only (the test's timeout): what matters is which answer came back.
      // The lists of both other surfaces asked at the same moment (before the slow probes can end).
      const [stale, token = [], session = []] = await Promise.all([
        liveOf(all),
        routes['token /api/v1/instances']?.list(),
        routes['session /api/v1/client/services/']?.list(),
      ]);
      for (const id of all) {
        assert.equal(stale.get(id)?.power, 'running', `service ${id}`);
        assert.equal(stale.get(id)?.measuredAt?.getTime(), measured(id), `service ${id}: the old answer, its time`);
      }
      const cloud = await routes['token /cloud/v1/instances']?.list();
      for (const id of [...vps, ...metal]) {
        const old: string | null | undefined = cloudFresh.find((r) => r.id === id)?.live_as_of;
        assert.ok(old);
        assert.equal(cloud?.find((r) => r.id === id)?.live_as_of, old, `service ${id}: live_as_of is the old time`);
      }
      // Every list says how old what it shows is: the old answer's time, on every surface and product.
      for (const id of all) {
        const old = tokenFresh.find((r) => r.id === id)?.live_as_of;
        assert.ok(old, `service ${id}: /api/v1/instances shows live_as_of`);
        assert.equal(Date.parse(old), measured(id));
        assert.equal(token.find((r) => r.id === id)?.live_as_of, old, `service ${id}: the old time (token list)`);
        assert.equal(sessionFresh.find((r) => r.id === id)?.live_as_of, old);
        assert.equal(session.find((r) => r.id === id)?.live_as_of, old, `service ${id}: the old time (session list)`);
      }
      // More lists while the probes are under way: nobody asks again.
      const more = await Promise.all(
        Array.from({ length: 10 }, () => routes['session /api/v1/client/services/']?.list()),
      );
      for (const rows of more) for (const id of all) assert.equal(powerOf(rows ?? [], id), 'running');
      // The probes end and fill the cache: the next list is the new answer, and each was asked once.
      await waitFor(
        'the new answers',
        async () => {
          const now = await liveOf(all);
          return all.every((id) => (now.get(id)?.measuredAt?.getTime() ?? 0) > (measured(id) ?? 0)) ? now : null;
        },
        WAIT,
      );
      assert.deepEqual(since(before), ONCE);
    } finally {
      await Promise.all([
        u.pve.setFaults({ latencyMs: 0 }),
        ptero().setFaults({ latencyMs: 0 }),
        redfish().setFaults({ latencyMs: 0 }),
      ]);
    }
  });
});

describe('an upstream that fails', () => {
  test('unknown power on every list, never a 500; the failure is not asked again while fresh', async () => {
    await Promise.all([
      u.pve.setFaults({ down: true }),
      ptero().setFaults({ down: true }),
      redfish().setFaults({ down: true }),
    ]);
    try {
      clock.advance(4);
      const before = probed();
      let first: Probed | null = null;
      for (const [name, route] of Object.entries(routes)) {
        const rows = await route.list();
        for (const id of route.products.flat()) assert.equal(powerOf(rows, id), 'unknown', `${name}: service ${id}`);
        first ??= probed();
      }
      const live = await liveOf([...vps, ...game, ...metal]);
      for (const [id, state] of live) {
        assert.equal(state.utilisation, null);
        assert.equal(state.gap, 'node_unreachable', `service ${id}`);
      }
      // A reset connection may fail before it reaches the upstream: at most one request each, and
      // none after the first list (the failure is kept for the interval too).
      const all = since(before);
      assert.ok(
        [...all.resources, ...all.systems].every((n) => n <= 1),
        JSON.stringify(all),
      );
      assert.ok(first);
      const later = since(first);
      assert.deepEqual([later.resources, later.systems], [NONE.resources, NONE.systems]);
    } finally {
      await Promise.all([
        u.pve.setFaults({ down: false }),
        ptero().setFaults({ down: false }),
        redfish().setFaults({ down: false }),
      ]);
    }
    // Back once they answer (a connection the dead upstream reset may fail one more probe).
    await waitFor(
      'power back',
      async () => {
        clock.advance(4);
        const rows = (await routes['session /api/v1/client/services/']?.list()) ?? [];
        return [...vps, ...game, ...metal].every((id) => powerOf(rows, id) === 'running') || null;
      },
      WAIT,
    );
  });
});

describe('web hosting', () => {
  test('has no live state: a list never asks cPanel', async () => {
    const cpanel = u.cpanel;
    assert.ok(cpanel);
    const before = [...cpanel.calls.values()].reduce((a, b) => a + b, 0);
    clock.advance(4);
    for (const route of Object.values(routes)) await route.list();
    const rows = await routes['token /api/v1/instances']?.list();
    assert.equal(powerOf(rows ?? [], webId), null);
    assert.equal(
      [...cpanel.calls.values()].reduce((a, b) => a + b, 0),
      before,
    );
  });
});
