// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Proxmox VE driver against the emulated node over real HTTP(S): provisioning, power,
// metrics, consoles, reinstall, destroy, what the node shows afterwards, and every fault the
// driver must survive or report (down, hanging, 500s, bad token, lost answers, failed tasks).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type ProxmoxEmulator, startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { type Hypervisor, TIMEFRAMES, type VmRef } from '../src/upstreams/hypervisor.ts';
import type { ProxmoxConfig } from '../src/upstreams/proxmox/hypervisor.ts';
import { macsOf, powerOf } from '../src/upstreams/proxmox/mapping.ts';
import {
  CANARY,
  cleanUp,
  clientFor,
  driverFor,
  onCleanup,
  raw,
  rejectsWith,
  selfSignedCert,
  settle,
  startEchoNode,
  tempStateFile,
  vmSpec,
} from './support/proxmox-fixtures.ts';

let emulator: ProxmoxEmulator;
let pve: Hypervisor;
const driver = (overrides: Partial<ProxmoxConfig> = {}, target = emulator) => driverFor(target, overrides);

before(async () => {
  emulator = await startProxmoxEmulator({ taskDelayMs: 20, tokenSecret: `f3c1c2d4-0000-4000-8000-${CANARY}` });
  pve = driver();
});
after(async () => {
  await cleanUp();
  await emulator.stop();
});
beforeEach(() => emulator.reset());

const calls = (key: string) => emulator.calls.get(key) ?? 0;
const stored = (vm: VmRef) => emulator.state.vms.get(vm.vmid);

async function running(): Promise<VmRef> {
  const vm = await pve.createVm(vmSpec());
  await pve.start(vm);
  return vm;
}

