// The Proxmox VE driver against the emulator, over real HTTP: provisioning, power, metrics,
// consoles, reinstall, destroy, and every fault the driver must survive or report.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type ProxmoxEmulator, startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { type Hypervisor, UpstreamError, type VmSpec } from '../src/upstreams/hypervisor.ts';
import { createProxmoxHypervisor } from '../src/upstreams/proxmox/hypervisor.ts';

let emulator: ProxmoxEmulator;
let pve: Hypervisor & { close(): void };
let n = 0;

before(async () => {
  emulator = await startProxmoxEmulator({ taskDelayMs: 20, tokenSecret: 'f3c1c2d4-0000-4000-8000-CANARYSECRET' });
  pve = createProxmoxHypervisor({
    endpoint: emulator.url,
    node: emulator.node,
    tokenId: emulator.tokenId,
    tokenSecret: emulator.tokenSecret,
    pollIntervalMs: 10,
    requestTimeoutMs: 1500,
    taskTimeoutMs: 5000,
  });
});
after(async () => {
  pve.close();
  await emulator.stop();
});
beforeEach(async () => {
  await emulator.setFaults({
    latencyMs: 0,
    down: false,
    hang: false,
    errorRate: 0,
    loseResponses: 0,
    loseNext: null,
    failTasks: 0,
  });
});

function spec(overrides: Partial<VmSpec> = {}): VmSpec {
  n++;
  return {
    name: `hp-svc-${n}`,
    templateVmid: 9000,
    cores: 2,
    memoryMb: 4096,
    diskGb: 40,
    cloudInit: {
      hostname: `web${n}.example.in`,
      user: 'root',
      password: 'Gen3rated-Pass!',
      sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTestsOnlyxxxxxxxxxxxxxxxxxxx asha@laptop'],
      ipv4: { address: '203.0.113.10', prefix: 26, gateway: '203.0.113.1' },
      nameservers: ['1.1.1.1', '8.8.8.8'],
    },
    tags: ['hostplane', `svc-${n}`],
    ...overrides,
  };
}

const clones = () => emulator.calls.get('POST /nodes/:/qemu/:/clone') ?? 0;

async function rejectsUpstream(promise: Promise<unknown>, check: (e: UpstreamError) => void): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UpstreamError, String(error));
    check(error);
    assert.doesNotMatch(error.message, /CANARYSECRET/);
    return true;
  });
}

describe('proxmox driver', () => {
  test('ping reports the version', async () => {
    assert.equal((await pve.ping()).version, '8.2.4');
  });

  test('createVm clones, configures cloud-init, grows the disk; the password is not echoed back', async () => {
    const s = spec();
    const vm = await pve.createVm(s);
    assert.equal(vm.name, s.name);
    assert.ok(vm.vmid >= 100);
    const stored = emulator.state.vms.get(vm.vmid);
    assert.ok(stored);
    assert.equal(stored.cores, 2);
    assert.equal(stored.memoryMb, 4096);
    assert.equal(stored.diskGb, 40);
    assert.equal(stored.config.ipconfig0, 'ip=203.0.113.10/26,gw=203.0.113.1');
    assert.equal(decodeURIComponent(stored.config.sshkeys ?? ''), s.cloudInit.sshKeys[0]);
    assert.equal(stored.config.tags, `hostplane;svc-${n}`);
    assert.equal((await pve.status(vm)).power, 'stopped');
    assert.equal(await pve.findVm(s.name).then((r) => r?.vmid), vm.vmid);
  });

  test('createVm twice with one name: one clone, the same VM', async () => {
    const s = spec();
    const before = clones();
    const first = await pve.createVm(s);
    const second = await pve.createVm(s);
    assert.deepEqual(second, first);
    assert.equal(clones() - before, 1);
  });

  test('power: start, idempotent start, shutdown, stop of a stopped VM, reboot and reset of a stopped VM start it', async () => {
    const vm = await pve.createVm(spec());
    await pve.start(vm);
    assert.equal((await pve.status(vm)).power, 'running');
    await pve.start(vm);
    await pve.reboot(vm);
    await pve.reset(vm);
    assert.equal((await pve.status(vm)).power, 'running');
    await pve.shutdown(vm, 5);
    assert.equal((await pve.status(vm)).power, 'stopped');
    await pve.stop(vm);
    await pve.reboot(vm);
    assert.equal((await pve.status(vm)).power, 'running');
    await pve.stop(vm);
    await pve.reset(vm);
    const live = await pve.status(vm);
    assert.equal(live.power, 'running');
    assert.equal(live.memoryTotalBytes, 4096 * 1024 * 1024);
    assert.ok(live.cpu > 0 && live.cpu < 1);
  });

  test('metrics for every timeframe, oldest first; a bad one is rejected', async () => {
    const vm = await pve.createVm(spec());
    await pve.start(vm);
    for (const timeframe of ['hour', 'day', 'week', 'month', 'year'] as const) {
      const points = await pve.metrics(vm, timeframe);
      assert.ok(points.length > 10, timeframe);
      assert.ok(points.every((p, i) => i === 0 || p.time > (points[i - 1]?.time ?? 0)));
    }
    const recent = (await pve.metrics(vm, 'hour')).at(-1);
    assert.ok(recent && recent.cpu !== null && recent.memoryBytes !== null);
    await rejectsUpstream(pve.metrics(vm, 'decade' as 'hour'), (e) => {
      assert.equal(e.kind, 'rejected');
      assert.equal(e.retryable, false);
    });
  });

  test('console tickets for VNC and serial', async () => {
    const vm = await pve.createVm(spec());
    await pve.start(vm);
    const vnc = await pve.console(vm, 'vnc');
    assert.equal(vnc.kind, 'vnc');
    assert.ok(vnc.port >= 5900 && vnc.port <= 5999);
    assert.ok(vnc.password);
    assert.match(vnc.websocketPath, /\/vncwebsocket\?port=\d+&vncticket=/);
    const serial = await pve.console(vm, 'serial');
    assert.equal(serial.password, null);
    await pve.stop(vm);
    await rejectsUpstream(pve.console(vm, 'vnc'), (e) => assert.match(e.message, /not running/));
  });

  test('reinstall keeps vmid and name with a new template and settings; destroy twice is fine', async () => {
    const s = spec();
    const vm = await pve.createVm(s);
    await pve.start(vm);
    const again = await pve.reinstall(vm, {
      ...s,
      templateVmid: 9001,
      cloudInit: { ...s.cloudInit, password: 'N3w-Pass' },
    });
    assert.deepEqual(again, vm);
    const stored = emulator.state.vms.get(vm.vmid);
    assert.equal(stored?.status, 'stopped');
    assert.match(stored?.config.scsi0 ?? '', new RegExp(`vm-${vm.vmid}-disk`));
    await pve.start(vm);
    await pve.destroy(vm);
    assert.equal(emulator.state.vms.has(vm.vmid), false);
    await pve.destroy(vm);
    await rejectsUpstream(pve.status(vm), (e) => assert.equal(e.kind, 'not_found'));
  });
});

