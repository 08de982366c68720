// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Pterodactyl driver against the emulated panel and its Wings node over real HTTP and
// WebSockets: provisioning (users, servers, found again after a lost answer, install polling),
// every client-API method with what the panel holds afterwards, streamed uploads, the console
// relay (handshake, commands, token renewal), and how every failure maps to UpstreamError
// (401, 403, 404, 409, 400, 422, 429 retried then thrown, 5xx, down, hanging, Wings down).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import WebSocket from 'ws';
import { type PterodactylEmulator, startPterodactylEmulator } from '../../emulators/src/pterodactyl/index.ts';
import type { ConsoleEvents } from '../src/upstreams/driver.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import type { GamePanel, GameServerInfo, GameServerSpec } from '../src/upstreams/game-panel.ts';
import { createHttpClient } from '../src/upstreams/http.ts';
import { acceptClientFrame } from '../src/upstreams/pterodactyl/console.ts';
import {
  createPterodactylPanel,
  type PterodactylConfig,
  parsePterodactylNode,
} from '../src/upstreams/pterodactyl/index.ts';

/** Part of both keys: no error message may ever contain it. */
const CANARY = 'CANARYSECRETXYZ';
const APP_KEY = `ptla_CANARYAPPKE${CANARY}${'a'.repeat(32 - CANARY.length)}`;
const CLIENT_KEY = `ptlc_CANARYCLIKE${CANARY}${'c'.repeat(32 - CANARY.length)}`;

let emulator: PterodactylEmulator;
let ptero: GamePanel;
const made: GamePanel[] = [];
let n = 0;

function driver(overrides: Partial<PterodactylConfig> = {}): GamePanel {
  const panel = createPterodactylPanel({
    endpoint: emulator.url,
    appKey: emulator.appKey,
    clientKey: emulator.clientKey,
    panelNode: emulator.panelNodeId,
    requestTimeoutMs: 2000,
    pollIntervalMs: 10,
    ...overrides,
  });
  made.push(panel);
  return panel;
}