describe('proxmox driver', () => {
  test('ping reports the version and checks the node name', async () => {
    assert.deepEqual(await pve.ping(), { version: '8.2.4' });
    await rejectsWith(driver({ node: 'pve9' }).ping(), { kind: 'not_found', retryable: false });
  });

  test('createVm: a full clone with CPU, memory, cloud-init, tags and a grown disk; the password is never echoed', async () => {
    const spec = vmSpec();
    const vm = await pve.createVm(spec);
    assert.equal(vm.name, spec.name);
    assert.equal(vm.node, 'pve');
    const config = stored(vm)?.config ?? {};
    assert.equal(stored(vm)?.status, 'stopped');
    assert.match(config.scsi0 ?? '', new RegExp(`^local-lvm:vm-${vm.vmid}-disk-0,size=40G$`), 'a full clone, grown');
    assert.equal(config.cores, '2');
    assert.equal(config.memory, '4096');
    assert.equal(config.ciuser, 'root');
    assert.equal(config.ipconfig0, 'ip=203.0.113.10/24,gw=203.0.113.1');
    assert.equal(config.nameserver, '1.1.1.1 8.8.8.8');
    assert.equal(config.searchdomain, 'example.in');
    assert.equal(config.tags, spec.tags.join(';'));
    assert.doesNotMatch(config.sshkeys ?? '', /[ +]/, 'spaces as %20, a + as %2B');
    assert.deepEqual(decodeURIComponent(config.sshkeys ?? '').split('\n'), spec.cloudInit.sshKeys);
    assert.ok(emulator.checkPassword(vm.vmid, spec.cloudInit.password));
    const shown = await raw(emulator, 'GET', `/nodes/pve/qemu/${vm.vmid}/config`);
    assert.equal((shown.body.data as Record<string, unknown>).cipassword, '**********');
    assert.doesNotMatch(JSON.stringify(shown.body), new RegExp(spec.cloudInit.password));
    // The clone's own MAC (PVE gives a clone new ones), as the node shows it.
    const mac = /^virtio=((?:[0-9A-F]{2}:){5}[0-9A-F]{2}),bridge=/i.exec(config.net0 ?? '')?.[1];
    assert.ok(mac, config.net0);
    assert.deepEqual(vm.macs, [mac.toLowerCase()]);
    assert.notEqual(mac, /=([^,]+)/.exec(emulator.state.vms.get(spec.templateVmid)?.config.net0 ?? '')?.[1]);
    const { macs: _, ...ref } = vm;
    assert.deepEqual(await pve.findVm(spec.name), ref);
    assert.equal(await pve.findVm('hp-svc-none'), null);
  });

  test('macsOf: every NIC in order, either notation, lower case; a NIC without one is skipped', () => {
    assert.deepEqual(
      macsOf({
        net1: 'e1000=AA:BB:CC:00:11:22,bridge=vmbr1',
        net0: 'virtio=BC:24:11:5E:0A:01,bridge=vmbr0,firewall=1',
        net2: 'model=virtio,macaddr=02:00:00:00:00:0A,bridge=vmbr0',
        net3: 'virtio,bridge=vmbr0',
        scsi0: 'local-lvm:vm-1-disk-0,size=10G',
      }),
      ['bc:24:11:5e:0a:01', 'aa:bb:cc:00:11:22', '02:00:00:00:00:0a'],
    );
    assert.deepEqual(macsOf({}), []);
  });

  test('createVm twice with one name: one clone, one config write, the same VM', async () => {
    const spec = vmSpec();
    const first = await pve.createVm(spec);
    const second = await pve.createVm(spec);
    assert.deepEqual(second, first);
    assert.equal(calls('POST /nodes/:/qemu/:/clone'), 1);
    assert.equal(calls('PUT /nodes/:/qemu/:/config'), 1, 'settings already in place are not written again');
    assert.equal(calls('PUT /nodes/:/qemu/:/resize'), 1);
    assert.equal([...emulator.state.vms.values()].filter((v) => v.name === spec.name).length, 1);
  });

  test('power: start, stop and shutdown are idempotent; reboot and reset keep it running', async () => {
    const vm = await pve.createVm(vmSpec());
    assert.equal((await pve.status(vm)).power, 'stopped');
    await pve.start(vm);
    await pve.start(vm);
    assert.equal(calls('POST /nodes/:/qemu/:/status/start'), 1, 'a running VM is not started again');
    const live = await pve.status(vm);
    assert.equal(live.power, 'running');
    assert.equal(live.memoryTotalBytes, 4096 * 1024 ** 2);
    assert.equal(live.diskTotalBytes, 40 * 1024 ** 3);
    assert.ok(live.cpu !== null && live.cpu > 0 && live.cpu < 1 && live.cpus === 2);
    await pve.reboot(vm);
    await pve.reset(vm);
    assert.equal((await pve.status(vm)).power, 'running');
    await pve.shutdown(vm, 5);
    assert.equal((await pve.status(vm)).power, 'stopped');
    await pve.stop(vm);
    await pve.shutdown(vm);
    assert.equal(calls('POST /nodes/:/qemu/:/status/stop'), 0);
    assert.equal(calls('POST /nodes/:/qemu/:/status/shutdown'), 1);
  });

  test('reboot and reset of a stopped VM: the node says "not running" (conflict, final); the driver starts it', async () => {
    const vm = await pve.createVm(vmSpec());
    const client = clientFor(emulator);
    for (const action of ['reboot', 'reset']) {
      await rejectsWith(client.call('POST', `/nodes/pve/qemu/${vm.vmid}/status/${action}`), {
        kind: 'conflict',
        retryable: false,
        status: 500,
        message: new RegExp(`VM ${vm.vmid} not running`),
      });
    }
    await pve.reboot(vm);
    assert.equal((await pve.status(vm)).power, 'running');
    await pve.stop(vm);
    await pve.reset(vm);
    assert.equal((await pve.status(vm)).power, 'running');
  });

  test('a guest ignoring ACPI: shutdown is forced after its timeout (stopping meanwhile), reboot becomes a reset', async () => {
    const vm = await running();
    await emulator.setFaults({ ignoreAcpi: true });
    // A 5 s ACPI timeout: long enough that 'stopping' is seen even on a loaded machine.
    const shutdown = pve.shutdown(vm, 5);
    let power = '';
    while (power !== 'stopping') {
      power = (await pve.status(vm)).power;
      assert.ok(power === 'running' || power === 'stopping', `power ${power} before the forced stop`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await shutdown;
    assert.equal((await pve.status(vm)).power, 'stopped');
    await pve.start(vm);
    await pve.reboot(vm, 1);
    assert.equal(calls('POST /nodes/:/qemu/:/status/reset'), 1);
    assert.equal((await pve.status(vm)).power, 'running');
  });

  test('a paused VM counts as stopped and start resumes it', async () => {
    const vm = await running();
    const upid = await raw(emulator, 'POST', `/nodes/pve/qemu/${vm.vmid}/status/suspend`);
    await settle(emulator, upid.body.data as string);
    assert.equal((await pve.status(vm)).power, 'stopped');
    await pve.start(vm);
    assert.equal(calls('POST /nodes/:/qemu/:/status/resume'), 1);
    assert.equal((await pve.status(vm)).power, 'running');
  });

  test('powerStates: every VM of the node in one request with its utilisation, paused counted as stopped, templates left out', async () => {
    const up = await running();
    const down = await pve.createVm(vmSpec());
    const paused = await running();
    await settle(
      emulator,
      (await raw(emulator, 'POST', `/nodes/pve/qemu/${paused.vmid}/status/suspend`)).body.data as string,
    );
    const asked = calls('GET /nodes/:/qemu');
    const states = await pve.powerStates();
    assert.equal(calls('GET /nodes/:/qemu'), asked + 1);
    const GIB4 = 4096 * 1024 * 1024;
    const live = states.get(up.vmid);
    assert.deepEqual(
      { name: live?.name, power: live?.power, cpus: live?.cpus, total: live?.memoryTotalBytes },
      { name: up.name, power: 'running', cpus: 2, total: GIB4 },
    );
    // The same numbers status/current gives (the listing is each VM's vmstatus).
    assert.ok(live && live.cpu > 0 && live.cpu <= 1, `cpu ${live?.cpu}`);
    assert.ok(live && live.memoryBytes > 0 && live.memoryBytes <= GIB4);
    assert.deepEqual(states.get(down.vmid), {
      name: down.name,
      power: 'stopped',
      cpu: 0,
      cpus: 2,
      memoryBytes: 0,
      memoryTotalBytes: GIB4,
    });
    assert.equal(states.get(paused.vmid)?.power, 'stopped');
    assert.equal(states.get(paused.vmid)?.cpu, 0);
    assert.equal(states.has(9000), false, 'templates are not servers');
  });
  test('power state mapping from status, qmpstatus and lock', () => {
    assert.equal(powerOf({ status: 'running', qmpstatus: 'running' }), 'running');
    assert.equal(powerOf({ status: 'running', qmpstatus: 'prelaunch' }), 'starting');
    assert.equal(powerOf({ status: 'running', qmpstatus: 'shutdown' }), 'stopping');
    assert.equal(powerOf({ status: 'running', qmpstatus: 'paused' }), 'stopped');
    assert.equal(powerOf({ status: 'running', lock: 'suspending' }), 'stopping');
    assert.equal(powerOf({ status: 'running', qmpstatus: 'internal-error' }), 'unknown');
    assert.equal(powerOf({ status: 'stopped', lock: 'clone' }), 'stopped');
    assert.equal(powerOf({}), 'unknown');
  });

  test('metrics for every timeframe, oldest first; an unknown timeframe is refused before the node is asked', async () => {
    const vm = await running();
    for (const timeframe of TIMEFRAMES) {
      const points = await pve.metrics(vm, timeframe);
      assert.ok(points.length >= 60, timeframe);
      assert.ok(
        points.every((p, i) => i === 0 || p.time > (points[i - 1]?.time ?? 0)),
        timeframe,
      );
    }
    const hour = await pve.metrics(vm, 'hour');
    const last = hour.at(-1);
    assert.ok(last?.cpu && last.cpu <= 1 && last.memoryBytes && last.netInBytesPerSecond, 'a running VM has data');
    assert.equal(hour[0]?.cpu, null, 'no data from before the VM existed');
    await rejectsWith(pve.metrics(vm, 'decade' as 'hour'), { kind: 'rejected' });
    assert.equal(calls('GET /nodes/:/qemu/:/rrddata'), TIMEFRAMES.length + 1);
  });

  test('console tickets: VNC and serial for a running VM; a stopped one is a conflict', async () => {
    const vm = await running();
    const vnc = await pve.console(vm, 'vnc');
    assert.equal(vnc.kind, 'vnc');
    assert.ok(vnc.port >= 5900 && vnc.port <= 5999);
    assert.ok(vnc.password && vnc.ticket.startsWith('PVEVNC:'));
    const query = new URL(vnc.websocketPath, 'ws://node').searchParams;
    assert.equal(query.get('vncticket'), vnc.ticket);
    assert.equal(query.get('port'), String(vnc.port));
    assert.match(vnc.websocketPath, new RegExp(`^/api2/json/nodes/pve/qemu/${vm.vmid}/vncwebsocket\\?`));
    const serial = await pve.console(vm, 'serial');
    assert.equal(serial.password, null);
    assert.notEqual(serial.port, vnc.port);
    await pve.stop(vm);
    await rejectsWith(pve.console(vm, 'vnc'), { kind: 'conflict', message: /not running/ });
  });

  test('reinstall: same vmid and name, the new template, new password, left stopped; a missing template touches nothing', async () => {
    const spec = vmSpec();
    const vm = await running();
    const fresh = {
      ...spec,
      name: vm.name,
      templateVmid: 9001,
      cloudInit: { ...spec.cloudInit, password: 'N3w-Pass-x' },
    };
    const again = await pve.reinstall(vm, fresh);
    assert.deepEqual({ ...again, macs: undefined }, { ...vm, macs: undefined }, 'the same vmid, name and node');
    assert.equal(again.macs?.length, 1);
    assert.notDeepEqual(again.macs, vm.macs, 'a fresh clone has a new MAC address');
    const clone = [...emulator.state.tasks.values()].filter((t) => t.type === 'qmclone').at(-1);
    assert.equal(clone?.id, '9001');
    assert.equal(stored(vm)?.status, 'stopped');
    assert.ok(emulator.checkPassword(vm.vmid, 'N3w-Pass-x'));
    assert.match(stored(vm)?.config.scsi0 ?? '', new RegExp(`vm-${vm.vmid}-disk-0,size=40G`));
    await rejectsWith(pve.reinstall(vm, { ...fresh, templateVmid: 9999 }), { retryable: false });
    assert.ok(stored(vm), 'the VM is still there');
  });

  test('destroy: a running VM is stopped and deleted; twice is fine; afterwards status is not_found', async () => {
    const vm = await running();
    await pve.destroy(vm);
    assert.equal(stored(vm), undefined);
    await pve.destroy(vm);
    await rejectsWith(pve.status(vm), { kind: 'not_found' });
  });

  test('a vmid reused by another VM is never touched through the old reference', async () => {
    const old = await pve.createVm(vmSpec());
    await pve.destroy(old);
    const other = await pve.createVm(vmSpec());
    assert.equal(other.vmid, old.vmid, 'nextid hands out the lowest free id');
    await rejectsWith(pve.status(old), { kind: 'not_found' });
    await rejectsWith(pve.console(old, 'vnc'), { kind: 'not_found' });
    await rejectsWith(pve.start(old), { kind: 'not_found' });
    await pve.destroy(old);
    assert.equal(stored(other)?.name, other.name, 'the other VM survives');
  });
});

describe('proxmox driver under faults', () => {
  test('node down: unreachable, retryable, at once; the control paths still answer; back up, it works', async () => {
    await emulator.setFaults({ down: true });
    // "At once" without a clock: with a request timeout far beyond the test's, the answer can
    // only be `unreachable` from the cut connection, never a `timeout` the driver waited for.
    await rejectsWith(driver({ requestTimeoutMs: 3_600_000 }).ping(), { kind: 'unreachable', retryable: true });
    await rejectsWith(pve.ping(), { kind: 'unreachable', retryable: true });
    const up = await fetch(`${emulator.url}/__emulator/faults`, { method: 'POST', body: '{"down":false}' });
    assert.equal(up.status, 200);
    assert.equal((await pve.ping()).version, '8.2.4');
  });

  test('a node that accepts and never answers: timeout, retryable', async () => {
    await emulator.setFaults({ hang: true });
    await rejectsWith(driver({ requestTimeoutMs: 200 }).ping(), { kind: 'timeout', retryable: true });
  });

  test('a task that outlives the task deadline: timeout, retryable; it finishes on the node anyway', async () => {
    const slow = await startProxmoxEmulator({ taskDelayMs: 600, tokenSecret: emulator.tokenSecret });
    onCleanup(() => slow.stop());
    const impatient = driver({ taskTimeoutMs: 100 }, slow);
    const vm = await driver({}, slow).createVm(vmSpec());
    await rejectsWith(impatient.start(vm), { kind: 'timeout', retryable: true });
    await new Promise((r) => setTimeout(r, 700));
    await impatient.start(vm);
    assert.equal(slow.state.vms.get(vm.vmid)?.status, 'running');
  });

  test('500 internal error: unreachable, retryable, with the status', async () => {
    await emulator.setFaults({ errorRate: 1 });
    await rejectsWith(pve.findVm('x'), { kind: 'unreachable', retryable: true, status: 500 });
  });

  test('a wrong token: auth, not retryable, the secret nowhere; a bad config fails every call, not the constructor', async () => {
    const wrong = driver({ tokenSecret: `wrong-${CANARY}` });
    await rejectsWith(wrong.ping(), { kind: 'auth', retryable: false, status: 401 });
    await rejectsWith(driver({ endpoint: `https://root:${CANARY}@pve.example:8006` }).ping(), { kind: 'rejected' });
  });

  test('a node that echoes the token in its error text: redacted', async () => {
    await rejectsWith(driver({ endpoint: await startEchoNode() }).ping(), {
      message: /bad header PVEAPIToken=hostplane@pve!provision=\*\*\*/,
    });
  });

  test('the clone happened but its answer was lost: the retry finds the VM by name instead of cloning again', async () => {
    const spec = vmSpec();
    await emulator.setFaults({ loseNext: 'POST /nodes/:/qemu/:/clone' });
    await rejectsWith(pve.createVm(spec), { kind: 'unreachable', retryable: true });
    const vm = await pve.createVm(spec);
    assert.equal(vm.name, spec.name);
    assert.equal(calls('POST /nodes/:/qemu/:/clone'), 1, 'cloned once');
    assert.equal([...emulator.state.vms.values()].filter((v) => v.name === spec.name).length, 1);
    assert.ok(emulator.checkPassword(vm.vmid, spec.cloudInit.password));
  });

  test('a lost answer while polling a task is shrugged off', async () => {
    const vm = await pve.createVm(vmSpec());
    await emulator.setFaults({ loseNext: 'GET /nodes/:/tasks/:/status' });
    await pve.start(vm);
    assert.equal(stored(vm)?.status, 'running');
  });

  test('failed tasks: the exit status as a retryable error; a failed clone leaves nothing, the retry clones', async () => {
    const vm = await pve.createVm(vmSpec());
    await emulator.setFaults({ failTasks: 1 });
    await rejectsWith(pve.start(vm), {
      kind: 'rejected',
      retryable: true,
      message: /task qmstart failed: .*emulated task failure/,
    });
    assert.equal(stored(vm)?.status, 'stopped');
    const spec = vmSpec();
    await emulator.setFaults({ failTasks: 1 });
    await rejectsWith(pve.createVm(spec), { retryable: true });
    assert.equal(await pve.findVm(spec.name), null);
    assert.ok(await pve.createVm(spec));
  });

  test('latency within the request deadline is only slow', async () => {
    await emulator.setFaults({ latencyMs: 100 });
    assert.equal((await pve.ping()).version, '8.2.4');
  });

  const cert = selfSignedCert();
  test('HTTPS: refused without trust, works with the CA pinned or checks off', {
    skip: !cert && 'no openssl',
  }, async () => {
    const secure = await startProxmoxEmulator({ taskDelayMs: 5, tls: cert! });
    onCleanup(() => secure.stop());
    assert.match(secure.url, /^https:/);
    await rejectsWith(driver({}, secure).ping(), { kind: 'protocol', retryable: false });
    assert.equal((await driver({ tls: { ca: cert!.cert } }, secure).ping()).version, '8.2.4');
    assert.equal((await driver({ tls: { insecure: true } }, secure).ping()).version, '8.2.4');
  });
});

describe('proxmox emulator, as any API client sees it', () => {
  test('auth: 401 "No ticket" without a token, "Authentication failed!" with a wrong one; the space form works', async () => {
    const none = await raw(emulator, 'GET', '/version', { auth: null });
    assert.deepEqual([none.status, none.reason, none.body.message], [401, 'No ticket', 'No ticket\n']);
    const wrong = await raw(emulator, 'GET', '/version', { auth: `PVEAPIToken=${emulator.tokenId}=nope` });
    assert.deepEqual([wrong.status, wrong.reason], [401, 'Authentication failed!']);
    const spaced = `PVEAPIToken ${emulator.tokenId}=${emulator.tokenSecret}`;
    assert.equal((await raw(emulator, 'GET', '/version', { auth: spaced })).status, 200);
  });

  test('parameter errors are 400 with every bad parameter; handler errors carry the text in the reason phrase', async () => {
    const taken = await raw(emulator, 'GET', '/cluster/nextid', { params: { vmid: '9000' } });
    assert.deepEqual(
      [taken.status, taken.reason, taken.body.errors],
      [400, 'Parameter verification failed.', { vmid: 'VM 9000 already exists' }],
    );
    const clone = await raw(emulator, 'POST', '/nodes/pve/qemu/9000/clone', { json: { newid: 9001, full: true } });
    assert.deepEqual([clone.status, clone.reason], [500, 'unable to create VM 9001: config file already exists']);
    assert.equal(clone.body.message, 'unable to create VM 9001: config file already exists\n');
    const bad = await raw(emulator, 'PUT', '/nodes/pve/qemu/9000/config', {
      params: { cores: 'two', sshkeys: 'ssh-ed25519+AAAA', bogus: '1' },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body.errors ?? {}).sort(), ['bogus', 'cores', 'sshkeys']);
    const rrd = await raw(emulator, 'GET', '/nodes/pve/qemu/9000/rrddata');
    assert.deepEqual(rrd.body.errors, { timeframe: 'property is missing and it is not optional' });
    const nothing = await raw(emulator, 'GET', '/nodes/pve/qemu/9000/migrate');
    assert.equal(nothing.status, 501);
  });

  test('tasks: real UPIDs; start of a running VM and shutdown of a stopped one end in errors; logs', async () => {
    const vm = await running();
    const start = await raw(emulator, 'POST', `/nodes/pve/qemu/${vm.vmid}/status/start`);
    const upid = start.body.data as string;
    const hex = '[0-9A-F]{8}';
    assert.match(upid, new RegExp(`^UPID:pve:${hex}:${hex}:${hex}:qmstart:${vm.vmid}:hostplane@pve!provision:$`));
    assert.equal((await settle(emulator, upid)).exitstatus, `VM ${vm.vmid} already running`);
    await pve.stop(vm);
    const down = await raw(emulator, 'POST', `/nodes/pve/qemu/${vm.vmid}/status/shutdown`);
    assert.equal((await settle(emulator, down.body.data as string)).exitstatus, `VM ${vm.vmid} not running`);
    const log = await raw(emulator, 'GET', `/nodes/pve/tasks/${encodeURIComponent(upid)}/log`);
    const last = (log.body.data as { n: number; t: string }[]).at(-1);
    assert.deepEqual(last, { n: 2, t: `TASK ERROR: VM ${vm.vmid} already running` });
  });

  test('a state file keeps VMs and tasks across a restart', async () => {
    const stateFile = tempStateFile();
    const first = await startProxmoxEmulator({ taskDelayMs: 5, stateFile, tokenSecret: emulator.tokenSecret });
    const vm = await driver({}, first).createVm(vmSpec());
    await driver({}, first).start(vm);
    await first.stop();
    assert.ok(JSON.parse(readFileSync(stateFile, 'utf8')).tasks.length >= 3, 'clone, resize, start');
    const second = await startProxmoxEmulator({ taskDelayMs: 5, stateFile, tokenSecret: emulator.tokenSecret });
    onCleanup(() => second.stop());
    const again = driver({}, second);
    const { macs: _, ...ref } = vm;
    assert.deepEqual(await again.findVm(vm.name), ref, 'found by name: its identity, without the MACs');
    assert.equal((await again.status(vm)).power, 'running');
  });
});
