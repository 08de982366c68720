// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Redfish driver against emulated BMCs over real HTTP: every BareMetal method with what the
// machine holds afterwards (power, virtual media, boot override, install parameters, disks),
// member ids discovered through @odata links (random ids, the CD anywhere in the media
// collection), sessions renewed after they expire and deleted on close, If-Match on PATCH,
// task monitors (the emulator's, and a hand-made BMC's other shapes: a monitor that vanishes,
// one that answers an error, Retry-After), idempotency after lost answers (insert media and
// reset twice), and how failures map to UpstreamError (401, 404, 400 with ExtendedInfo →
// rejected with detail and fields, 503 Retry-After, BMC down, hanging, failed tasks), with the
// BMC password never in an error.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type RedfishEmulator, startRedfishEmulator } from '../../emulators/src/redfish/index.ts';
import type { BareMetal, InstallSpec } from '../src/upstreams/bare-metal.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import { RedfishClient } from '../src/upstreams/redfish/client.ts';
import { sha512Crypt } from '../src/upstreams/redfish/crypt.ts';
import { classify, fieldOf } from '../src/upstreams/redfish/errors.ts';
import { createRedfishMachine, parseRedfishNode, type RedfishConfig } from '../src/upstreams/redfish/index.ts';
import { settle } from '../src/upstreams/redfish/tasks.ts';

/** Part of the BMC password: no error text may ever contain it. */
const CANARY = 'CANARYBMCSECRET';
const PASSWORD = `${CANARY}-pw-9xQ`;
const ROOT_PASSWORD = 'RootPw-CANARY2-77aa';
const IMAGE = 'http://images.hostplane.test/debian-12-amd64.iso';
const OTHER_IMAGE = 'http://images.hostplane.test/rocky-9.iso';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0bq6bYjv0a1Jt3ApVxB3Yw1jHn7N0Hn0kq8k1V8uY ops@example';

let emu: RedfishEmulator;
const made: BareMetal[] = [];

function driver(index = 0, overrides: Partial<RedfishConfig> = {}): BareMetal {
  const machine = createRedfishMachine({
    endpoint: emu.machines[index]!.url,
    username: emu.username,
    password: emu.password,
    requestTimeoutMs: 2000,
    taskTimeoutMs: 20_000,
    pollIntervalMs: 10,
    ...overrides,
  });
  made.push(machine);
  return machine;
}

before(async () => {
  emu = await startRedfishEmulator({
    machines: 3,
    ids: 'random',
    requireIfMatch: true,
    password: PASSWORD,
    installDelayMs: 150,
    powerDelayMs: 30,
    taskDelayMs: 30,
  });
});
after(async () => {
  for (const m of made) m.close();
  await emu.stop();
});
beforeEach(() => emu.reset({ machines: true }));

const spec = (overrides: Partial<InstallSpec> = {}): InstallSpec => ({
  imageUrl: IMAGE,
  hostname: 'bm-1.example.in',
  sshKeys: [KEY],
  password: ROOT_PASSWORD,
  ipv4: { address: '203.0.113.10', prefix: 24, gateway: '203.0.113.1' },
  ...overrides,
});

const machineState = (index = 0) => emu.state.machines[index]!;
const cdOf = (index = 0) => machineState(index).media.find((s) => s.mediaTypes.includes('CD'))!;
const actionsLike = (prefix: string, index = 0) => machineState(index).actions.filter((a) => a.startsWith(prefix));