describe('proxmox driver under faults', () => {
  test('node down: unreachable, retryable, fast', async () => {
    await emulator.setFaults({ down: true });
    const started = Date.now();
    await rejectsUpstream(pve.ping(), (e) => {
      assert.equal(e.kind, 'unreachable');
      assert.equal(e.retryable, true);
    });
    assert.ok(Date.now() - started < 1000);
    await emulator.setFaults({ down: false });
    assert.equal((await pve.ping()).version, '8.2.4');
  });

  test('a node that hangs: timeout, retryable', async () => {
    await emulator.setFaults({ hang: true });
    await rejectsUpstream(pve.ping(), (e) => {
      assert.equal(e.kind, 'timeout');
      assert.equal(e.retryable, true);
    });
  });

  test('500s: retryable', async () => {
    await emulator.setFaults({ errorRate: 1 });
    await rejectsUpstream(pve.findVm('x'), (e) => assert.equal(e.retryable, true));
  });

  test('a wrong token: auth, not retryable, secret not in the message', async () => {
    const wrong = createProxmoxHypervisor({
      endpoint: emulator.url,
      node: emulator.node,
      tokenId: emulator.tokenId,
      tokenSecret: 'wrong-CANARYSECRET',
    });
    await rejectsUpstream(wrong.ping(), (e) => {
      assert.equal(e.kind, 'auth');
      assert.equal(e.retryable, false);
    });
    wrong.close();
  });

  test('the clone succeeded but its answer was lost: a retry finds the VM instead of cloning again', async () => {
    const s = spec();
    const before = clones();
    await emulator.setFaults({ loseNext: 'POST /nodes/:/qemu/:/clone' });
    await rejectsUpstream(pve.createVm(s), (e) => {
      assert.equal(e.kind, 'unreachable');
      assert.equal(e.retryable, true);
    });
    const vm = await pve.createVm(s);
    assert.equal(vm.name, s.name);
    assert.equal(clones() - before, 1, 'the retry did not clone again');
    assert.equal([...emulator.state.vms.values()].filter((v) => v.name === s.name).length, 1);
  });

  test('a failed task is an error with its exit status', async () => {
    const vm = await pve.createVm(spec());
    await emulator.setFaults({ failTasks: 1 });
    await rejectsUpstream(pve.start(vm), (e) => assert.match(e.message, /emulated task failure/));
  });

  test('latency is survived within the request timeout', async () => {
    await emulator.setFaults({ latencyMs: 100 });
    assert.equal((await pve.ping()).version, '8.2.4');
  });
});
