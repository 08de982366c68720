// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Redfish emulator over plain HTTP, as a client sees it: the open service root, sessions
// (login, X-Auth-Token, logout, expiry) and Basic, collections and @odata links (Dell-like and
// random member ids), PATCH of the system with its checks and ETags, ComputerSystem.Reset and
// the power state machine, virtual media as a task with its monitor, the install a boot from
// the virtual CD runs, SecureErase back to stock, the fault knobs, several machines each on its
// own port, and the state file across a restart.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type RedfishEmulator, startRedfishEmulator } from '../../emulators/src/redfish/index.ts';

/** A parsed JSON answer (JSON.parse's own type); tests check it field by field. */
type Json = ReturnType<typeof JSON.parse>;

interface Reply {
  status: number;
  headers: Headers;
  json: Json;
}

const IMAGE = 'http://images.hostplane.test/debian-12-amd64.iso';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0bq6bYjv0a1Jt3ApVxB3Yw1jHn7N0Hn0kq8k1V8uY ops@example';
const HASH = '$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1';

let emu: RedfishEmulator;

before(async () => {
  emu = await startRedfishEmulator({ machines: 2, installDelayMs: 120, powerDelayMs: 40, taskDelayMs: 40 });
});
after(async () => {
  await emu.stop();
});
beforeEach(() => emu.reset({ machines: true }));

