// The driver registry (upstreams/registry.ts) and the drivers built from it: an unknown kind
// is refused clearly, a kind without a driver gives the answers it always gave (409
// hypervisor_not_configured; "no driver for … nodes yet" from `nodes check`), and a Proxmox
// node is pinged and its console dialed through the registry against the emulator.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { type ProxmoxEmulator, startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { AppError } from '../src/core/errors.ts';
import { createNodeService, type NodeService } from '../src/core/nodes/node.service.ts';
import { createDrivers, type Drivers } from '../src/core/services/drivers.ts';
import { createServiceStaff } from '../src/core/services/staff.ts';
import type { NodeKind, NodeRow } from '../src/db/tables.ts';
import type { ConsoleEvents, ConsoleTicket } from '../src/upstreams/driver.ts';

import {
  DRIVERS,
  type DriverRegistry,
  driverEntry,
  kindEntry,
  NoDriverError,
  nodeKinds,
} from '../src/upstreams/registry.ts';
import { createTestDatabase } from './support/harness.ts';
import { vmSpec } from './support/proxmox-fixtures.ts';

let emulator: ProxmoxEmulator;
let drivers: Drivers;
let nextId = 0;

/** Credentials stay in the clear here: the fake NodeService below "unseals" them. */
function nodeRow(kind: string, overrides: Partial<NodeRow> = {}): NodeRow {
  const id = ++nextId;
  return {
    id,
    name: `${kind}-${id}`,
    kind: kind as NodeKind,
    location_id: 1,
    endpoint: emulator.url,
    credentials_sealed: JSON.stringify({ token_id: emulator.tokenId, token_secret: emulator.tokenSecret }),
    settings: { node: emulator.node },
    capacity: 10,
    active: true,
    health: 'unknown',
    health_detail: null,
    checked_at: null,
    created_at: new Date(),
    ...overrides,
  } as NodeRow;
}

/** The registry with one kind's driver taken out. */
function withoutDriver(kind: NodeKind): DriverRegistry {
  return { ...DRIVERS, [kind]: { ...DRIVERS[kind], driver: null } };
}

const fakeNodes = {
  credentials: (node: Pick<NodeRow, 'credentials_sealed'>) => JSON.parse(node.credentials_sealed),
} as unknown as NodeService;

const notConfigured = (error: unknown) =>
  error instanceof AppError &&
  error.code === 'hypervisor_not_configured' &&
  error.message === 'No hypervisor is configured for this service.';

before(async () => {
  emulator = await startProxmoxEmulator({ taskDelayMs: 10 });
  drivers = createDrivers(fakeNodes, { pollIntervalMs: 5, requestTimeoutMs: 1500, taskTimeoutMs: 5000 });
});
after(async () => {
  drivers.close();
  await emulator.stop();
});