/** Poll until `check` holds (a hang guard, not a timing assertion). */
async function waitFor<T>(read: () => Promise<T> | T, check: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 1500; i++) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Rejects with an UpstreamError that has these properties, and no secret in any of its texts. */
async function rejectsWith(
  promise: Promise<unknown>,
  expected: {
    kind: string;
    retryable?: boolean;
    status?: number;
    message?: RegExp;
    detail?: RegExp;
    reason?: string;
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
  if (expected.reason !== undefined) assert.equal(e.reason, expected.reason, e.message);
  if (expected.retryAfterSeconds !== undefined) assert.equal(e.retryAfterSeconds, expected.retryAfterSeconds);
  for (const text of [e.message, e.detail ?? '', ...Object.values(e.fields ?? {})]) {
    assert.ok(!text.includes(CANARY), `a secret leaked: ${text}`);
  }
  return e;
}

/** Install on machine `index` and wait until the machine reports it done. */
async function installed(machine: BareMetal, index = 0): Promise<void> {
  await machine.startInstall(spec());
  await waitFor(
    () => machine.installState(),
    (s) => s !== 'installing',
    'the install',
  );
  assert.equal(machineState(index).installState, 'done');
}

describe('redfish driver: configuration, ping, discovery', () => {
  test('parseRedfishNode reads credentials, settings and timing', () => {
    const base = { name: 'bm1', endpoint: 'https://bmc-r12.example.in', settings: {} };
    const config = parseRedfishNode(
      { ...base, credentials: { username: 'root', password: PASSWORD } },
      { requestTimeoutMs: 5000, taskTimeoutMs: 60_000, pollIntervalMs: 7 },
    );
    assert.deepEqual(config, {
      metricsNode: 'bm1',
      endpoint: 'https://bmc-r12.example.in',
      username: 'root',
      password: PASSWORD,
      tls: { insecure: false },
      requestTimeoutMs: 5000,
      taskTimeoutMs: 60_000,
      pollIntervalMs: 7,
    });
    const custom = parseRedfishNode(
      { ...base, credentials: {}, settings: { tls_insecure: true, tls_ca: 'PEM', system: 'System.Embedded.1' } },
      {},
    );
    assert.deepEqual(custom.tls, { insecure: true, ca: 'PEM' });
    assert.equal(custom.system, 'System.Embedded.1');
    assert.equal(custom.password, '');
  });

  test('a configuration that cannot work fails every call (not the creation), without echoing the password', async () => {
    const cases: [Partial<RedfishConfig>, RegExp][] = [
      [{ endpoint: 'ftp://bmc' }, /http\(s\) URL/],
      [{ endpoint: 'not a url' }, /not a URL/],
      [{ endpoint: `https://root:${CANARY}@bmc` }, /must not contain credentials/],
      [{ endpoint: 'https://bmc/redfish/v1' }, /without a path/],
      [{ username: '' }, /username is empty/],
      [{ password: '' }, /password is empty/],
    ];
    for (const [overrides, message] of cases) {
      const machine = driver(0, overrides);
      await rejectsWith(machine.ping(), { kind: 'rejected', retryable: false, message });
      await rejectsWith(machine.wipe(), { kind: 'rejected', message });
    }
    assert.equal(emu.calls.size, 0, 'nothing was sent');
  });

  test('ping answers the firmware and Redfish version; a wrong password is auth, never echoed', async () => {
    const machine = driver();
    assert.deepEqual(await machine.ping(), { version: 'Hostplane Emulated BMC 7.10.30.00 (Redfish 1.17.0)' });
    assert.equal(emu.calls.get('Sessions'), 1);
    await rejectsWith(driver(0, { password: `${CANARY}-wrong` }).ping(), {
      kind: 'auth',
      status: 401,
      retryable: false,
    });
  });

  test('machine() follows the links to random member ids and reads the hardware', async () => {
    const machine = driver(1);
    const info = await machine.machine();
    const m = machineState(1);
    assert.equal(info.id, m.systemId);
    assert.match(info.id, /^sys-[0-9a-f]{8}$/);
    assert.equal(info.serialNumber, m.serial);
    assert.equal(info.manufacturer, 'Hostplane Emulated Hardware');
    assert.equal(info.model, 'HP-BM1 Rack Server');
    assert.equal(info.power, 'stopped');
    assert.equal(info.health, 'OK');
    assert.equal(info.cpus, 2);
    assert.equal(info.memoryGiB, 64);
    assert.deepEqual(
      info.macs,
      m.nics.map((n) => n.mac),
    );
    assert.ok(info.macs.every((mac) => /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(mac)));
  });

  test('the system setting picks a system by Id; an unknown one is not_found', async () => {
    const id = machineState(0).systemId;
    assert.equal((await driver(0, { system: id }).machine()).id, id);
    assert.equal((await driver(0, { system: `/redfish/v1/Systems/${id}` }).machine()).id, id);
    await rejectsWith(driver(0, { system: 'System.Embedded.1' }).machine(), { kind: 'not_found', retryable: false });
  });

  test('bare metal has no console', () => {
    assert.throws(
      () =>
        driver().openConsole(
          { kind: 'vnc', ticket: 't', port: 1, user: 'u', password: null, websocketPath: '/' },
          { ready() {}, output() {}, refused() {} },
          { maxPayload: 1024 },
        ),
      (error: unknown) => error instanceof UpstreamError && error.kind === 'rejected',
    );
  });
});

describe('redfish driver: sessions', () => {
  test('concurrent first calls log in once; an expired session is renewed once, transparently', async () => {
    const machine = driver();
    await Promise.all([machine.power(), machine.machine(), machine.power()]);
    assert.equal(emu.calls.get('Sessions'), 1);
    emu.expireSessions();
    assert.equal(await machine.power(), 'stopped');
    assert.equal(emu.calls.get('Sessions'), 2);
    // Long enough that the renewed session is not itself idle past it before its first use on a
    // loaded machine (20 ms was not).
    await emu.setFaults({ sessionTimeoutMs: 500 });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await machine.power(), 'stopped');
    assert.equal(emu.calls.get('Sessions'), 3);
    assert.equal(emu.sessionCount(0), 1);
  });

  test('close() deletes the session', async () => {
    const machine = driver();
    await machine.power();
    assert.equal(emu.sessionCount(0), 1);
    machine.close();
    await waitFor(
      () => emu.sessionCount(0),
      (n) => n === 0,
      'the session to be deleted',
    );
    assert.equal(emu.calls.get('DELETE Session'), 1);
    await rejectsWith(machine.power(), { kind: 'rejected', message: /closed/ });
  });
});