async function call(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; base?: string; raw?: string } = {},
): Promise<Reply> {
  const res = await fetch(`${options.base ?? emu.machines[0]!.url}${path}`, {
    method,
    headers: {
      ...(options.body !== undefined || options.raw ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let json: Json = null;
  try {
    json = text === '' ? null : (JSON.parse(text) as Json);
  } catch {}
  return { status: res.status, headers: res.headers, json };
}

async function login(base?: string): Promise<Record<string, string>> {
  const r = await call('POST', '/redfish/v1/SessionService/Sessions', {
    body: { UserName: emu.username, Password: emu.password },
    ...(base ? { base } : {}),
  });
  assert.equal(r.status, 201);
  return { 'x-auth-token': r.headers.get('x-auth-token') ?? '' };
}

/** Poll until `check` holds (a hang guard, not a timing assertion). */
async function waitFor<T>(read: () => Promise<T> | T, check: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 1500; i++) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The first ExtendedInfo message of an error answer. */
function firstMessage(r: Reply): Json {
  assert.ok(r.json?.error, `not a Redfish error: ${JSON.stringify(r.json)}`);
  const info = r.json.error['@Message.ExtendedInfo'];
  assert.ok(Array.isArray(info) && info.length > 0);
  return info[0];
}

/** Follow links from the root: the system, manager, CD slot and drives, as a client must. */
async function discover(auth: Record<string, string>, base?: string) {
  const opts = { headers: auth, ...(base ? { base } : {}) };
  const root = (await call('GET', '/redfish/v1/', opts)).json;
  const systems = (await call('GET', root.Systems['@odata.id'], opts)).json;
  const systemUri: string = systems.Members[0]['@odata.id'];
  const system = (await call('GET', systemUri, opts)).json;
  const managerUri: string = system.Links.ManagedBy[0]['@odata.id'];
  const manager = (await call('GET', managerUri, opts)).json;
  const media = (await call('GET', manager.VirtualMedia['@odata.id'], opts)).json;
  let cd: Json = null;
  for (const member of media.Members) {
    const slot = (await call('GET', member['@odata.id'], opts)).json;
    if (slot.MediaTypes.includes('CD') || slot.MediaTypes.includes('DVD')) cd = slot;
  }
  const storages = (await call('GET', system.Storage['@odata.id'], opts)).json;
  const storage = (await call('GET', storages.Members[0]['@odata.id'], opts)).json;
  const drives: string[] = storage.Drives.map((d: Json) => d['@odata.id']);
  return {
    root,
    systemUri,
    system,
    managerUri,
    manager,
    cd,
    drives,
    resetTarget: system.Actions['#ComputerSystem.Reset'].target,
  };
}

async function pollMonitor(location: string, auth: Record<string, string>, base?: string): Promise<Reply> {
  return waitFor(
    () => call('GET', location, { headers: auth, ...(base ? { base } : {}) }),
    (r) => r.status !== 202,
    'the task monitor',
  );
}

async function powerState(auth: Record<string, string>, uri: string): Promise<string> {
  return (await call('GET', uri, { headers: auth })).json.PowerState;
}

describe('service root and sessions', () => {
  test('the service root and /redfish are open; everything else needs a session', async () => {
    const links = await call('GET', '/redfish');
    assert.deepEqual(links.json, { v1: '/redfish/v1/' });
    const root = await call('GET', '/redfish/v1/');
    assert.equal(root.status, 200);
    assert.equal(root.headers.get('odata-version'), '4.0');
    assert.equal(root.json['@odata.type'], '#ServiceRoot.v1_15_0.ServiceRoot');
    assert.match(root.json.RedfishVersion, /^1\.\d+\.\d+$/);
    assert.equal(root.json.Links.Sessions['@odata.id'], '/redfish/v1/SessionService/Sessions');
    for (const key of ['Systems', 'Managers', 'SessionService', 'TaskService']) assert.ok(root.json[key]['@odata.id']);
    const denied = await call('GET', '/redfish/v1/Systems');
    assert.equal(denied.status, 401);
    assert.equal(firstMessage(denied).MessageId, 'Base.1.8.NoValidSession');
    assert.equal(denied.json.error.code, 'Base.1.8.NoValidSession');
  });

  test('login answers a token and the session Location; logout ends it', async () => {
    const bad = await call('POST', '/redfish/v1/SessionService/Sessions', {
      body: { UserName: emu.username, Password: 'wrong' },
    });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers.get('x-auth-token'), null);
    const missing = await call('POST', '/redfish/v1/SessionService/Sessions', { body: { UserName: 'root' } });
    assert.equal(missing.status, 400);
    assert.equal(firstMessage(missing).MessageId, 'Base.1.8.PropertyMissing');
    assert.deepEqual(firstMessage(missing).RelatedProperties, ['#/Password']);

    const ok = await call('POST', '/redfish/v1/SessionService/Sessions', {
      body: { UserName: emu.username, Password: emu.password },
    });
    assert.equal(ok.status, 201);
    const token = ok.headers.get('x-auth-token') ?? '';
    const location = ok.headers.get('location') ?? '';
    assert.ok(token.length >= 32);
    assert.match(location, /^\/redfish\/v1\/SessionService\/Sessions\/[0-9a-f]+$/);
    assert.equal(ok.json['@odata.type'], '#Session.v1_6_0.Session');
    assert.equal(ok.json.UserName, emu.username);
    const auth = { 'x-auth-token': token };
    const list = await call('GET', '/redfish/v1/SessionService/Sessions', { headers: auth });
    assert.equal(list.json['Members@odata.count'], 1);
    assert.equal((await call('GET', location, { headers: auth })).json.Id, ok.json.Id);
    assert.equal(emu.sessionCount(0), 1);
    assert.equal((await call('DELETE', location, { headers: auth })).status, 204);
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: auth })).status, 401);
    assert.equal(emu.sessionCount(0), 0);
  });

  test('HTTP Basic works; a wrong password does not', async () => {
    const basic = (user: string, password: string) => ({
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
    });
    assert.equal(
      (await call('GET', '/redfish/v1/Systems', { headers: basic(emu.username, emu.password) })).status,
      200,
    );
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: basic(emu.username, 'nope') })).status, 401);
  });

  test('sessions expire after the idle timeout knob, and all at once on request', async () => {
    const auth = await login();
    await emu.setFaults({ sessionTimeoutMs: 30 });
    await new Promise((r) => setTimeout(r, 80));
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: auth })).status, 401);
    await emu.setFaults({ sessionTimeoutMs: 0 });
    const again = await login();
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: again })).status, 200);
    const control = await call('POST', '/__emulator/expire-sessions');
    assert.equal(control.status, 200);
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: again })).status, 401);
  });
});