describe('driver registry', () => {
  test('every node kind has an entry; an unknown kind is refused clearly', () => {
    assert.deepEqual(nodeKinds(), ['proxmox', 'pterodactyl', 'cpanel', 'redfish']);
    assert.deepEqual(kindEntry('cpanel').credentials, ['username', 'api_token']);
    assert.deepEqual(kindEntry('pterodactyl').credentials, ['app_key', 'client_key']);
    assert.equal(driverEntry('proxmox').role, 'hypervisor');
    assert.equal(driverEntry('pterodactyl').role, 'gamePanel');
    for (const lookup of [() => kindEntry('openstack'), () => driverEntry('openstack'), () => kindEntry('toString')]) {
      assert.throws(lookup, (error: unknown) => {
        assert.ok(error instanceof NoDriverError);
        assert.equal(error.known, false);
        assert.match(error.message, /^unknown node kind "(openstack|toString)"$/);
        return true;
      });
    }
  });

  test('every kind has a driver; a kind without one (a registry under construction) gives clear answers', async () => {
    for (const kind of nodeKinds()) assert.ok(DRIVERS[kind].driver, kind);
    assert.equal(driverEntry('cpanel').role, 'webPanel');
    const partial = createDrivers(fakeNodes, {}, withoutDriver('cpanel'));
    assert.throws(() => driverEntry('cpanel', withoutDriver('cpanel')), {
      name: 'NoDriverError',
      message: 'no driver for cpanel nodes yet',
    });
    assert.throws(() => partial.driverFor(nodeRow('cpanel'), 'hypervisor'), notConfigured);
    assert.throws(() => partial.driverFor(nodeRow('cpanel'), 'webPanel'), { code: 'node_unreachable' });
    await assert.rejects(partial.ping(nodeRow('cpanel')), { message: 'no driver for cpanel nodes yet' });
    partial.close();
    // A game panel is not a hypervisor, and a hypervisor is not a game panel.
    assert.throws(() => drivers.driverFor(nodeRow('pterodactyl'), 'hypervisor'), notConfigured);
    assert.throws(() => drivers.driverFor(nodeRow('proxmox'), 'gamePanel'), { code: 'node_unreachable' });
    assert.throws(() => drivers.driverFor(nodeRow('cpanel'), 'gamePanel'), { code: 'node_unreachable' });
    assert.throws(() => drivers.driverFor(nodeRow('pterodactyl'), 'webPanel'), { code: 'node_unreachable' });
    assert.throws(() => drivers.driverFor(nodeRow('openstack'), 'hypervisor'), notConfigured);
    assert.throws(() => drivers.driverFor(null, 'hypervisor'), notConfigured);
    assert.throws(() => drivers.driverFor(nodeRow('proxmox', { active: false }), 'hypervisor'), notConfigured);
    await assert.rejects(drivers.ping(nodeRow('proxmox', { active: false })), notConfigured);
  });

  test('unreadable credentials: 409 naming the node', () => {
    const broken = nodeRow('proxmox', { credentials_sealed: 'not json' });
    assert.throws(() => drivers.driverFor(broken, 'hypervisor'), {
      code: 'hypervisor_not_configured',
      message: `The credentials of node ${broken.name} cannot be read.`,
    });
  });
});

describe('nodes add takes its kinds and required credentials from the registry', () => {
  test('unknown kind, missing credentials, and a node of a kind without a driver', async () => {
    const scratch = await createTestDatabase();
    try {
      await seedDemoCatalog(scratch.database.db);
      const nodes = createNodeService({ db: scratch.database.db, secretKey: Buffer.alloc(32, 7) });
      const add = (kind: string, credentials: unknown, name = `n-${kind.toLowerCase()}`) =>
        nodes.add({
          name,
          kind: kind as NodeKind,
          locationCode: 'mum1',
          endpoint: 'https://x.example',
          credentials,
          capacity: 1,
        });
      const fieldsOf = async (attempt: Promise<unknown>) => {
        try {
          await attempt;
        } catch (error) {
          assert.ok(error instanceof AppError && error.code === 'validation_failed', String(error));
          return error.fields;
        }
        assert.fail('accepted');
      };
      assert.deepEqual(await fieldsOf(add('openstack', {})), {
        kind: 'must be proxmox, pterodactyl, cpanel or redfish',
      });
      assert.deepEqual(await fieldsOf(add('toString', {})), {
        kind: 'must be proxmox, pterodactyl, cpanel or redfish',
      });
      assert.deepEqual(await fieldsOf(add('proxmox', { token_id: 'a@pve!t' })), { credentials: 'needs token_secret' });
      assert.deepEqual(await fieldsOf(add('cpanel', { username: '' })), { credentials: 'needs username, api_token' });
      assert.deepEqual(await fieldsOf(add('pterodactyl', { app_key: 'ptla_x' })), { credentials: 'needs client_key' });
      const panel = await add('cpanel', { username: 'root', api_token: 'k' });
      assert.equal(panel.kind, 'cpanel');
      assert.deepEqual(nodes.credentials(panel), { username: 'root', api_token: 'k' });
    } finally {
      await scratch.drop();
    }
  });
});