describe('redfish driver: power', () => {
  test('reset waits for the power state, and sends nothing when the machine is already there', async () => {
    const machine = driver();
    assert.equal(await machine.power(), 'stopped');
    await machine.reset('On');
    assert.equal(machineState().power, 'On');
    assert.equal(await machine.power(), 'running');
    await machine.reset('On');
    assert.equal(actionsLike('ComputerSystem.Reset').length, 1);
    await machine.reset('GracefulRestart');
    assert.equal(machineState().power, 'On');
    assert.equal(machineState().boots, 2);
    await machine.reset('PowerCycle');
    assert.equal(machineState().boots, 3);
    await machine.reset('ForceRestart');
    assert.equal(machineState().boots, 4);
    await machine.reset('GracefulShutdown');
    assert.equal(machineState().power, 'Off');
    await machine.reset('ForceOff');
    await machine.reset('GracefulShutdown');
    // A restart of a machine that is off powers it on.
    await machine.reset('ForceRestart');
    assert.equal(machineState().power, 'On');
    await machine.reset('ForceOff');
    assert.equal(machineState().power, 'Off');
    assert.deepEqual(actionsLike('ComputerSystem.Reset'), [
      'ComputerSystem.Reset On',
      'ComputerSystem.Reset GracefulRestart',
      'ComputerSystem.Reset PowerCycle',
      'ComputerSystem.Reset ForceRestart',
      'ComputerSystem.Reset GracefulShutdown',
      'ComputerSystem.Reset On',
      'ComputerSystem.Reset ForceOff',
    ]);
  });

  test('a reset whose answer was lost is safe to repeat', async () => {
    const machine = driver();
    await emu.setFaults({ loseNext: 'ComputerSystem.Reset' });
    await rejectsWith(machine.reset('On'), { kind: 'unreachable', retryable: true });
    await machine.reset('On');
    assert.equal(machineState().power, 'On');
    assert.deepEqual(actionsLike('ComputerSystem.Reset'), ['ComputerSystem.Reset On']);
  });

  test('an OS that ignores GracefulShutdown: timeout at the deadline', async () => {
    const machine = driver(0, { taskTimeoutMs: 300 });
    await machine.reset('On');
    await emu.setFaults({ ignoreAcpi: true });
    await rejectsWith(machine.reset('GracefulShutdown'), { kind: 'timeout', retryable: true, message: /still On/ });
    await machine.reset('ForceOff');
    assert.equal(machineState().power, 'Off');
  });

  test('shutdown: ACPI first, the plug when the OS ignores it past the grace; nothing sent to a machine that is off', async () => {
    const machine = driver(0);
    await machine.shutdown(1000);
    assert.deepEqual(actionsLike('ComputerSystem.Reset'), []);
    await machine.reset('On');
    await machine.shutdown(5000);
    assert.equal(machineState().power, 'Off');
    assert.deepEqual(actionsLike('ComputerSystem.Reset'), [
      'ComputerSystem.Reset On',
      'ComputerSystem.Reset GracefulShutdown',
    ]);
    await machine.reset('On');
    await emu.setFaults({ ignoreAcpi: true });
    await machine.shutdown(200);
    assert.equal(machineState().power, 'Off');
    assert.deepEqual(actionsLike('ComputerSystem.Reset').slice(-2), [
      'ComputerSystem.Reset GracefulShutdown',
      'ComputerSystem.Reset ForceOff',
    ]);
  });

  test('ResetTypes the system does not offer: PowerCycle falls back to ForceRestart; others are not_supported', async () => {
    const limited = await startRedfishEmulator({
      machines: 1,
      resetTypes: ['On', 'ForceOff', 'ForceRestart'],
      powerDelayMs: 10,
      password: PASSWORD,
    });
    try {
      const machine = createRedfishMachine({
        endpoint: limited.machines[0]!.url,
        username: limited.username,
        password: PASSWORD,
        pollIntervalMs: 10,
        requestTimeoutMs: 2000,
      });
      made.push(machine);
      await machine.reset('On');
      await machine.reset('PowerCycle');
      assert.deepEqual(limited.state.machines[0]!.actions, [
        'ComputerSystem.Reset On',
        'ComputerSystem.Reset ForceRestart',
      ]);
      await rejectsWith(machine.reset('GracefulShutdown'), {
        kind: 'rejected',
        reason: 'not_supported',
        retryable: false,
      });
    } finally {
      await limited.stop();
    }
  });
});