describe('resources', () => {
  test('collections, the system and its links follow the DMTF schemas', async () => {
    const auth = await login();
    const d = await discover(auth);
    const systems = (await call('GET', '/redfish/v1/Systems', { headers: auth })).json;
    assert.equal(systems['@odata.type'], '#ComputerSystemCollection.ComputerSystemCollection');
    assert.equal(systems['Members@odata.count'], 1);
    assert.equal(d.systemUri, '/redfish/v1/Systems/System.Embedded.1');
    const s = d.system;
    assert.equal(s['@odata.type'], '#ComputerSystem.v1_20_0.ComputerSystem');
    assert.equal(s.PowerState, 'Off');
    assert.equal(s.SerialNumber, emu.machines[0]!.serial);
    assert.equal(s.ProcessorSummary.Count, 2);
    assert.equal(s.MemorySummary.TotalSystemMemoryGiB, 64);
    assert.deepEqual(s.Status, { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' });
    assert.equal(s.Boot.BootSourceOverrideEnabled, 'Disabled');
    assert.ok(s.Boot['BootSourceOverrideTarget@Redfish.AllowableValues'].includes('Cd'));
    assert.deepEqual(s.Actions['#ComputerSystem.Reset']['ResetType@Redfish.AllowableValues'], [
      'On',
      'ForceOff',
      'GracefulShutdown',
      'GracefulRestart',
      'ForceRestart',
      'PowerCycle',
      'Nmi',
    ]);
    assert.equal(s.Oem.Hostplane.InstallState, 'idle');
    assert.match(s['@odata.etag'], /^W\/"/);
    const nics = (await call('GET', s.EthernetInterfaces['@odata.id'], { headers: auth })).json;
    assert.equal(nics['Members@odata.count'], 2);
    const nic = (await call('GET', nics.Members[0]['@odata.id'], { headers: auth })).json;
    assert.match(nic.MACAddress, /^([0-9A-F]{2}:){5}[0-9A-F]{2}$/);
    assert.equal(d.manager.ManagerType, 'BMC');
    assert.equal(d.manager.FirmwareVersion, '7.10.30.00');
    assert.equal(d.cd.Id, 'CD');
    assert.deepEqual(d.cd.MediaTypes, ['CD', 'DVD']);
    assert.equal(d.cd.Inserted, false);
    assert.ok(d.cd.Actions['#VirtualMedia.InsertMedia'].target.endsWith('/Actions/VirtualMedia.InsertMedia'));
    assert.equal(d.drives.length, 2);
    assert.match(d.drives[0]!, /Disk\.Bay\.0:Enclosure/);
    const drive = (await call('GET', d.drives[0]!, { headers: auth })).json;
    assert.equal(drive['@odata.type'], '#Drive.v1_17_0.Drive');
    assert.ok(drive.Actions['#Drive.SecureErase'].target);
  });

  test('unknown URIs and methods answer the Base registry errors', async () => {
    const auth = await login();
    const missing = await call('GET', '/redfish/v1/Systems/1', { headers: auth });
    assert.equal(missing.status, 404);
    assert.equal(firstMessage(missing).MessageId, 'Base.1.8.ResourceMissingAtURI');
    const method = await call('DELETE', '/redfish/v1/Systems', { headers: auth });
    assert.equal(method.status, 405);
    assert.equal(method.headers.get('allow'), 'GET');
    const malformed = await call('PATCH', '/redfish/v1/Systems/System.Embedded.1', { headers: auth, raw: '{nope' });
    assert.equal(malformed.status, 400);
    assert.equal(firstMessage(malformed).MessageId, 'Base.1.8.MalformedJSON');
  });

  test('random member ids: the CD is wherever MediaTypes say, and ids differ per machine', async () => {
    const random = await startRedfishEmulator({ machines: 2, ids: 'random', powerDelayMs: 10, taskDelayMs: 10 });
    try {
      const a = await discover(await login(random.machines[0]!.url), random.machines[0]!.url);
      const b = await discover(await login(random.machines[1]!.url), random.machines[1]!.url);
      assert.doesNotMatch(a.systemUri, /System\.Embedded/);
      assert.notEqual(a.systemUri, b.systemUri);
      assert.ok(a.cd.MediaTypes.includes('DVD'));
      const media = (
        await call('GET', a.manager.VirtualMedia['@odata.id'], {
          base: random.machines[0]!.url,
          headers: await login(random.machines[0]!.url),
        })
      ).json;
      assert.equal(media['Members@odata.count'], 3);
    } finally {
      await random.stop();
    }
  });
});

describe('PATCH of the system', () => {
  test('sets the boot override and the install parameters; the hash reads back null', async () => {
    const auth = await login();
    const d = await discover(auth);
    const r = await call('PATCH', d.systemUri, {
      headers: auth,
      body: {
        Boot: { BootSourceOverrideEnabled: 'Once', BootSourceOverrideTarget: 'Cd' },
        Oem: {
          Hostplane: {
            Install: {
              Hostname: 'bm-1.example.in',
              SshKeys: [KEY],
              PasswordHash: HASH,
              IPv4: { Address: '203.0.113.10', PrefixLength: 24, Gateway: '203.0.113.1' },
            },
          },
        },
      },
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.Boot.BootSourceOverrideEnabled, 'Once');
    assert.equal(r.json.Boot.BootSourceOverrideTarget, 'Cd');
    assert.equal(r.json.Oem.Hostplane.Install.Hostname, 'bm-1.example.in');
    assert.equal(r.json.Oem.Hostplane.Install.PasswordHash, null);
    assert.equal(emu.state.machines[0]!.installParams?.PasswordHash, HASH);
    assert.ok(r.headers.get('etag'));
  });

  test('refuses unknown, read-only and out-of-list properties, naming each', async () => {
    const auth = await login();
    const { systemUri } = await discover(auth);
    const r = await call('PATCH', systemUri, {
      headers: auth,
      body: { Boot: { BootSourceOverrideTarget: 'Floppy2' }, PowerState: 'On', Colour: 'red' },
    });
    assert.equal(r.status, 400);
    const info = r.json.error['@Message.ExtendedInfo'] as Json[];
    const ids = info.map((m) => m.MessageId).sort();
    assert.deepEqual(ids, [
      'Base.1.8.PropertyNotWritable',
      'Base.1.8.PropertyUnknown',
      'Base.1.8.PropertyValueNotInList',
    ]);
    const notInList = info.find((m) => m.MessageId.endsWith('PropertyValueNotInList'));
    assert.deepEqual(notInList.RelatedProperties, ['#/Boot/BootSourceOverrideTarget']);
    assert.equal(r.json.error.code, 'Base.1.8.GeneralError');
    const badInstall = await call('PATCH', systemUri, {
      headers: auth,
      body: { Oem: { Hostplane: { Install: { Hostname: 'bad host', SshKeys: ['nope'], PasswordHash: 'plain' } } } },
    });
    assert.equal(badInstall.status, 400);
    const related = (badInstall.json.error['@Message.ExtendedInfo'] as Json[]).flatMap((m) => m.RelatedProperties);
    assert.deepEqual(related.sort(), [
      '#/Oem/Hostplane/Install/Hostname',
      '#/Oem/Hostplane/Install/PasswordHash',
      '#/Oem/Hostplane/Install/SshKeys/0',
    ]);
    assert.equal(emu.state.machines[0]!.installParams, null);
    assert.equal(emu.state.machines[0]!.boot.target, 'None');
  });

  test('If-Match: a stale ETag is 412, the current one passes, and a BMC may require one (428)', async () => {
    const strict = await startRedfishEmulator({ machines: 1, requireIfMatch: true, powerDelayMs: 10 });
    try {
      const base = strict.machines[0]!.url;
      const auth = await login(base);
      const uri = '/redfish/v1/Systems/System.Embedded.1';
      const body = { AssetTag: 'rack-12' };
      const without = await call('PATCH', uri, { base, headers: auth, body });
      assert.equal(without.status, 428);
      assert.equal(firstMessage(without).MessageId, 'Base.1.8.PreconditionRequired');
      const read = await call('GET', uri, { base, headers: auth });
      const etag = read.headers.get('etag') ?? '';
      assert.equal(read.json['@odata.etag'], etag);
      const stale = await call('PATCH', uri, { base, headers: { ...auth, 'if-match': 'W/"0000"' }, body });
      assert.equal(stale.status, 412);
      const ok = await call('PATCH', uri, { base, headers: { ...auth, 'if-match': etag }, body });
      assert.equal(ok.status, 200);
      assert.equal(ok.json.AssetTag, 'rack-12');
      assert.notEqual(ok.headers.get('etag'), etag);
      const reused = await call('PATCH', uri, { base, headers: { ...auth, 'if-match': etag }, body });
      assert.equal(reused.status, 412);
    } finally {
      await strict.stop();
    }
  });
});

describe('power', () => {
  test('Reset checks its ResetType', async () => {
    const auth = await login();
    const { resetTarget } = await discover(auth);
    const missing = await call('POST', resetTarget, { headers: auth, body: {} });
    assert.equal(missing.status, 400);
    assert.equal(firstMessage(missing).MessageId, 'Base.1.8.ActionParameterMissing');
    const bad = await call('POST', resetTarget, { headers: auth, body: { ResetType: 'Explode' } });
    assert.equal(bad.status, 400);
    assert.equal(firstMessage(bad).MessageId, 'Base.1.8.PropertyValueNotInList');
    assert.deepEqual(firstMessage(bad).RelatedProperties, ['#/ResetType']);
  });

  test('On powers on; already on is 409; ForceOff is immediate; GracefulShutdown powers off', async () => {
    const auth = await login();
    const { systemUri, resetTarget } = await discover(auth);
    assert.equal((await call('POST', resetTarget, { headers: auth, body: { ResetType: 'On' } })).status, 204);
    await waitFor(
      () => powerState(auth, systemUri),
      (s) => s === 'On',
      'power on',
    );
    const again = await call('POST', resetTarget, { headers: auth, body: { ResetType: 'On' } });
    assert.equal(again.status, 409);
    assert.match(firstMessage(again).Message, /already powered on/);
    assert.equal(emu.state.machines[0]!.boots, 1);
    assert.equal((await call('POST', resetTarget, { headers: auth, body: { ResetType: 'ForceOff' } })).status, 204);
    assert.equal(await powerState(auth, systemUri), 'Off');
    assert.equal((await call('POST', resetTarget, { headers: auth, body: { ResetType: 'ForceOff' } })).status, 409);
    await call('POST', resetTarget, { headers: auth, body: { ResetType: 'On' } });
    await waitFor(
      () => powerState(auth, systemUri),
      (s) => s === 'On',
      'power on',
    );
    assert.equal(
      (await call('POST', resetTarget, { headers: auth, body: { ResetType: 'GracefulShutdown' } })).status,
      204,
    );
    await waitFor(
      () => powerState(auth, systemUri),
      (s) => s === 'Off',
      'shutdown',
    );
    const restart = await call('POST', resetTarget, { headers: auth, body: { ResetType: 'ForceRestart' } });
    assert.equal(restart.status, 409);
  });

  test('restarts boot again; an OS that ignores ACPI stays on', async () => {
    const auth = await login();
    const { systemUri, resetTarget } = await discover(auth);
    await call('POST', resetTarget, { headers: auth, body: { ResetType: 'On' } });
    await waitFor(
      () => powerState(auth, systemUri),
      (s) => s === 'On',
      'power on',
    );
    await call('POST', resetTarget, { headers: auth, body: { ResetType: 'PowerCycle' } });
    await waitFor(
      () => emu.state.machines[0]!.boots,
      (n) => n === 2,
      'the second boot',
    );
    await call('POST', resetTarget, { headers: auth, body: { ResetType: 'GracefulRestart' } });
    await waitFor(
      () => emu.state.machines[0]!.boots,
      (n) => n === 3,
      'the third boot',
    );
    await emu.setFaults({ ignoreAcpi: true });
    assert.equal(
      (await call('POST', resetTarget, { headers: auth, body: { ResetType: 'GracefulShutdown' } })).status,
      204,
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await powerState(auth, systemUri), 'On');
  });
});

/** Insert IMAGE on machine 0's CD through the action and wait for its task. */
async function insert(auth: Record<string, string>, cd: Json): Promise<void> {
  const r = await call('POST', cd.Actions['#VirtualMedia.InsertMedia'].target, {
    headers: auth,
    body: { Image: IMAGE, Inserted: true, WriteProtected: true },
  });
  assert.equal(r.status, 202);
  const done = await pollMonitor(r.headers.get('location') ?? '', auth);
  assert.equal(done.status, 204);
}

async function prepareInstall(auth: Record<string, string>, d: Awaited<ReturnType<typeof discover>>) {
  await insert(auth, d.cd);
  const patched = await call('PATCH', d.systemUri, {
    headers: auth,
    body: {
      Boot: { BootSourceOverrideEnabled: 'Once', BootSourceOverrideTarget: 'Cd' },
      Oem: { Hostplane: { Install: { Hostname: 'bm-1', SshKeys: [KEY], PasswordHash: HASH, IPv4: null } } },
    },
  });
  assert.equal(patched.status, 200);
}

describe('transitions', () => {
  test('are visible while they last: PoweringOn/Off, a running task and its monitor, a drive being erased', async () => {
    const slow = await startRedfishEmulator({ machines: 1, powerDelayMs: 60_000, taskDelayMs: 60_000 });
    try {
      const base = slow.machines[0]!.url;
      const auth = await login(base);
      const d = await discover(auth, base);
      const opts = { base, headers: auth };
      const state = async () => (await call('GET', d.systemUri, opts)).json.PowerState;
      assert.equal((await call('POST', d.resetTarget, { ...opts, body: { ResetType: 'On' } })).status, 204);
      assert.equal(await state(), 'PoweringOn');
      const busy = await call('POST', d.resetTarget, { ...opts, body: { ResetType: 'On' } });
      assert.equal(busy.status, 409);
      assert.equal(firstMessage(busy).MessageId, 'Base.1.8.ResourceInUse');
      // ForceOff cuts the transition short.
      assert.equal((await call('POST', d.resetTarget, { ...opts, body: { ResetType: 'ForceOff' } })).status, 204);
      assert.equal(await state(), 'Off');

      const insert = await call('POST', d.cd.Actions['#VirtualMedia.InsertMedia'].target, {
        ...opts,
        body: { Image: IMAGE },
      });
      assert.equal(insert.status, 202);
      const monitor = await call('GET', insert.headers.get('location') ?? '', opts);
      assert.equal(monitor.status, 202);
      assert.equal(monitor.json.TaskState, 'Running');
      assert.equal(monitor.json.PercentComplete, 50);
      const tasks = (await call('GET', '/redfish/v1/TaskService/Tasks', opts)).json;
      assert.equal(tasks['Members@odata.count'], 1);
      const again = await call('POST', d.cd.Actions['#VirtualMedia.InsertMedia'].target, {
        ...opts,
        body: { Image: IMAGE },
      });
      assert.equal(again.status, 409);

      assert.equal((await call('POST', `${d.drives[0]}/Actions/Drive.SecureErase`, { ...opts, body: {} })).status, 202);
      const drive = (await call('GET', d.drives[0]!, opts)).json;
      assert.equal(drive.Status.State, 'Updating');
      assert.equal(drive.Operations[0].OperationName, 'Sanitize');

      slow.state.machines[0]!.power = 'On';
      await call('POST', d.resetTarget, { ...opts, body: { ResetType: 'GracefulShutdown' } });
      assert.equal(await state(), 'PoweringOff');
    } finally {
      await slow.stop();
    }
  });
});

describe('virtual media, install and erase', () => {
  test('InsertMedia is a task: 202 with a monitor, the Task, then 204; a second insert is 409', async () => {
    const auth = await login();
    const { cd } = await discover(auth);
    const r = await call('POST', cd.Actions['#VirtualMedia.InsertMedia'].target, {
      headers: auth,
      body: { Image: IMAGE, Inserted: true, WriteProtected: true },
    });
    assert.equal(r.status, 202);
    const location = r.headers.get('location') ?? '';
    assert.match(location, /^\/redfish\/v1\/TaskService\/Tasks\/JID_\d+\/Monitor$/);
    assert.equal(r.json['@odata.type'], '#Task.v1_7_0.Task');
    assert.equal(r.json.TaskState, 'Running');
    assert.equal((await pollMonitor(location, auth)).status, 204);
    const task = (await call('GET', r.json['@odata.id'], { headers: auth })).json;
    assert.equal(task.TaskState, 'Completed');
    assert.equal(task.Messages[0].MessageId, 'TaskEvent.1.0.TaskCompletedOK');
    const slot = (await call('GET', cd['@odata.id'], { headers: auth })).json;
    assert.equal(slot.Inserted, true);
    assert.equal(slot.Image, IMAGE);
    assert.equal(slot.ImageName, 'debian-12-amd64.iso');
    const twice = await call('POST', cd.Actions['#VirtualMedia.InsertMedia'].target, {
      headers: auth,
      body: { Image: IMAGE },
    });
    assert.equal(twice.status, 409);
    assert.equal(firstMessage(twice).MessageId, 'Base.1.8.ResourceInUse');
    const badImage = await call('POST', cd.Actions['#VirtualMedia.InsertMedia'].target, {
      headers: auth,
      body: { Image: 'not a url', Colour: 1 },
    });
    assert.equal(badImage.status, 400);
    assert.equal(badImage.json.error['@Message.ExtendedInfo'].length, 2);
    assert.equal(
      (await call('POST', cd.Actions['#VirtualMedia.EjectMedia'].target, { headers: auth, body: {} })).status,
      204,
    );
    assert.equal(
      (await call('POST', cd.Actions['#VirtualMedia.EjectMedia'].target, { headers: auth, body: {} })).status,
      409,
    );
    assert.equal(emu.state.machines[0]!.media.find((s) => s.id === 'CD')?.inserted, false);
  });

  test('booting the CD once installs from it; the override reverts; the OS lands on the disk', async () => {
    const auth = await login();
    const d = await discover(auth);
    await prepareInstall(auth, d);
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'On' } });
    const installing = await waitFor(
      async () => (await call('GET', d.systemUri, { headers: auth })).json,
      (s) => s.PowerState === 'On',
      'power on',
    );
    assert.ok(['installing', 'done'].includes(installing.Oem.Hostplane.InstallState));
    assert.equal(installing.Boot.BootSourceOverrideEnabled, 'Disabled');
    const done = await waitFor(
      async () => (await call('GET', d.systemUri, { headers: auth })).json,
      (s) => s.Oem.Hostplane.InstallState !== 'installing',
      'the install',
    );
    assert.equal(done.Oem.Hostplane.InstallState, 'done');
    assert.equal(done.Oem.Hostplane.InstalledImage, IMAGE);
    assert.equal(done.HostName, 'bm-1');
    const os = emu.state.machines[0]!.drives[0]!.os;
    assert.deepEqual(os?.sshKeys, [KEY]);
    assert.equal(os?.passwordHash, HASH);
    // The next boot is from the disk: no second install.
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'ForceRestart' } });
    await waitFor(
      () => emu.state.machines[0]!.boots,
      (n) => n === 2,
      'the second boot',
    );
    assert.equal(emu.state.machines[0]!.lastBoot, 'Hdd');
    assert.equal(emu.state.machines[0]!.installState, 'done');
  });

  test('without install parameters, on failure, when it never ends, or when power is cut', async () => {
    const auth = await login();
    const d = await discover(auth);
    await insert(auth, d.cd);
    await call('PATCH', d.systemUri, {
      headers: auth,
      body: { Boot: { BootSourceOverrideEnabled: 'Continuous', BootSourceOverrideTarget: 'Cd' } },
    });
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'On' } });
    await waitFor(
      () => emu.state.machines[0]!.power,
      (p) => p === 'On',
      'power on',
    );
    assert.equal(emu.state.machines[0]!.installState, 'failed');
    assert.match(emu.state.machines[0]!.installMessage ?? '', /no install parameters/);

    await call('PATCH', d.systemUri, {
      headers: auth,
      body: { Oem: { Hostplane: { Install: { Hostname: 'bm-1', SshKeys: [], IPv4: null } } } },
    });
    await emu.setFaults({ installFails: true });
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'ForceRestart' } });
    await waitFor(
      () => emu.state.machines[0]!.installState,
      (s) => s === 'installing',
      'the install to start',
    );
    await waitFor(
      () => emu.state.machines[0]!.installState,
      (s) => s !== 'installing',
      'the install to end',
    );
    assert.equal(emu.state.machines[0]!.installState, 'failed');

    await emu.setFaults({ installFails: false, installHangs: true });
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'ForceRestart' } });
    await waitFor(
      () => emu.state.machines[0]!.installState,
      (s) => s === 'installing',
      'the install to start',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(emu.state.machines[0]!.installState, 'installing');
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'ForceOff' } });
    assert.equal(emu.state.machines[0]!.installState, 'failed');
    assert.match(emu.state.machines[0]!.installMessage ?? '', /lost power/);
  });

  test('SecureErase needs the power off, runs as a task, and leaves the machine stock', async () => {
    const auth = await login();
    const d = await discover(auth);
    await prepareInstall(auth, d);
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'On' } });
    await waitFor(
      () => emu.state.machines[0]!.installState,
      (s) => s === 'done',
      'the install',
    );
    const erase = (uri: string) => call('POST', `${uri}/Actions/Drive.SecureErase`, { headers: auth, body: {} });
    const whileOn = await erase(d.drives[0]!);
    assert.equal(whileOn.status, 409);
    assert.match(firstMessage(whileOn).Message, /powered on/);
    await call('POST', d.resetTarget, { headers: auth, body: { ResetType: 'ForceOff' } });
    for (const drive of d.drives) {
      const r = await erase(drive);
      assert.equal(r.status, 202);
      assert.equal((await pollMonitor(r.headers.get('location') ?? '', auth)).status, 204);
    }
    const m = emu.state.machines[0]!;
    assert.ok(m.drives.every((drive) => drive.os === null && drive.erasures === 1));
    assert.equal(m.installState, 'idle');
  });

  test('the failTasks knob: the monitor answers the Task in Exception, having done nothing', async () => {
    const auth = await login();
    const { cd } = await discover(auth);
    await emu.setFaults({ failTasks: 1 });
    const r = await call('POST', cd.Actions['#VirtualMedia.InsertMedia'].target, {
      headers: auth,
      body: { Image: IMAGE },
    });
    assert.equal(r.status, 202);
    const end = await pollMonitor(r.headers.get('location') ?? '', auth);
    assert.equal(end.status, 200);
    assert.equal(end.json.TaskState, 'Exception');
    assert.equal(end.json.TaskStatus, 'Critical');
    assert.match(end.json.Messages[0].Message, /simulated fault/);
    assert.equal(emu.state.machines[0]!.media.find((s) => s.id === 'CD')?.inserted, false);
    assert.equal(emu.faults.failTasks, 0);
  });
});