describe('through the registry against the emulator', () => {
  test('ping of a proxmox node; one driver per node until its row changes', async () => {
    const node = nodeRow('proxmox');
    assert.deepEqual(await drivers.ping(node), { detail: 'Proxmox VE 8.2.4' });
    const hv = drivers.driverFor(node, 'hypervisor');
    assert.equal(drivers.driverFor({ ...node }, 'hypervisor'), hv, 'the same row: the cached driver');
    const moved = { ...node, settings: { node: 'pve9' } };
    assert.notEqual(drivers.driverFor(moved, 'hypervisor'), hv, 'changed settings: a new driver');
    await assert.rejects(drivers.ping(moved), { name: 'UpstreamError', kind: 'not_found' });
  });

  test('nodes check: up with the version, down with the reason (unreachable, or a panel node configured wrong)', async () => {
    const rows = [nodeRow('proxmox'), nodeRow('cpanel'), nodeRow('proxmox', { endpoint: 'http://127.0.0.1:1' })];
    const health = new Map<number, [string, string | null]>();
    const staff = createServiceStaff({
      db: null as never,
      jobs: null as never,
      drivers,
      clock: () => new Date(),
      nodes: {
        list: async () => rows,
        setHealth: async (id: number, state: string, detail: string | null) => void health.set(id, [state, detail]),
      } as unknown as NodeService,
    });
    const checked = await staff.checkNodes();
    assert.deepEqual(
      checked.map((c) => [c.kind, c.health]),
      [
        ['proxmox', 'up'],
        ['cpanel', 'down'],
        ['proxmox', 'down'],
      ],
    );
    assert.equal(checked[0]?.detail, 'Proxmox VE 8.2.4');
    // A cPanel node given Proxmox credentials: its driver says what is wrong, without the values.
    assert.match(checked[1]?.detail ?? '', /WHM username is empty or malformed/);
    assert.match(checked[2]?.detail ?? '', /unreachable/);
    assert.equal(health.get(rows[1]?.id ?? 0)?.[0], 'down');
  });

  test('a serial console dialed by the driver: handshake done by the driver, then output only', {
    timeout: 60_000,
  }, async () => {
    const node = nodeRow('proxmox');
    const hv = drivers.driverFor(node, 'hypervisor');
    const vm = await hv.createVm(vmSpec());
    await hv.start(vm);
    const ticket = await hv.console(vm, 'serial');
    const outputs: string[] = [];
    const echoed = await new Promise<string>((resolve, reject) => {
      const up: WebSocket = drivers.openConsole(
        node,
        ticket,
        {
          ready: () => up.send('0:4:ping'),
          output: (data) => {
            outputs.push(data.toString());
            resolve(data.toString());
          },
          refused: () => reject(new Error('refused')),
        },
        { maxPayload: 1024 * 1024 },
      );
      up.on('error', reject);
    });
    assert.equal(echoed, 'ping');
    assert.deepEqual(outputs, ['ping'], "the node's OK is not output");
  });
});

describe('the proxmox console handshake', () => {
  /** A node console that answers the serial handshake with `answers`, all in one write. */
  async function fakeConsole(answers: string[]): Promise<{ url: string; close(): Promise<void> }> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => wss.once('listening', resolve));
    wss.on('connection', (ws) =>
      ws.once('message', () => {
        for (const answer of answers) ws.send(answer);
      }),
    );
    return {
      url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => wss.close(() => resolve())),
    };
  }

  const serialTicket: ConsoleTicket = {
    kind: 'serial',
    ticket: 'PVEVNC:1',
    port: 5900,
    user: 'root@pam',
    password: null,
    websocketPath: '/api2/json/nodes/pve/qemu/100/vncwebsocket?port=5900&vncticket=x',
  };

  async function dial(url: string): Promise<{ refused: boolean; outputs: string[] }> {
    const node = nodeRow('proxmox', { endpoint: url });
    const outputs: string[] = [];
    return new Promise((resolve, reject) => {
      let refused = false;
      const events: ConsoleEvents = {
        ready: () => {},
        output: (data) => {
          outputs.push(data.toString());
          if (outputs.length === 2) up.close();
        },
        refused: () => {
          refused = true;
          up.close();
        },
      };
      const up = drivers.openConsole(node, serialTicket, events, { maxPayload: 1024 });
      up.on('error', reject);
      up.on('close', () => resolve({ refused, outputs }));
    });
  }

  test('anything but OK is a refusal; output sent right after OK is kept', async () => {
    const refusing = await fakeConsole(['NO']);
    assert.deepEqual(await dial(refusing.url), { refused: true, outputs: [] });
    await refusing.close();
    const eager = await fakeConsole(['OK', 'first', 'second']);
    assert.deepEqual(await dial(eager.url), { refused: false, outputs: ['first', 'second'] });
    await eager.close();
  });
});