describe('redfish driver: other BMC styles', () => {
  test('ResetTypes in an ActionInfo and virtual media without actions (PATCH of Image/Inserted)', async () => {
    const other = await startRedfishEmulator({
      machines: 1,
      resetActionInfo: true,
      mediaActions: false,
      resetTypes: ['On', 'ForceOff', 'ForceRestart', 'GracefulShutdown'],
      powerDelayMs: 10,
      installDelayMs: 50,
      password: PASSWORD,
    });
    try {
      const machine = createRedfishMachine({
        endpoint: other.machines[0]!.url,
        username: other.username,
        password: PASSWORD,
        pollIntervalMs: 10,
        requestTimeoutMs: 2000,
      });
      made.push(machine);
      await machine.reset('On');
      await machine.startInstall(spec({ imageUrl: OTHER_IMAGE }));
      await machine.startInstall(spec());
      const m = other.state.machines[0]!;
      assert.deepEqual(
        m.actions.filter((a) => !a.startsWith('PATCH ComputerSystem')),
        [
          'ComputerSystem.Reset On',
          'PATCH VirtualMedia CD',
          'ComputerSystem.Reset ForceRestart',
          'PATCH VirtualMedia CD',
          'PATCH VirtualMedia CD',
          'ComputerSystem.Reset ForceRestart',
        ],
      );
      assert.equal(m.media.find((s) => s.id === 'CD')?.image, IMAGE);
      assert.ok((other.calls.get('GET /redfish/v1/Systems/System.Embedded.1/ResetActionInfo') ?? 0) >= 1);
      await waitFor(
        () => machine.installState(),
        (s) => s !== 'installing',
        'the install',
      );
      await machine.wipe();
      assert.ok(m.media.every((s) => !s.inserted));
      assert.equal(m.installState, 'idle');
      // Off, a restart is a power-on (offered); on, GracefulRestart is not offered.
      await machine.reset('GracefulRestart');
      assert.equal(m.power, 'On');
      await rejectsWith(machine.reset('GracefulRestart'), { kind: 'rejected', reason: 'not_supported' });
    } finally {
      await other.stop();
    }
  });
});