describe('fault knobs and control paths', () => {
  test('503 with Retry-After: the next N requests, or all while resetting', async () => {
    await emu.setFaults({ unavailable: 1, retryAfterSeconds: 7 });
    const busy = await call('GET', '/redfish/v1/');
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '7');
    assert.equal(firstMessage(busy).MessageId, 'Base.1.8.ServiceTemporarilyUnavailable');
    assert.equal((await call('GET', '/redfish/v1/')).status, 200);
    await emu.setFaults({ resetting: true });
    assert.equal((await call('GET', '/redfish/v1/')).status, 503);
    assert.equal((await call('GET', '/redfish/v1/')).status, 503);
  });

  test('errorRate answers 500; down resets connections; hang never answers', async () => {
    await emu.setFaults({ errorRate: 1 });
    const crashed = await call('GET', '/redfish/v1/');
    assert.equal(crashed.status, 500);
    assert.equal(firstMessage(crashed).MessageId, 'Base.1.8.InternalError');
    await emu.setFaults({ errorRate: 0, down: true });
    await assert.rejects(fetch(`${emu.machines[0]!.url}/redfish/v1/`));
    await emu.setFaults({ down: false, hang: true });
    await assert.rejects(fetch(`${emu.machines[0]!.url}/redfish/v1/`, { signal: AbortSignal.timeout(200) }));
  });

  test('loseNext: the action is done, the answer never comes', async () => {
    const auth = await login();
    const { cd } = await discover(auth);
    await emu.setFaults({ loseNext: 'VirtualMedia.InsertMedia' });
    await assert.rejects(
      fetch(`${emu.machines[0]!.url}${cd.Actions['#VirtualMedia.InsertMedia'].target}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ Image: IMAGE }),
      }),
    );
    await waitFor(
      () => emu.state.machines[0]!.media.find((s) => s.id === 'CD')?.inserted,
      (v) => v === true,
      'insert',
    );
    assert.equal(emu.calls.get('VirtualMedia.InsertMedia'), 1);
    assert.equal(emu.faults.loseNext, null);
  });

  test('the control paths: faults (checked), state, reset', async () => {
    const bad = await call('POST', '/__emulator/faults', { body: { failTasks: -1 } });
    assert.equal(bad.status, 400);
    const unknown = await call('POST', '/__emulator/faults', { body: { explode: true } });
    assert.equal(unknown.status, 400);
    const set = await call('POST', '/__emulator/faults', { body: { failTasks: 2, installHangs: true } });
    assert.equal(set.json.faults.failTasks, 2);
    assert.equal((await call('GET', '/__emulator/faults')).json.faults.installHangs, true);
    await login();
    const state = (await call('GET', '/__emulator/state')).json;
    assert.equal(state.machines.length, 2);
    assert.equal(state.machines[0].sessions, 1);
    assert.equal(state.machines[0].url, emu.machines[0]!.url);
    assert.equal(state.calls.Sessions, 1);
    assert.equal((await call('POST', '/__emulator/reset', { body: { machines: true } })).status, 200);
    assert.equal(emu.faults.failTasks, 0);
    assert.equal(emu.sessionCount(0), 0);
  });
});

describe('several machines and the state file', () => {
  test('each machine is its own BMC on its own port', async () => {
    assert.equal(emu.machines.length, 2);
    assert.notEqual(emu.machines[0]!.url, emu.machines[1]!.url);
    assert.notEqual(emu.machines[0]!.serial, emu.machines[1]!.serial);
    const second = emu.machines[1]!.url;
    const auth = await login(second);
    const d = await discover(auth, second);
    assert.equal(d.system.SerialNumber, emu.machines[1]!.serial);
    await call('POST', d.resetTarget, { base: second, headers: auth, body: { ResetType: 'On' } });
    await waitFor(
      () => emu.state.machines[1]!.power,
      (p) => p === 'On',
      'power on',
    );
    assert.equal(emu.state.machines[0]!.power, 'Off');
    // A session of one BMC means nothing to another.
    assert.equal((await call('GET', '/redfish/v1/Systems', { headers: auth })).status, 401);
  });

  test('the installed OS, media and boot settings survive a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'redfish-emu-'));
    const file = join(dir, 'state.json');
    try {
      const first = await startRedfishEmulator({
        machines: 1,
        stateFile: file,
        installDelayMs: 30,
        powerDelayMs: 10,
        taskDelayMs: 10,
      });
      const base = first.machines[0]!.url;
      const auth = await login(base);
      const cd = '/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD';
      await call('PATCH', cd, { base, headers: auth, body: { Image: IMAGE, Inserted: true } });
      await call('PATCH', '/redfish/v1/Systems/System.Embedded.1', {
        base,
        headers: auth,
        body: {
          Boot: { BootSourceOverrideEnabled: 'Once', BootSourceOverrideTarget: 'Cd' },
          Oem: { Hostplane: { Install: { Hostname: 'kept', SshKeys: [], IPv4: null } } },
        },
      });
      await call('POST', '/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset', {
        base,
        headers: auth,
        body: { ResetType: 'On' },
      });
      await waitFor(
        () => first.state.machines[0]!.installState,
        (s) => s === 'done',
        'the install',
      );
      const serial = first.machines[0]!.serial;
      await first.stop();
      const second = await startRedfishEmulator({ machines: 1, stateFile: file });
      try {
        const m = second.state.machines[0]!;
        assert.equal(second.machines[0]!.serial, serial);
        assert.equal(m.power, 'On');
        assert.equal(m.installState, 'done');
        assert.equal(m.drives[0]!.os?.hostname, 'kept');
        assert.equal(m.media.find((s) => s.id === 'CD')?.image, IMAGE);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