before(async () => {
  emulator = await startPterodactylEmulator({
    appKey: APP_KEY,
    clientKey: CLIENT_KEY,
    installDelayMs: 60,
    startDelayMs: 60,
    backupDelayMs: 40,
    statsIntervalMs: 5000,
  });
  ptero = driver();
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

/** Rejects with an UpstreamError that has these properties, and no key in any of its texts. */
async function rejectsWith(
  promise: Promise<unknown>,
  expected: {
    kind: string;
    retryable?: boolean;
    status?: number;
    message?: RegExp;
    detail?: RegExp;
    fields?: string[];
    retryAfterSeconds?: number;
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
  if (expected.retryable !== undefined) assert.equal(e.retryable, expected.retryable, e.message);
  if (expected.status !== undefined) assert.equal(e.status, expected.status, e.message);
  if (expected.message) assert.match(e.message, expected.message);
  if (expected.detail) assert.match(e.detail ?? '', expected.detail);
  if (expected.fields) assert.deepEqual(Object.keys(e.fields ?? {}).sort(), [...expected.fields].sort(), e.message);
  if (expected.retryAfterSeconds !== undefined) assert.equal(e.retryAfterSeconds, expected.retryAfterSeconds);
  for (const text of [e.message, e.detail ?? '', ...Object.values(e.fields ?? {})]) {
    assert.doesNotMatch(text, new RegExp(CANARY));
    assert.ok(!text.includes(emulator.appKey) && !text.includes(emulator.clientKey));
  }
  return e;
}

function serverSpec(userId: number, overrides: Partial<GameServerSpec> = {}): GameServerSpec {
  n++;
  return {
    externalId: `hp-svc-${n}`,
    name: `mc-${n}`,
    description: `Service ${n}`,
    userId,
    nestId: 1,
    eggId: 3,
    dockerImage: 'ghcr.io/pterodactyl/yolks:java_21',
    startup: 'java -Xms128M -jar {{SERVER_JARFILE}}',
    environment: { SERVER_JARFILE: 'server.jar', MINECRAFT_VERSION: 'latest', BUILD_NUMBER: 'latest' },
    limits: { memoryMb: 2048, cpuPercent: 200, diskMb: 10240, swapMb: 0, io: 500 },
    featureLimits: { databases: 2, backups: 3, allocations: 1 },
    ...overrides,
  };
}

async function owner(): Promise<number> {
  n++;
  const { id } = await ptero.ensureUser({
    externalId: `hp-acct-${n}`,
    email: `client${n}@example.in`,
    username: `client${n}`,
    firstName: 'Asha',
    lastName: `Client${n}`,
  });
  return id;
}

/** A new server, installed (status null). */
async function installed(overrides: Partial<GameServerSpec> = {}): Promise<GameServerInfo> {
  const info = await ptero.createServer(serverSpec(await owner(), overrides));
  await waitFor(
    () => ptero.server(info),
    (s) => s.status === null,
    'the install',
  );
  return info;
}

/** A new server, installed and running. */
async function running(): Promise<GameServerInfo> {
  const info = await installed();
  // Paper stops at boot until its EULA is accepted, as the real one does.
  await ptero.writeFile(info, 'eula.txt', 'eula=true\n');
  await ptero.power(info, 'start');
  await waitFor(
    () => emulator.state.runtimeOf(info.id).state,
    (s) => s === 'running',
    'the server to run',
  );
  return info;
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const fileOf = (info: GameServerInfo, path: string) => emulator.state.files.get(info.id)?.get(path);

describe('pterodactyl driver: configuration and ping', () => {
  test('parsePterodactylNode reads credentials and settings with defaults', () => {
    const base = { name: 'ptero1', endpoint: 'https://panel.example.in', settings: {} };
    const config = parsePterodactylNode(
      { ...base, credentials: { app_key: APP_KEY, client_key: CLIENT_KEY } },
      { requestTimeoutMs: 5000, taskTimeoutMs: 9, pollIntervalMs: 7 },
    );
    assert.deepEqual(config, {
      metricsNode: 'ptero1',
      endpoint: 'https://panel.example.in',
      appKey: APP_KEY,
      clientKey: CLIENT_KEY,
      panelNode: 1,
      tls: { insecure: false },
      requestTimeoutMs: 5000,
      pollIntervalMs: 7,
    });
    const custom = parsePterodactylNode(
      {
        ...base,
        credentials: {},
        settings: { panel_node: 4, tls_insecure: true, tls_ca: '-----BEGIN CERTIFICATE-----' },
      },
      {},
    );
    assert.equal(custom.panelNode, 4);
    assert.deepEqual(custom.tls, { insecure: true, ca: '-----BEGIN CERTIFICATE-----' });
    assert.equal(custom.appKey, '');
  });

  test('a configuration that cannot work fails every call (not the creation), without echoing keys', async () => {
    const cases: [Partial<PterodactylConfig>, RegExp][] = [
      [{ endpoint: 'ftp://panel' }, /http\(s\) URL/],
      [{ endpoint: `https://user:${CANARY}@panel` }, /must not contain credentials/],
      [{ appKey: '' }, /application API key is empty/],
      [{ appKey: emulator.clientKey }, /application API key is a client key/],
      [{ clientKey: emulator.appKey }, /client API key is an application key/],
      [{ panelNode: 0 }, /panel node/],
    ];
    for (const [overrides, message] of cases) {
      const panel = driver(overrides);
      await rejectsWith(panel.ping(), { kind: 'rejected', retryable: false, message });
      await rejectsWith(panel.listFiles({ id: 1, uuid: 'x', identifier: 'abcdefgh' }, '/'), { kind: 'rejected' });
    }
    assert.equal(calls('GET /api/application/nodes/:'), 0, 'nothing was sent');
  });

  test('ping checks the application key, the panel node and the client key', async () => {
    assert.deepEqual(await ptero.ping(), { version: 'unknown (the panel API does not state its version)' });
    assert.equal(calls('GET /api/application/nodes/:'), 1);
    assert.equal(calls('GET /api/client/account'), 1);
    await rejectsWith(driver({ panelNode: 99 }).ping(), { kind: 'not_found', retryable: false, message: /node 99/ });
    const wrongApp = `ptla_${'x'.repeat(11)}${CANARY}${'y'.repeat(32 - CANARY.length)}`;
    await rejectsWith(driver({ appKey: wrongApp }).ping(), { kind: 'auth', status: 401, retryable: false });
    const wrongClient = `ptlc_${'x'.repeat(11)}${CANARY}${'y'.repeat(32 - CANARY.length)}`;
    await rejectsWith(driver({ clientKey: wrongClient }).ping(), { kind: 'auth', status: 401 });

    // A client key of a user who is not a root admin could not act on other users' servers.
    const userId = await owner();
    const plain = `ptlc_${'p'.repeat(11)}${'s'.repeat(32)}`;
    emulator.state.keys.set(plain.slice(0, 16), {
      identifier: plain.slice(0, 16),
      secret: plain.slice(16),
      type: 1,
      userId,
    });
    await rejectsWith(driver({ clientKey: plain }).ping(), {
      kind: 'forbidden',
      retryable: false,
      message: /root admin/,
    });
  });
});

describe('pterodactyl driver: provisioning (application API)', () => {
  test('ensureUser creates the user once and finds it again; a lost answer is found on the next call', async () => {
    const spec = {
      externalId: 'hp-acct-ensure',
      email: 'ensure@example.in',
      username: 'ensure',
      firstName: 'En',
      lastName: 'Sure',
    };
    const first = await ptero.ensureUser(spec);
    assert.deepEqual(await ptero.ensureUser(spec), first);
    assert.equal(calls('POST /api/application/users'), 1);
    const user = emulator.state.users.get(first.id);
    assert.equal(user?.externalId, 'hp-acct-ensure');
    assert.equal(user?.email, 'ensure@example.in');

    // The create happens but its answer is lost: the next call finds the user by external id.
    const lost = { ...spec, externalId: 'hp-acct-lost', email: 'lost@example.in', username: 'lost' };
    await emulator.setFaults({ loseNext: 'POST /api/application/users' });
    await rejectsWith(ptero.ensureUser(lost), { kind: 'unreachable', retryable: true });
    const again = await ptero.ensureUser(lost);
    assert.equal([...emulator.state.users.values()].filter((u) => u.externalId === 'hp-acct-lost').length, 1);
    assert.equal(emulator.state.users.get(again.id)?.externalId, 'hp-acct-lost');

    // An external id that only contains ours is not ours (the panel's filters match partially).
    const longer = await ptero.ensureUser({
      ...spec,
      externalId: 'hp-acct-ensure-2',
      email: 'ensure2@example.in',
      username: 'ensure2',
    });
    assert.notEqual(longer.id, first.id);
    assert.deepEqual(await ptero.ensureUser(spec), first);

    // Someone else's user holds the e-mail: the panel's 422 comes back with its fields.
    await rejectsWith(ptero.ensureUser({ ...spec, externalId: 'hp-acct-other', username: 'other' }), {
      kind: 'rejected',
      status: 422,
      retryable: false,
      fields: ['email'],
    });
  });

  test('createServer takes a free allocation, starts installing, and is found again instead of created twice', async () => {
    const userId = await owner();
    const spec = serverSpec(userId);
    const info = await ptero.createServer(spec);
    assert.equal(info.status, 'installing');
    assert.equal(info.externalId, spec.externalId);
    assert.equal(info.identifier.length, 8);
    assert.equal(info.suspended, false);
    const stored = emulator.state.servers.get(info.id);
    assert.ok(stored);
    assert.equal(stored.ownerId, userId);
    assert.equal(stored.eggId, 3);
    assert.equal(stored.memory, 2048);
    assert.equal(stored.cpu, 200);
    assert.equal(stored.disk, 10240);
    assert.equal(stored.io, 500);
    assert.equal(stored.backupLimit, 3);
    assert.equal(stored.databaseLimit, 2);
    assert.equal(stored.image, spec.dockerImage);
    assert.equal(stored.environment.SERVER_JARFILE, 'server.jar');
    assert.equal(emulator.state.allocations.get(stored.allocationId)?.serverId, info.id);

    assert.deepEqual(await ptero.findServer(spec.externalId), info);
    assert.equal(await ptero.findServer('hp-svc-none'), null);
    const again = await ptero.createServer(spec);
    assert.equal(again.id, info.id);
    assert.equal(calls('POST /api/application/servers'), 1, 'created once');

    // Install polling through server(): installing → null.
    const done = await waitFor(
      () => ptero.server(info),
      (s) => s.status !== 'installing',
      'the install',
    );
    assert.equal(done.status, null);
    assert.equal(emulator.state.servers.get(info.id)?.status, null);
  });

  test('createServer after a lost answer: the next call finds the server by its external id', async () => {
    const spec = serverSpec(await owner());
    await emulator.setFaults({ loseNext: 'POST /api/application/servers' });
    await rejectsWith(ptero.createServer(spec), { kind: 'unreachable', retryable: true });
    const info = await ptero.createServer(spec);
    const twins = [...emulator.state.servers.values()].filter((s) => s.externalId === spec.externalId);
    assert.equal(twins.length, 1);
    assert.equal(twins[0]?.id, info.id);
    assert.equal(calls('POST /api/application/servers'), 1);
  });

  test('servers created at once are each given the first free allocation; the ones refused take the next', async () => {
    // Found by kill-drills.test.ts: every create listed the same first free allocation, and the
    // panel's 422 on it failed the provisioning for good (refunded) instead of trying another.
    const specs = await Promise.all([1, 2, 3].map(async () => serverSpec(await owner())));
    const made = await Promise.all(specs.map((spec) => ptero.createServer(spec)));
    const allocations = made.map((info) => emulator.state.servers.get(info.id)?.allocationId);
    assert.equal(new Set(allocations).size, 3, `one allocation each: ${allocations}`);
    assert.ok(calls('POST /api/application/servers') > 3, 'a create was refused the allocation and tried again');
  });

  test('createServer without a free allocation is rejected without creating anything', async () => {
    const taken: number[] = [];
    for (const allocation of emulator.state.allocations.values()) {
      if (allocation.serverId === null) {
        allocation.serverId = 999_999;
        taken.push(allocation.id);
      }
    }
    try {
      await rejectsWith(ptero.createServer(serverSpec(await owner())), {
        kind: 'rejected',
        retryable: false,
        detail: /no free allocation/,
      });
      assert.equal(calls('POST /api/application/servers'), 0);
    } finally {
      for (const id of taken) {
        const allocation = emulator.state.allocations.get(id);
        if (allocation) allocation.serverId = null;
      }
    }
  });

  test('a failed install shows as install_failed; bad egg variables come back as fields', async () => {
    await emulator.setFaults({ failInstalls: 1 });
    const info = await ptero.createServer(serverSpec(await owner()));
    const failed = await waitFor(
      () => ptero.server(info),
      (s) => s.status !== 'installing',
      'the install',
    );
    assert.equal(failed.status, 'install_failed');

    await rejectsWith(
      ptero.createServer(
        serverSpec(await owner(), {
          environment: { SERVER_JARFILE: 'not a jar', MINECRAFT_VERSION: 'latest', BUILD_NUMBER: 'latest' },
        }),
      ),
      { kind: 'rejected', status: 422, fields: ['environment.SERVER_JARFILE'] },
    );
  });

  test('suspend, unsuspend, reinstall and delete (twice: gone is success)', async () => {
    const info = await installed();
    await ptero.suspend(info);
    let now = await ptero.server(info);
    assert.equal(now.suspended, true);
    assert.equal(now.status, 'suspended');
    // The client API refuses a suspended server with 409 and the panel's words.
    await rejectsWith(ptero.resources(info), {
      kind: 'conflict',
      status: 409,
      retryable: false,
      detail: /currently suspended/,
    });
    await ptero.unsuspend(info);
    now = await ptero.server(info);
    assert.equal(now.suspended, false);
    assert.equal(now.status, null);

    await ptero.reinstall(info);
    assert.equal((await ptero.server(info)).status, 'installing');
    await waitFor(
      () => ptero.server(info),
      (s) => s.status === null,
      'the reinstall',
    );

    await ptero.deleteServer(info);
    assert.equal(emulator.state.servers.has(info.id), false);
    await ptero.deleteServer(info);
    await rejectsWith(ptero.server(info), { kind: 'not_found', retryable: false });
    assert.equal(await ptero.findServer(info.externalId ?? ''), null);
  });

  test('a ref whose id now holds another server is not_found, and deleting it touches nothing', async () => {
    const info = await installed();
    const stale = { ...info, uuid: '00000000-0000-4000-8000-000000000000' };
    await rejectsWith(ptero.server(stale), { kind: 'not_found' });
    await ptero.deleteServer(stale);
    assert.ok(emulator.state.servers.has(info.id), 'the other server is still there');
  });
});

describe('pterodactyl driver: client API', () => {
  test('details, allocations, power, resources, command and activity', async () => {
    const info = await installed();
    const details = await ptero.details(info);
    assert.equal(details.identifier, info.identifier);
    assert.equal(details.uuid, info.uuid);
    assert.equal(details.status, null);
    assert.deepEqual(details.limits, { memory: 2048, swap: 0, disk: 10240, io: 500, cpu: 200 });
    assert.deepEqual(details.featureLimits, { databases: 2, allocations: 1, backups: 3 });
    assert.equal(details.allocations.length, 1);
    assert.equal(details.allocations[0]?.isDefault, true);
    assert.ok(details.sftp.port > 0);
    assert.deepEqual(await ptero.allocations(info), details.allocations);

    assert.equal((await ptero.resources(info)).state, 'offline');
    await ptero.writeFile(info, 'eula.txt', 'eula=true\n');
    await ptero.power(info, 'start');
    await waitFor(
      () => emulator.state.runtimeOf(info.id).state,
      (s) => s === 'running',
      'the start',
    );
    const usage = await waitFor(
      () => ptero.resources(info),
      (r) => r.state === 'running',
      'resources to say running',
    );
    assert.ok(usage.memoryBytes > 0);
    await ptero.command(info, 'say hello from the driver');
    assert.ok(emulator.state.runtimeOf(info.id).console.some((line) => line.includes('hello from the driver')));

    const page = await ptero.activity(info, 1, 2);
    assert.equal(page.page, 1);
    assert.equal(page.perPage, 2);
    assert.ok(page.items.length <= 2);
    assert.ok(page.total >= 2, 'power and command were logged');
    assert.ok(page.items.every((a) => typeof a.event === 'string' && a.event.startsWith('server:')));
    assert.ok(page.items.every((a) => typeof a.properties === 'object' && !Array.isArray(a.properties)));

    await ptero.power(info, 'stop');
    await waitFor(
      () => emulator.state.runtimeOf(info.id).state,
      (s) => s === 'offline',
      'the stop',
    );
  });

  test('rename, startup and variables', async () => {
    const info = await installed();
    await ptero.rename(info, 'Renamed', 'New description');
    assert.equal(emulator.state.servers.get(info.id)?.name, 'Renamed');
    assert.equal(emulator.state.servers.get(info.id)?.description, 'New description');
    await ptero.rename(info, 'Again', null);
    assert.equal(emulator.state.servers.get(info.id)?.name, 'Again');
    assert.equal(emulator.state.servers.get(info.id)?.description, 'New description', 'null keeps it');

    const startup = await ptero.startup(info);
    assert.ok(startup.variables.some((v) => v.envVariable === 'SERVER_JARFILE' && v.isEditable));
    assert.ok(!startup.variables.some((v) => v.envVariable === 'DL_PATH'), 'hidden variables stay hidden');
    assert.match(startup.rawStartupCommand, /\{\{SERVER_JARFILE\}\}/);
    assert.ok(Object.keys(startup.dockerImages).length > 0);

    const variable = await ptero.setVariable(info, 'SERVER_JARFILE', 'paper.jar');
    assert.equal(variable.serverValue, 'paper.jar');
    assert.equal(emulator.state.servers.get(info.id)?.environment.SERVER_JARFILE, 'paper.jar');
    const refused = await rejectsWith(ptero.setVariable(info, 'SERVER_JARFILE', 'no jar'), {
      kind: 'rejected',
      status: 422,
    });
    assert.ok(Object.keys(refused.fields ?? {}).length > 0, 'the failing field is named');
    await rejectsWith(ptero.setVariable(info, 'NOPE', 'x'), { kind: 'rejected', status: 400, detail: /./ });
  });

  test('files: write, read (capped), list, folders, rename, copy, compress, decompress, delete, URLs', async () => {
    const info = await installed();
    await ptero.writeFile(info, 'notes/hello.txt', 'hello\nworld\n');
    assert.equal(fileOf(info, 'notes/hello.txt')?.content.toString(), 'hello\nworld\n');
    assert.equal((await ptero.readFile(info, 'notes/hello.txt', 1024)).toString(), 'hello\nworld\n');
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    await ptero.writeFile(info, 'bin.dat', bytes);
    assert.deepEqual(await ptero.readFile(info, 'bin.dat', 100), bytes);

    // Larger than asked: exactly maxBytes + 1 bytes come back, the rest is never read.
    await ptero.writeFile(info, 'big.txt', 'x'.repeat(100_000));
    const capped = await ptero.readFile(info, 'big.txt', 10);
    assert.equal(capped.length, 11);

    const root = await ptero.listFiles(info, '/');
    assert.ok(root.some((f) => f.name === 'notes' && !f.isFile && f.mimetype === 'inode/directory'));
    const inNotes = await ptero.listFiles(info, '/notes');
    assert.deepEqual(
      inNotes.map((f) => [f.name, f.size, f.isFile]),
      [['hello.txt', 12, true]],
    );
    assert.match(inNotes[0]?.mode ?? '', /^-rw/);

    await ptero.createFolder(info, '/', 'world');
    assert.equal(fileOf(info, 'world')?.dir, true);
    await ptero.renameFiles(info, '/notes', [{ from: 'hello.txt', to: 'renamed.txt' }]);
    assert.equal(fileOf(info, 'notes/hello.txt'), undefined);
    assert.ok(fileOf(info, 'notes/renamed.txt'));
    await ptero.copyFile(info, 'notes/renamed.txt');
    assert.ok(fileOf(info, 'notes/renamed copy.txt'));

    const archive = await ptero.compressFiles(info, '/notes', ['renamed.txt', 'renamed copy.txt']);
    assert.match(archive.name, /\.tar\.gz$/);
    assert.equal(archive.isFile, true);
    assert.ok(fileOf(info, `notes/${archive.name}`));
    await ptero.deleteFiles(info, '/notes', ['renamed.txt', 'renamed copy.txt']);
    assert.equal(fileOf(info, 'notes/renamed.txt'), undefined);
    await ptero.decompressFile(info, '/notes', archive.name);
    assert.equal(fileOf(info, 'notes/renamed.txt')?.content.toString(), 'hello\nworld\n');

    assert.match(await ptero.uploadUrl(info), /^http:\/\/127\.0\.0\.1:\d+\/upload\/file\?token=/);
    assert.match(
      await ptero.downloadUrl(info, 'notes/renamed.txt'),
      /^http:\/\/127\.0\.0\.1:\d+\/download\/file\?token=/,
    );
    await rejectsWith(ptero.readFile(info, 'missing.txt', 10), { kind: 'not_found' });
  });

  test('uploadFile streams a few MiB to Wings as multipart, known size or chunked', async () => {
    const info = await installed();
    const size = 5 * 1024 * 1024 + 123;
    const chunk = 64 * 1024;
    let produced = 0;
    /** Bytes made as they are read: nothing holds the whole file. */
    const source = () =>
      Readable.from(
        (function* () {
          for (let at = 0; at < size; at += chunk) {
            const part = Buffer.alloc(Math.min(chunk, size - at));
            for (let i = 0; i < part.length; i++) part[i] = (at + i) % 251;
            produced += part.length;
            yield part;
          }
        })(),
      );
    const expected = Buffer.alloc(size);
    for (let i = 0; i < size; i++) expected[i] = i % 251;

    await ptero.createFolder(info, '/', 'uploads');
    await ptero.uploadFile(info, '/uploads', 'world "one".bin', source(), size);
    assert.equal(produced, size);
    const stored = fileOf(info, 'uploads/world "one".bin');
    assert.ok(stored, `uploaded as ${[...(emulator.state.files.get(info.id)?.keys() ?? [])].join(', ')}`);
    assert.equal(stored.content.length, size);
    assert.equal(sha(stored.content), sha(expected));

    await ptero.uploadFile(info, '/uploads', 'chunked.bin', source(), null);
    assert.equal(sha(fileOf(info, 'uploads/chunked.bin')?.content ?? Buffer.alloc(0)), sha(expected));

    // A body that does not match the size announced is refused before it is sent as complete.
    await rejectsWith(ptero.uploadFile(info, '/uploads', 'short.bin', Readable.from([Buffer.alloc(10)]), 20), {
      kind: 'rejected',
      retryable: false,
    });
    assert.equal(fileOf(info, 'uploads/short.bin'), undefined);
    await rejectsWith(ptero.uploadFile(info, '/uploads', 'bad\nname', Readable.from([]), 0), { kind: 'rejected' });
  });

  test('backups: create, list with count, restore, download URL, delete; the limit is a 400 with its text', async () => {
    const info = await installed({ featureLimits: { databases: 0, backups: 1, allocations: 1 } });
    await ptero.writeFile(info, 'keep.txt', 'before');
    const backup = await ptero.createBackup(info, { name: 'nightly', ignored: ['*.log', 'cache/'], locked: false });
    assert.equal(backup.name, 'nightly');
    assert.deepEqual(backup.ignoredFiles, ['*.log', 'cache/']);
    assert.equal(backup.completedAt, null);
    const listed = await waitFor(
      () => ptero.listBackups(info),
      (l) => l.backups[0]?.completedAt !== null,
      'the backup',
    );
    assert.equal(listed.count, 1);
    assert.equal(listed.backups.length, 1);
    assert.equal(listed.backups[0]?.isSuccessful, true);
    assert.equal(listed.backups[0]?.uuid, backup.uuid);

    await rejectsWith(ptero.createBackup(info, { name: null, ignored: [], locked: false }), {
      kind: 'rejected',
      status: 400,
      retryable: false,
      detail: /reached its limit of 1 backups/,
    });

    assert.match(
      await ptero.backupDownloadUrl(info, backup.uuid),
      /^http:\/\/127\.0\.0\.1:\d+\/download\/backup\?token=/,
    );
    await ptero.writeFile(info, 'keep.txt', 'after');
    await ptero.restoreBackup(info, backup.uuid, true);
    await waitFor(
      () => ptero.server(info),
      (s) => s.status === null,
      'the restore',
    );
    assert.equal(fileOf(info, 'keep.txt')?.content.toString(), 'before');

    await ptero.deleteBackup(info, backup.uuid);
    assert.deepEqual((await ptero.listBackups(info)).backups, []);
  });

  test('backups: the panel throttle (429 with a long Retry-After) is not waited for', async () => {
    const info = await installed({ featureLimits: { databases: 0, backups: 10, allocations: 1 } });
    await ptero.createBackup(info, { name: 'a', ignored: [], locked: false });
    await ptero.createBackup(info, { name: 'b', ignored: [], locked: false });
    const error = await rejectsWith(ptero.createBackup(info, { name: 'c', ignored: [], locked: false }), {
      kind: 'rate_limited',
      status: 429,
      retryable: true,
      detail: /Only 2 backups/,
    });
    assert.ok((error.retryAfterSeconds ?? 0) > 5);
    assert.equal(calls('POST /api/client/servers/:/backups'), 3, 'not retried');
  });

  test('databases: create and rotate show the password, the list does not; delete', async () => {
    const info = await installed();
    const db = await ptero.createDatabase(info, { database: 'world', remote: '%' });
    assert.match(db.name, new RegExp(`^s${info.id}_world$`));
    assert.equal(db.connectionsFrom, '%');
    assert.ok(db.password && db.password.length >= 16);
    assert.ok(db.host.address && db.host.port > 0);
    const listed = await ptero.listDatabases(info);
    assert.equal(listed.length, 1);
    assert.equal(listed[0]?.id, db.id);
    assert.equal(listed[0]?.password, null);
    const rotated = await ptero.rotateDatabasePassword(info, db.id);
    assert.ok(rotated.password);
    assert.notEqual(rotated.password, db.password);
    await rejectsWith(ptero.createDatabase(info, { database: 'x', remote: '%' }), { kind: 'rejected', status: 422 });
    await ptero.deleteDatabase(info, db.id);
    assert.deepEqual(await ptero.listDatabases(info), []);
  });

  test('schedules: created with tasks, updated (tasks replaced or kept), executed, deleted', async () => {
    const info = await installed();
    const cron = { minute: '0', hour: '4', dayOfMonth: '*', month: '*', dayOfWeek: '*' };
    const schedule = await ptero.createSchedule(
      info,
      { name: 'nightly', cron, isActive: true, onlyWhenOnline: false },
      [
        { action: 'command', payload: 'say restarting', timeOffset: 0, continueOnFailure: false },
        { action: 'power', payload: 'restart', timeOffset: 30, continueOnFailure: true },
      ],
    );
    assert.equal(schedule.name, 'nightly');
    assert.deepEqual(schedule.cron, cron);
    assert.deepEqual(
      schedule.tasks.map((t) => [t.sequenceId, t.action, t.payload, t.timeOffset, t.continueOnFailure]),
      [
        [1, 'command', 'say restarting', 0, false],
        [2, 'power', 'restart', 30, true],
      ],
    );
    assert.equal(emulator.state.schedules.get(schedule.id)?.tasks.length, 2);
    assert.deepEqual(
      (await ptero.listSchedules(info)).map((s) => [s.id, s.tasks.length]),
      [[schedule.id, 2]],
    );

    const replaced = await ptero.updateSchedule(
      info,
      schedule.id,
      { name: 'weekly', cron: { ...cron, dayOfWeek: '0' }, isActive: false, onlyWhenOnline: true },
      [{ action: 'backup', payload: '', timeOffset: 0, continueOnFailure: false }],
    );
    assert.equal(replaced.name, 'weekly');
    assert.equal(replaced.isActive, false);
    assert.deepEqual(
      replaced.tasks.map((t) => t.action),
      ['backup'],
    );
    const stored = emulator.state.schedules.get(schedule.id);
    assert.equal(stored?.cron.dayOfWeek, '0');
    assert.deepEqual(
      stored?.tasks.map((t) => t.action),
      ['backup'],
    );

    const kept = await ptero.updateSchedule(
      info,
      schedule.id,
      { name: 'weekly2', cron, isActive: true, onlyWhenOnline: false },
      null,
    );
    assert.equal(kept.name, 'weekly2');
    assert.deepEqual(
      emulator.state.schedules.get(schedule.id)?.tasks.map((t) => t.action),
      ['backup'],
    );

    await ptero.executeSchedule(info, schedule.id);
    await rejectsWith(
      ptero.createSchedule(
        info,
        { name: 'bad', cron: { ...cron, minute: 'nope' }, isActive: true, onlyWhenOnline: false },
        [],
      ),
      { kind: 'rejected', status: 400, detail: /cron/ },
    );
    await ptero.deleteSchedule(info, schedule.id);
    assert.equal(emulator.state.schedules.has(schedule.id), false);
    assert.deepEqual(await ptero.listSchedules(info), []);
  });

  test('a task the panel refuses removes the half-made schedule', async () => {
    const info = await installed();
    const cron = { minute: '*', hour: '*', dayOfMonth: '*', month: '*', dayOfWeek: '*' };
    await rejectsWith(
      ptero.createSchedule(info, { name: 'half', cron, isActive: true, onlyWhenOnline: false }, [
        { action: 'command', payload: 'say one', timeOffset: 0, continueOnFailure: false },
        { action: 'command', payload: 'say two', timeOffset: 5000, continueOnFailure: false },
      ]),
      { kind: 'rejected', status: 422, fields: ['time_offset'] },
    );
    assert.deepEqual(await ptero.listSchedules(info), []);
  });

  test('subusers: invite, update, list, remove', async () => {
    const info = await installed();
    const invited = await ptero.inviteSubuser(info, 'friend@example.in', ['control.console', 'file.read']);
    assert.equal(invited.email, 'friend@example.in');
    assert.ok(invited.permissions.includes('control.console'));
    assert.ok(invited.permissions.includes('websocket.connect'), 'the panel always adds it');
    const updated = await ptero.updateSubuser(info, invited.uuid, ['backup.read']);
    assert.ok(updated.permissions.includes('backup.read'));
    assert.ok(!updated.permissions.includes('file.read'));
    const listed = await ptero.listSubusers(info);
    assert.deepEqual(
      listed.map((s) => s.uuid),
      [invited.uuid],
    );
    assert.equal(listed[0]?.twoFactor, false);
    await rejectsWith(ptero.inviteSubuser(info, 'friend@example.in', ['file.read']), { kind: 'rejected', status: 400 });
    await ptero.removeSubuser(info, invited.uuid);
    assert.deepEqual(await ptero.listSubusers(info), []);
  });
});

/** Open a console through the driver; collects what it passes on. */
function dial(panel: GamePanel, ticket: Parameters<GamePanel['openConsole']>[0]) {
  const seen: { ready: number; refused: number; frames: { event: string; args: string[] }[] } = {
    ready: 0,
    refused: 0,
    frames: [],
  };
  const events: ConsoleEvents = {
    ready: () => {
      seen.ready++;
    },
    refused: () => {
      seen.refused++;
    },
    output: (data) => {
      seen.frames.push(JSON.parse(data.toString()) as { event: string; args: string[] });
    },
  };
  const socket = panel.openConsole(ticket, events, { maxPayload: 1024 * 1024 });
  return { socket, seen };
}

const closed = (socket: WebSocket) =>
  socket.readyState === WebSocket.CLOSED
    ? Promise.resolve()
    : new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.terminate();
      });

describe('pterodactyl driver: console', () => {
  test('auth, ready, a command and its output; handshake frames never reach the caller', async () => {
    const info = await running();
    const credentials = await ptero.consoleCredentials(info);
    assert.match(credentials.socket, new RegExp(`/api/servers/${info.uuid}/ws$`));
    const { socket, seen } = dial(ptero, { kind: 'game', server: info, ...credentials });
    socket.on('error', () => {});
    await waitFor(
      () => seen.ready,
      (r) => r === 1,
      'ready',
    );
    socket.send(JSON.stringify({ event: 'send command', args: ['say hello'] }));
    await waitFor(
      () => seen.frames,
      (f) => f.some((x) => x.event === 'console output' && x.args.join('').includes('hello')),
      'the command output',
    );
    assert.ok(seen.frames.some((f) => f.event === 'status'));
    assert.ok(!seen.frames.some((f) => f.event === 'auth success' || f.event === 'jwt error'));
    await closed(socket);
  });

  test('token expiring / expired: fresh credentials and auth again on the same socket', async () => {
    const short = await startPterodactylEmulator({
      installDelayMs: 20,
      startDelayMs: 20,
      tokenTtlSeconds: 2,
      tokenCheckMs: 100,
    });
    const panel = createPterodactylPanel({
      endpoint: short.url,
      appKey: short.appKey,
      clientKey: short.clientKey,
      panelNode: short.panelNodeId,
      requestTimeoutMs: 2000,
    });
    try {
      const { id } = await panel.ensureUser({
        externalId: 'hp-acct-tok',
        email: 'tok@example.in',
        username: 'tok',
        firstName: 'T',
        lastName: 'K',
      });
      const info = await panel.createServer(serverSpec(id));
      await waitFor(
        () => panel.server(info),
        (s) => s.status === null,
        'the install',
      );
      await panel.writeFile(info, 'eula.txt', 'eula=true\n');
      await panel.power(info, 'start');
      await waitFor(
        () => short.state.runtimeOf(info.id).state,
        (s) => s === 'running',
        'the start',
      );
      const { socket, seen } = dial(panel, { kind: 'game', server: info, ...(await panel.consoleCredentials(info)) });
      socket.on('error', () => {});
      await waitFor(
        () => seen.ready,
        (r) => r === 1,
        'ready',
      );
      const before = short.calls.get('GET /api/client/servers/:/websocket') ?? 0;
      // Past the first token's lifetime the session still works: the driver renewed it.
      await waitFor(
        () => short.calls.get('GET /api/client/servers/:/websocket') ?? 0,
        (c) => c >= before + 2,
        'renewals',
      );
      await new Promise((r) => setTimeout(r, 2500));
      socket.send(JSON.stringify({ event: 'send command', args: ['say still here'] }));
      await waitFor(
        () => seen.frames,
        (f) => f.some((x) => x.event === 'console output' && x.args.join('').includes('still here')),
        'output after renewal',
      );
      assert.equal(seen.ready, 1, 'ready only once');
      assert.ok(
        !seen.frames.some((f) => ['auth success', 'token expiring', 'token expired', 'jwt error'].includes(f.event)),
      );
      assert.equal(socket.readyState, WebSocket.OPEN);
      await closed(socket);

      // The panel refuses fresh credentials: once the token has expired, the driver ends the session.
      const second = dial(panel, { kind: 'game', server: info, ...(await panel.consoleCredentials(info)) });
      second.socket.on('error', () => {});
      await waitFor(
        () => second.seen.ready,
        (r) => r === 1,
        'ready',
      );
      await short.setFaults({ forbidNext: 1_000_000 });
      const code = await new Promise<number>((resolve) => second.socket.once('close', (c) => resolve(c)));
      assert.equal(code, 1011);
      assert.ok(!second.seen.frames.some((f) => f.event === 'token expired' || f.event === 'jwt error'));
    } finally {
      panel.close();
      await short.stop();
    }
  });

  test('a refused token calls refused (jwt error or daemon error); only game tickets are accepted', async () => {
    const info = await running();
    const credentials = await ptero.consoleCredentials(info);
    const tokens = [
      // A node JWT of this server without websocket.connect (an upload URL's): jwt error.
      new URL(await ptero.uploadUrl(info)).searchParams.get('token') ?? '',
      // Not a JWT at all: Wings answers a daemon error.
      'not.a.jwt',
    ];
    for (const token of tokens) {
      const { socket, seen } = dial(ptero, { kind: 'game', server: info, socket: credentials.socket, token });
      socket.on('error', () => {});
      await waitFor(
        () => seen.refused,
        (r) => r === 1,
        'the refusal',
      );
      assert.equal(seen.ready, 0);
      assert.deepEqual(seen.frames, [], 'the refusal is not passed on');
      await closed(socket);
    }

    assert.throws(
      () =>
        ptero.openConsole(
          { kind: 'vnc', ticket: 't', port: 5900, user: 'u', password: null, websocketPath: '/x' },
          { ready() {}, output() {}, refused() {} },
          { maxPayload: 1024 },
        ),
      (error: unknown) => error instanceof UpstreamError && error.kind === 'rejected',
    );
  });
});

// Last: the emulator's console cannot be dialed again once wingsDown was set (ptero-discrepancies.md).
describe('pterodactyl driver: failures', () => {
  test('403, 404, 401 and 422 map to forbidden, not_found, auth and rejected with fields', async () => {
    const info = await installed();
    await emulator.setFaults({ forbidNext: 1 });
    await rejectsWith(ptero.details(info), {
      kind: 'forbidden',
      status: 403,
      retryable: false,
      detail: /unauthorized/,
    });
    await rejectsWith(ptero.details({ ...info, identifier: 'zzzzzzzz' }), { kind: 'not_found', status: 404 });
    const wrongClient = `ptlc_${'q'.repeat(11)}${CANARY}${'r'.repeat(32 - CANARY.length)}`;
    await rejectsWith(driver({ clientKey: wrongClient }).details(info), { kind: 'auth', status: 401 });
    await rejectsWith(ptero.createFolder(info, '/', ''), { kind: 'rejected', status: 422, fields: ['name'] });
  });

  test('429: waited out and retried (at most twice), then rate_limited', async () => {
    const info = await installed();
    await emulator.setFaults({ rateLimitNext: 1 });
    assert.equal((await ptero.details(info)).uuid, info.uuid);
    assert.equal(calls('GET /api/client/servers/:'), 2, 'the call was sent again after Retry-After');

    emulator.reset();
    await emulator.setFaults({ rateLimitNext: 3 });
    await rejectsWith(ptero.details(info), {
      kind: 'rate_limited',
      status: 429,
      retryable: true,
      retryAfterSeconds: 2,
    });
    assert.equal(calls('GET /api/client/servers/:'), 3, 'one call and two retries');
  });

  test('5xx, a dead panel, a hanging one and Wings down are retryable unreachable / timeout', async () => {
    const info = await installed();
    await emulator.setFaults({ errorRate: 1 });
    await rejectsWith(ptero.details(info), { kind: 'unreachable', status: 500, retryable: true });
    await rejectsWith(ptero.server(info), { kind: 'unreachable', status: 500, retryable: true });
    emulator.reset();

    await emulator.setFaults({ wingsDown: true });
    await rejectsWith(ptero.resources(info), { kind: 'unreachable', status: 504, retryable: true });
    emulator.reset();

    await emulator.setFaults({ down: true });
    await rejectsWith(ptero.details(info), { kind: 'unreachable', retryable: true });
    emulator.reset();

    await emulator.setFaults({ hang: true });
    await rejectsWith(driver({ requestTimeoutMs: 200 }).details(info), { kind: 'timeout', retryable: true });
    emulator.reset();
    assert.equal((await ptero.details(info)).uuid, info.uuid, 'works again');
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

describe('pterodactyl driver: transport', () => {
  test('a panel that echoes the keys in its errors: every text is redacted', async () => {
    const echo = await listen((req, res) => {
      const said = `bad key ${req.headers.authorization ?? ''}`;
      res.writeHead(req.url?.includes('/users') ? 422 : 400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          errors: [
            { code: 'DisplayException', status: '400', detail: said, meta: { source_field: 'email', rule: 'x' } },
          ],
        }),
      );
    });
    try {
      const panel = driver({ endpoint: echo.url });
      const e = await rejectsWith(panel.details({ id: 1, uuid: 'u', identifier: 'abcdefgh' }), {
        kind: 'rejected',
        status: 400,
      });
      assert.match(e.detail ?? '', /bad key Bearer \*\*\*/);
      const f = await rejectsWith(
        panel.ensureUser({ externalId: 'x', email: 'e@x.in', username: 'x', firstName: 'x', lastName: 'x' }),
        { kind: 'rejected', status: 422, fields: ['email'] },
      );
      assert.match(f.fields?.email ?? '', /\*\*\*/);
    } finally {
      await echo.stop();
    }
  });

  test('stream: the body is produced only as fast as the node takes it (100 MiB, bounded)', async () => {
    const total = 100 * 1024 * 1024;
    let received = 0;
    let produced = 0;
    let gap = 0;
    const sink = await listen((req, res) => {
      // Read nothing for a while: a buffering client would run ahead meanwhile.
      req.pause();
      setTimeout(() => {
        req.on('data', (chunk: Buffer) => {
          received += chunk.length;
        });
        req.on('end', () => res.end('{}'));
        req.resume();
      }, 300);
    });
    const http = createHttpClient({ timeoutMs: 10_000, label: 'sink' });
    try {
      const chunk = Buffer.alloc(256 * 1024, 7);
      async function* body() {
        for (let sent = 0; sent < total; sent += chunk.length) {
          produced += chunk.length;
          gap = Math.max(gap, produced - received);
          yield chunk;
        }
      }
      const res = await http.stream({
        method: 'POST',
        url: new URL(`${sink.url}/upload`),
        headers: {},
        body: body(),
        length: total,
      });
      assert.equal(res.status, 200);
      assert.equal(received, total);
      assert.ok(gap < 32 * 1024 * 1024, `at most socket buffers ahead of the reader, not the body (${gap} bytes)`);
    } finally {
      http.close();
      await sink.stop();
    }
  });

  test('send with readLimit stops reading a long answer (the rest is never taken)', async () => {
    let finished = false;
    const big = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const block = Buffer.alloc(64 * 1024, 65);
      let left = 64 * 1024 * 1024;
      const more = () => {
        while (left > 0) {
          left -= block.length;
          if (!res.write(block)) return void res.once('drain', more);
        }
        res.end(() => {
          finished = true;
        });
      };
      res.on('close', () => {
        left = 0;
      });
      more();
    });
    const http = createHttpClient({ timeoutMs: 10_000, label: 'big' });
    try {
      const res = await http.send({ method: 'GET', url: new URL(`${big.url}/contents`), headers: {}, readLimit: 1025 });
      assert.equal(res.bytes.length, 1025);
      assert.equal(res.truncated, true);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(finished, false, 'the 64 MiB answer was never read to its end');
    } finally {
      http.close();
      await big.stop();
    }
  });
});

describe('pterodactyl driver: what a client may send to Wings', () => {
  test('player events pass; auth, unknown events, binary and non-JSON frames are dropped', () => {
    const frame = (value: unknown) => Buffer.from(JSON.stringify(value));
    for (const event of ['send command', 'set state', 'send logs', 'send stats']) {
      assert.equal(acceptClientFrame(frame({ event, args: [] }), false), true, event);
    }
    assert.equal(acceptClientFrame(frame({ event: 'auth', args: ['forged'] }), false), false);
    assert.equal(acceptClientFrame(frame({ event: 'token expiring' }), false), false);
    assert.equal(acceptClientFrame(frame({ event: 'send command', args: ['x'] }), true), false, 'binary');
    assert.equal(acceptClientFrame(Buffer.from('say hello'), false), false, 'not JSON');
    assert.equal(acceptClientFrame(frame(['send command']), false), false);
  });
});