describe('redfish driver: install', () => {
  test('startInstall inserts the image, passes the parameters, boots the CD once; the install reports done', async () => {
    const machine = driver(2);
    assert.equal(await machine.installState(), 'idle');
    await machine.startInstall(spec());
    const m = machineState(2);
    const cd = cdOf(2);
    assert.equal(cd.inserted, true);
    assert.equal(cd.image, IMAGE);
    assert.equal(cd.writeProtected, true);
    assert.equal(m.power, 'On');
    // The one-time override was consumed by the boot into the installer.
    assert.deepEqual(m.boot, { enabled: 'Disabled', target: 'None' });
    assert.match(m.lastBoot ?? '', /^Cd /);
    assert.ok(['installing', 'done'].includes(await machine.installState()));
    const params = m.installParams!;
    assert.equal(params.Hostname, 'bm-1.example.in');
    assert.deepEqual(params.SshKeys, [KEY]);
    assert.deepEqual(params.IPv4, { Address: '203.0.113.10', PrefixLength: 24, Gateway: '203.0.113.1' });
    assert.match(params.PasswordHash ?? '', /^\$6\$/);
    assert.equal(sha512Crypt(ROOT_PASSWORD, params.PasswordHash ?? ''), params.PasswordHash);
    assert.ok(!JSON.stringify(emu.state.machines).includes(ROOT_PASSWORD), 'the clear password reached the BMC');
    await waitFor(
      () => machine.installState(),
      (s) => s !== 'installing',
      'the install',
    );
    assert.equal(await machine.installState(), 'done');
    assert.equal(m.drives[0]!.os?.image, IMAGE);
    assert.equal(m.drives[0]!.os?.hostname, 'bm-1.example.in');
    // PATCHes went with If-Match (the emulator requires it here).
    assert.ok((emu.calls.get('PATCH ComputerSystem') ?? 0) >= 2);
  });

  test('finishInstall ejects the media and removes the parameters, keeps what was installed and the machine on; again is harmless', async () => {
    const machine = driver(1);
    await installed(machine, 1);
    await machine.finishInstall();
    const m = machineState(1);
    assert.equal(cdOf(1).inserted, false);
    assert.equal(cdOf(1).image, null);
    assert.equal(m.installParams, null);
    assert.equal(m.power, 'On');
    assert.equal(m.drives[0]!.os?.image, IMAGE);
    assert.equal(await machine.installState(), 'done');
    const calls = m.actions.length;
    await machine.finishInstall();
    assert.equal(m.actions.length, calls, 'nothing left to do the second time');
  });

  test('a machine that is on is power-cycled into the installer; another image is ejected first', async () => {
    const machine = driver();
    await machine.reset('On');
    await machine.startInstall(spec({ imageUrl: OTHER_IMAGE }));
    await machine.startInstall(spec());
    assert.equal(cdOf().image, IMAGE);
    assert.deepEqual(
      machineState().actions.filter((a) => a.startsWith('VirtualMedia') || a.startsWith('ComputerSystem.Reset')),
      [
        'ComputerSystem.Reset On',
        `VirtualMedia.InsertMedia ${cdOf().id} ${OTHER_IMAGE}`,
        'ComputerSystem.Reset PowerCycle',
        `VirtualMedia.EjectMedia ${cdOf().id}`,
        `VirtualMedia.InsertMedia ${cdOf().id} ${IMAGE}`,
        'ComputerSystem.Reset PowerCycle',
      ],
    );
    await waitFor(
      () => machine.installState(),
      (s) => s !== 'installing',
      'the install',
    );
    assert.equal(machineState().drives[0]!.os?.image, IMAGE);
  });

  test('after a lost InsertMedia answer, startInstall again inserts nothing twice', async () => {
    const machine = driver();
    await emu.setFaults({ loseNext: 'VirtualMedia.InsertMedia' });
    await rejectsWith(machine.startInstall(spec()), { kind: 'unreachable' });
    await machine.startInstall(spec());
    assert.deepEqual(actionsLike('VirtualMedia'), [`VirtualMedia.InsertMedia ${cdOf().id} ${IMAGE}`]);
    await waitFor(
      () => machine.installState(),
      (s) => s !== 'installing',
      'the install',
    );
    assert.equal(await machine.installState(), 'done');
  });

  test('failed and never-ending installs are reported as such', async () => {
    const machine = driver();
    await emu.setFaults({ installFails: true });
    await machine.startInstall(spec());
    await waitFor(
      () => machine.installState(),
      (s) => s !== 'installing',
      'the install',
    );
    assert.equal(await machine.installState(), 'failed');
    await emu.setFaults({ installFails: false, installHangs: true });
    await machine.startInstall(spec());
    assert.equal(await machine.installState(), 'installing');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(await machine.installState(), 'installing');
  });

  test('the BMC refusing the parameters or the image: rejected with its words and the fields', async () => {
    const machine = driver();
    const badHost = await rejectsWith(machine.startInstall(spec({ hostname: 'not a host' })), {
      kind: 'rejected',
      status: 400,
      retryable: false,
      reason: 'PropertyValueFormatError',
      detail: /not a host/,
    });
    assert.deepEqual(Object.keys(badHost.fields ?? {}), ['Oem.Hostplane.Install.Hostname']);
    const badImage = await rejectsWith(machine.startInstall(spec({ imageUrl: 'images/debian.iso' })), {
      kind: 'rejected',
      status: 400,
      detail: /images\/debian\.iso/,
    });
    assert.deepEqual(Object.keys(badImage.fields ?? {}), ['Image']);
    assert.ok(!badImage.message.includes(ROOT_PASSWORD));
  });
});

describe('redfish driver: wipe', () => {
  test('wipe powers off, ejects, clears the override and parameters, erases every drive: stock again', async () => {
    const machine = driver(1);
    await installed(machine, 1);
    await machine.wipe();
    const m = machineState(1);
    assert.equal(m.power, 'Off');
    assert.ok(m.media.every((s) => !s.inserted && s.image === null));
    assert.equal(m.boot.enabled, 'Disabled');
    assert.equal(m.installParams, null);
    assert.ok(m.drives.every((d) => d.os === null && d.erasures === 1));
    assert.equal(await machine.installState(), 'idle');
    assert.equal(await machine.power(), 'stopped');
    // Again (a lost answer): nothing to eject or clear, the drives are erased once more.
    await machine.wipe();
    assert.ok(m.drives.every((d) => d.erasures === 2));
    assert.equal(actionsLike('VirtualMedia.EjectMedia', 1).length, 1);
  });

  test('a secure erase task that fails: rejected, retryable, with the BMC’s message', async () => {
    const machine = driver();
    await installed(machine);
    await emu.setFaults({ failTasks: 1 });
    await rejectsWith(machine.wipe(), {
      kind: 'rejected',
      retryable: true,
      reason: 'TaskException',
      detail: /simulated fault/,
    });
    assert.ok(machineState().drives[0]!.os !== null, 'the failed erase did nothing');
    await machine.wipe();
    assert.equal(machineState().installState, 'idle');
  });
});

describe('redfish driver: transport failures', () => {
  test('503 with Retry-After is unreachable with retryAfterSeconds; 500 unreachable', async () => {
    const machine = driver();
    await machine.power();
    await emu.setFaults({ resetting: true, retryAfterSeconds: 9 });
    await rejectsWith(machine.power(), {
      kind: 'unreachable',
      status: 503,
      retryable: true,
      retryAfterSeconds: 9,
      detail: /temporarily unavailable/,
    });
    await emu.setFaults({ resetting: false, errorRate: 1 });
    await rejectsWith(machine.machine(), { kind: 'unreachable', status: 500, retryable: true });
  });

  test('a BMC that is down is unreachable; one that hangs is a timeout', async () => {
    await emu.setFaults({ down: true });
    await rejectsWith(driver().ping(), { kind: 'unreachable', retryable: true });
    await emu.setFaults({ down: false, hang: true });
    await rejectsWith(driver(0, { requestTimeoutMs: 200 }).power(), { kind: 'timeout', retryable: true });
  });
});

describe('redfish driver: error mapping', () => {
  const headers = { 'retry-after': '5' };
  const body = (key: string, message: string, related: string[] = []) =>
    JSON.stringify({
      error: {
        code: `Base.1.8.${key}`,
        message,
        '@Message.ExtendedInfo': [
          { MessageId: `Base.1.8.${key}`, Message: message, RelatedProperties: related, Severity: 'Warning' },
        ],
      },
    });

  test('statuses and ExtendedInfo become kinds, detail, fields and reason', () => {
    const bad = classify(
      400,
      'Bad Request',
      body(
        'PropertyValueNotInList',
        'The value Foo for the property ResetType is not in the list of acceptable values.',
        ['#/ResetType'],
      ),
      {},
      'BMC x',
      'reset',
    );
    assert.equal(bad.kind, 'rejected');
    assert.equal(bad.retryable, false);
    assert.equal(bad.reason, 'PropertyValueNotInList');
    assert.deepEqual(bad.fields, {
      ResetType: 'The value Foo for the property ResetType is not in the list of acceptable values.',
    });
    assert.match(bad.detail ?? '', /not in the list/);
    assert.equal(classify(401, '', '', {}, 'BMC x', 'a').kind, 'auth');
    assert.equal(classify(403, '', '', {}, 'BMC x', 'a').kind, 'forbidden');
    const missing = classify(
      404,
      '',
      body('ResourceMissingAtURI', 'The resource at the URI /x was not found.'),
      {},
      'BMC x',
      'a',
    );
    assert.equal(missing.kind, 'not_found');
    assert.equal(missing.reason, 'ResourceMissingAtURI');
    const inUse = classify(400, '', body('ResourceInUse', 'in use'), {}, 'BMC x', 'a');
    assert.equal(inUse.kind, 'conflict');
    assert.equal(inUse.retryable, true);
    const already = classify(409, '', body('GeneralError', 'The system is already powered on.'), {}, 'BMC x', 'a');
    assert.equal(already.kind, 'conflict');
    assert.equal(already.retryable, false);
    assert.equal(already.reason, undefined);
    assert.equal(classify(412, '', '', {}, 'BMC x', 'a').kind, 'conflict');
    const slow = classify(429, '', '', headers, 'BMC x', 'a');
    assert.equal(slow.kind, 'rate_limited');
    assert.equal(slow.retryAfterSeconds, 5);
    assert.equal(classify(302, '', '', {}, 'BMC x', 'a').kind, 'protocol');
    assert.equal(classify(502, 'Bad Gateway', '<html>', {}, 'BMC x', 'a').kind, 'unreachable');
    assert.equal(fieldOf('#/Boot/BootSourceOverrideTarget'), 'Boot.BootSourceOverrideTarget');
    assert.equal(fieldOf('#/SshKeys/0'), 'SshKeys.0');
  });
});

/** A hand-made BMC: the service root, login, and whatever `handle` answers (true: handled). */
async function fakeBmc(handle: (req: IncomingMessage, res: ServerResponse, path: string) => boolean) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push(`${req.method} ${path}`);
    const json = (status: number, value: unknown, extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...extra });
      res.end(JSON.stringify(value));
    };
    req.resume();
    req.on('end', () => {
      if (path === '/redfish/v1/' || path === '/redfish/v1') {
        return json(200, {
          '@odata.id': '/redfish/v1/',
          RedfishVersion: '1.6.0',
          Links: { Sessions: { '@odata.id': '/s' } },
        });
      }
      if (path === '/s' && req.method === 'POST')
        return json(201, { '@odata.id': '/s/1' }, { 'x-auth-token': 'tok', location: '/s/1' });
      if (handle(req, res, path)) return;
      json(404, { error: { code: 'Base.1.8.ResourceMissingAtURI', message: 'nope' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new RedfishClient({
    endpoint: url,
    username: 'root',
    password: PASSWORD,
    pollIntervalMs: 5,
    taskTimeoutMs: 5000,
  });
  return {
    url,
    seen,
    client,
    async stop() {
      client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const accepted = (location: string, task?: Record<string, unknown>) => ({
  status: 202,
  headers: { location },
  body: task ?? null,
  text: '',
  reason: 'Accepted',
});

describe('redfish driver: task monitor shapes', () => {
  test('a monitor that vanishes once done is replaced by the Task; Retry-After is honoured; Completed is done', async () => {
    let polls = 0;
    const fake = await fakeBmc((_req, res, path) => {
      if (path === '/mon/1') {
        polls++;
        if (polls < 2) {
          res.writeHead(202, { 'retry-after': '0', location: '/mon/1' });
          res.end();
        } else {
          res.writeHead(404);
          res.end();
        }
        return true;
      }
      if (path === '/tasks/1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ '@odata.id': '/tasks/1', TaskState: 'Completed', TaskStatus: 'OK' }));
        return true;
      }
      return false;
    });
    try {
      await fake.client.guard(() =>
        settle(fake.client, accepted('/mon/1', { '@odata.id': '/tasks/1', TaskState: 'Running' }), 'the op'),
      );
      assert.deepEqual(
        fake.seen.filter((s) => s.startsWith('GET /mon') || s.startsWith('GET /tasks')),
        ['GET /mon/1', 'GET /mon/1', 'GET /tasks/1'],
      );
    } finally {
      await fake.stop();
    }
  });

  test('a monitor that answers the operation’s error, or a Killed task: rejected with the messages', async () => {
    const fake = await fakeBmc((_req, res, path) => {
      if (path === '/mon/err') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              code: 'Base.1.8.GeneralError',
              message: 'x',
              '@Message.ExtendedInfo': [
                {
                  MessageId: 'Base.1.8.ActionParameterValueFormatError',
                  Message: 'The value for Image is bad.',
                  RelatedProperties: ['#/Image'],
                },
              ],
            },
          }),
        );
        return true;
      }
      if (path === '/mon/killed') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            TaskState: 'Killed',
            Messages: [{ MessageId: 'TaskEvent.1.0.TaskAborted', Message: 'The task was killed by an operator.' }],
          }),
        );
        return true;
      }
      return false;
    });
    try {
      const refused = await rejectsWith(
        fake.client.guard(() => settle(fake.client, accepted('/mon/err'), 'the op')),
        {
          kind: 'rejected',
          status: 400,
          reason: 'ActionParameterValueFormatError',
        },
      );
      assert.deepEqual(refused.fields, { Image: 'The value for Image is bad.' });
      await rejectsWith(
        fake.client.guard(() => settle(fake.client, accepted('/mon/killed'), 'the op')),
        {
          kind: 'rejected',
          retryable: true,
          reason: 'TaskKilled',
          detail: /killed by an operator/,
        },
      );
    } finally {
      await fake.stop();
    }
  });

  test('a monitor that never ends: timeout at the task deadline; a 202 without a monitor: protocol', async () => {
    const fake = await fakeBmc((_req, res, path) => {
      if (path !== '/mon/forever') return false;
      res.writeHead(202);
      res.end();
      return true;
    });
    try {
      const client = new RedfishClient({
        endpoint: fake.url,
        username: 'root',
        password: PASSWORD,
        pollIntervalMs: 5,
        taskTimeoutMs: 100,
      });
      await rejectsWith(
        client.guard(() => settle(client, accepted('/mon/forever'), 'the op')),
        {
          kind: 'timeout',
          message: /still running/,
        },
      );
      await rejectsWith(
        client.guard(() => settle(client, { status: 202, headers: {}, body: null, text: '', reason: '' }, 'the op')),
        { kind: 'protocol' },
      );
      client.close();
    } finally {
      await fake.stop();
    }
  });

  test('a stale ETag (412) is re-read and the PATCH retried; a link to another host is refused', async () => {
    let patches = 0;
    const fake = await fakeBmc((req, res, path) => {
      if (path !== '/thing') return false;
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json', etag: `"v${patches}"` });
        res.end(JSON.stringify({ '@odata.id': '/thing' }));
        return true;
      }
      patches++;
      assert.equal(req.headers['if-match'], `"v${patches - 1}"`);
      res.writeHead(patches === 1 ? 412 : 204);
      res.end();
      return true;
    });
    try {
      const res = await fake.client.guard(() => fake.client.patch('/thing', { A: 1 }, 'patching'));
      assert.equal(res.status, 204);
      assert.equal(patches, 2);
      await rejectsWith(
        fake.client.guard(() => fake.client.get('http://elsewhere.example/redfish/v1/')),
        {
          kind: 'protocol',
          message: /another host/,
        },
      );
    } finally {
      await fake.stop();
    }
  });

  test('an answer that is not JSON is protocol', async () => {
    const fake = await fakeBmc((_req, res, path) => {
      if (path !== '/html') return false;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>login</html>');
      return true;
    });
    try {
      await rejectsWith(
        fake.client.guard(() => fake.client.get('/html')),
        { kind: 'protocol', message: /not JSON/ },
      );
    } finally {
      await fake.stop();
    }
  });
});
