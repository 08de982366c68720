// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// VM snapshots through the Proxmox VE driver against the emulated node (issue 16): create,
// list, rollback of a running and of a stopped VM (config and disk contents restored, the VM
// stopped and started again as PVE does), delete, calls repeated after a lost answer, locks
// held by other tasks, names, and failed tasks; plus the node's own answers, as PVE gives them.

import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type ProxmoxEmulator, startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { templateConfig, type Vm } from '../../emulators/src/proxmox/state.ts';
import type { Hypervisor, VmRef } from '../src/upstreams/hypervisor.ts';
import {
  CANARY,
  cleanUp,
  driverFor,
  raw,
  rejectsWith,
  settle,
  tempStateFile,
  vmSpec,
} from './support/proxmox-fixtures.ts';

let emulator: ProxmoxEmulator;
let pve: Hypervisor;

before(async () => {
  emulator = await startProxmoxEmulator({ taskDelayMs: 20, tokenSecret: `f3c1c2d4-0000-4000-8000-${CANARY}` });
  pve = driverFor(emulator);
});
after(async () => {
  await cleanUp();
  await emulator.stop();
});
beforeEach(() => emulator.reset());

const calls = (key: string) => emulator.calls.get(key) ?? 0;
const stored = (vm: VmRef) => {
  const found = emulator.state.vms.get(vm.vmid);
  assert.ok(found, `VM ${vm.vmid} is on the node`);
  return found;
};
const CREATE = 'POST /nodes/:/qemu/:/snapshot';
const LIST = 'GET /nodes/:/qemu/:/snapshot';

async function running(): Promise<VmRef> {
  const vm = await pve.createVm(vmSpec());
  await pve.start(vm);
  return vm;
}

/** Change what a snapshot must bring back: memory, CPU, cloud-init user, and a file on the disk. */
async function changeEverything(vm: VmRef): Promise<void> {
  const answer = await raw(emulator, 'PUT', `/nodes/pve/qemu/${vm.vmid}/config`, {
    params: { memory: '8192', cores: '4', ciuser: 'admin' },
  });
  assert.equal(answer.status, 200, answer.reason);
  stored(vm).disk = { '/etc/motd': 'after the upgrade', '/var/lib/app/new.db': 'new' };
}

function assertRestored(vm: VmRef): void {
  const now = stored(vm);
  assert.equal(now.config.memory, '4096');
  assert.equal(now.config.cores, '2');
  assert.equal(now.config.ciuser, 'root');
  assert.equal(now.memoryMb, 4096);
  assert.equal(now.cores, 2);
  assert.deepEqual(now.disk, { '/etc/motd': 'before the upgrade' });
}

/** A running VM put straight onto a node (no clone task to wait for). */
function placeRunningVm(node: ProxmoxEmulator, vmid: number, name: string): VmRef {
  const vm: Vm = {
    vmid,
    name,
    template: false,
    status: 'stopped',
    qmpstatus: null,
    lock: null,
    cores: 1,
    memoryMb: 1024,
    diskGb: 10,
    config: { ...templateConfig(vmid, name), scsi0: `local-lvm:vm-${vmid}-disk-0,size=10G` },
    createdAt: Date.now(),
    startedAt: null,
    runs: [],
  };
  node.state.vms.set(vmid, vm);
  node.state.powerOn(vm);
  return { node: node.node, vmid, name };
}

describe('proxmox snapshots: create, list, rollback, delete', () => {
  test('create and list: oldest first with description, time, parent; the VM keeps running; `current` left out', async () => {
    const vm = await running();
    assert.deepEqual(await pve.snapshots(vm), []);
    await pve.createSnapshot(vm, 'before-upgrade', 'Before the kernel upgrade');
    await pve.createSnapshot(vm, 'after', '');
    const list = await pve.snapshots(vm);
    assert.deepEqual(
      list.map(({ createdAt: _, ...s }) => s),
      [
        { name: 'before-upgrade', description: 'Before the kernel upgrade', parent: null, withRam: false },
        { name: 'after', description: '', parent: 'before-upgrade', withRam: false },
      ],
    );
    for (const s of list) {
      assert.ok(s.createdAt !== null && !Number.isNaN(Date.parse(s.createdAt)), `an ISO time: ${s.createdAt}`);
    }
    assert.equal(stored(vm).status, 'running');
    assert.equal(stored(vm).lock, null);
    // The node's own list ends with "You are here!", whose parent is the newest snapshot.
    const shown = (await raw(emulator, 'GET', `/nodes/pve/qemu/${vm.vmid}/snapshot`)).body.data as Record<
      string,
      unknown
    >[];
    const current = shown.find((s) => s.name === 'current');
    assert.equal(current?.parent, 'after');
    assert.equal(current?.running, 1);
    assert.equal(current?.description, 'You are here!');
    assert.equal(shown.length, 3);
  });

  test('creating a snapshot that exists is success and changes nothing', async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'daily', 'first');
    await pve.createSnapshot(vm, 'daily', 'second');
    assert.equal(calls(CREATE), 1, 'the node is asked once');
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => [s.name, s.description]),
      [['daily', 'first']],
    );
  });

  test('rollback of a running VM: stopped, config and disk restored, started again', async () => {
    const vm = await running();
    stored(vm).disk = { '/etc/motd': 'before the upgrade' };
    await pve.createSnapshot(vm, 'base', 'clean install');
    await changeEverything(vm);
    const runsBefore = stored(vm).runs?.length ?? 0;
    await pve.rollbackSnapshot(vm, 'base');
    assertRestored(vm);
    assert.equal(stored(vm).status, 'running');
    assert.equal((await pve.status(vm)).power, 'running');
    const runs = stored(vm).runs ?? [];
    assert.equal(runs.length, runsBefore + 1, 'one power-off and one power-on: a stop and a start, not a reboot');
    assert.notEqual(runs.at(-2)?.end, null);
    assert.equal(calls('POST /nodes/:/qemu/:/snapshot/base/rollback'), 1);
    assert.equal(calls('POST /nodes/:/qemu/:/status/start'), 1, 'started by the rollback task itself (start=1)');
    assert.equal(stored(vm).lock, null);
    assert.equal(stored(vm).parent, 'base');
    // The snapshot is still there to roll back to again.
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => s.name),
      ['base'],
    );
  });

  test('rollback of a stopped VM: restored and left stopped', async () => {
    const vm = await pve.createVm(vmSpec());
    stored(vm).disk = { '/etc/motd': 'before the upgrade' };
    await pve.createSnapshot(vm, 'base', '');
    await changeEverything(vm);
    await pve.rollbackSnapshot(vm, 'base');
    assertRestored(vm);
    assert.equal(stored(vm).status, 'stopped');
    assert.equal((stored(vm).runs ?? []).length, 0, 'never powered on');
  });

  test('rollback to a snapshot with RAM (taken on the node) resumes the VM, as PVE does', async () => {
    const vm = await running();
    const upid = (
      await raw(emulator, 'POST', `/nodes/pve/qemu/${vm.vmid}/snapshot`, { params: { snapname: 'live', vmstate: '1' } })
    ).body.data as string;
    assert.equal((await settle(emulator, upid)).exitstatus, 'OK');
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => [s.name, s.withRam]),
      [['live', true]],
    );
    await pve.stop(vm);
    await pve.rollbackSnapshot(vm, 'live');
    assert.equal(stored(vm).status, 'running');
  });

  test('a node from before rollback had `start` (400 on it): rolled back, then started by the driver', async () => {
    // In front of the emulator, a proxy that answers as such a node does to `start`.
    const old = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && /\/rollback$/.test(req.url ?? '') && /(^|&)start=/.test(body.toString())) {
          const errors = {
            start: 'property is not defined in schema and the schema does not allow additional properties',
          };
          res.writeHead(400, 'Parameter verification failed.', { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ data: null, errors }));
        }
        const forward = request(`${emulator.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
          answer.pipe(res);
        });
        forward.end(body);
      });
    });
    await new Promise<void>((r) => old.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (old.address() as { port: number }).port;
      const driver = driverFor(emulator, { endpoint: `http://127.0.0.1:${port}` });
      const vm = await running();
      stored(vm).disk = { '/etc/motd': 'before the upgrade' };
      await driver.createSnapshot(vm, 'base', '');
      await changeEverything(vm);
      await driver.rollbackSnapshot(vm, 'base');
      assertRestored(vm);
      assert.equal(stored(vm).status, 'running');
      assert.equal(calls('POST /nodes/:/qemu/:/snapshot/base/rollback'), 1, 'the refused call never reached the node');
      assert.equal(calls('POST /nodes/:/qemu/:/status/start'), 2, 'started by the driver after the rollback');
    } finally {
      await new Promise((r) => old.close(r));
    }
  });

  test('rollback to a snapshot that does not exist: rejected, final, the node not asked to roll back', async () => {
    const vm = await running();
    await rejectsWith(pve.rollbackSnapshot(vm, 'nope'), {
      kind: 'rejected',
      retryable: false,
      message: /snapshot 'nope' of VM \d+ does not exist/,
    });
    assert.equal(calls('POST /nodes/:/qemu/:/snapshot/nope/rollback'), 0);
    assert.equal(stored(vm).status, 'running', 'not stopped for nothing');
  });

  test('delete: children get the parent of the deleted one; deleting again or a name never used is success', async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'one', '');
    await pve.createSnapshot(vm, 'two', '');
    await pve.createSnapshot(vm, 'three', '');
    await pve.deleteSnapshot(vm, 'two');
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => [s.name, s.parent]),
      [
        ['one', null],
        ['three', 'one'],
      ],
    );
    await pve.deleteSnapshot(vm, 'two');
    await pve.deleteSnapshot(vm, 'never');
    assert.equal(calls('DELETE /nodes/:/qemu/:/snapshot/two'), 1);
    assert.equal(calls('DELETE /nodes/:/qemu/:/snapshot/never'), 0);
    await pve.deleteSnapshot(vm, 'three');
    const shown = (await raw(emulator, 'GET', `/nodes/pve/qemu/${vm.vmid}/snapshot`)).body.data as Record<
      string,
      unknown
    >[];
    assert.equal(
      shown.find((s) => s.name === 'current')?.parent,
      'one',
      'the current state descends from what is left',
    );
    assert.equal(stored(vm).status, 'running');
  });

  test('snapshots of a vmid that now belongs to another VM: not_found, nothing touched', async () => {
    const vm = await running();
    const stranger = { ...vm, name: 'hp-svc-someone-else' };
    await rejectsWith(pve.snapshots(stranger), { kind: 'not_found', retryable: false });
    await rejectsWith(pve.createSnapshot(stranger, 'x1', ''), { kind: 'not_found' });
    await rejectsWith(pve.rollbackSnapshot(stranger, 'x1'), { kind: 'not_found' });
    await rejectsWith(pve.deleteSnapshot(stranger, 'x1'), { kind: 'not_found' });
    assert.equal(calls(CREATE), 0);
    assert.equal(calls(LIST), 0);
  });

  test('snapshots are kept in the state file across a restart of the node', async () => {
    const file = tempStateFile();
    const node = await startProxmoxEmulator({ taskDelayMs: 20, stateFile: file });
    const driver = driverFor(node);
    const vm = await driver.createVm(vmSpec());
    node.state.vms.get(vm.vmid)!.disk = { '/etc/motd': 'kept' };
    await driver.createSnapshot(vm, 'kept', 'across restarts');
    await node.stop();
    const again = await startProxmoxEmulator({ taskDelayMs: 20, stateFile: file, tokenSecret: node.tokenSecret });
    try {
      const list = await driverFor(again).snapshots(vm);
      assert.deepEqual(
        list.map((s) => [s.name, s.description]),
        [['kept', 'across restarts']],
      );
      again.state.vms.get(vm.vmid)!.disk = {};
      await driverFor(again).rollbackSnapshot(vm, 'kept');
      assert.deepEqual(again.state.vms.get(vm.vmid)?.disk, { '/etc/motd': 'kept' });
    } finally {
      await again.stop();
    }
  });
});

describe('proxmox snapshots: names', () => {
  test('names PVE would refuse are rejected before the node is asked', async () => {
    const vm = await running();
    const bad = [
      'a',
      '1abc',
      '_x',
      'has space',
      'dot.ted',
      'ümlaut',
      'x'.repeat(41),
      'current',
      'pending',
      'Pending',
      '',
    ];
    for (const name of bad) {
      await rejectsWith(pve.createSnapshot(vm, name, ''), { kind: 'rejected', retryable: false });
      await rejectsWith(pve.rollbackSnapshot(vm, name), { kind: 'rejected', retryable: false });
      await rejectsWith(pve.deleteSnapshot(vm, name), { kind: 'rejected', retryable: false });
    }
    assert.equal(calls(CREATE), 0);
    assert.equal(calls(LIST), 0);
    for (const name of ['A1', 'before_upgrade-2', `z${'9'.repeat(39)}`]) await pve.createSnapshot(vm, name, '');
    assert.equal((await pve.snapshots(vm)).length, 3);
  });

  test('a description over 8 KiB is refused', async () => {
    const vm = await running();
    await rejectsWith(pve.createSnapshot(vm, 'long', 'x'.repeat(8193)), { kind: 'rejected', retryable: false });
  });

  test('the node refuses them as PVE does: 400 for the format and length, 500 for reserved names', async () => {
    const vm = await running();
    const path = `/nodes/pve/qemu/${vm.vmid}/snapshot`;
    const format = await raw(emulator, 'POST', path, { params: { snapname: '1bad' } });
    assert.equal(format.status, 400);
    assert.equal(format.body.errors?.snapname, "invalid format - invalid configuration ID '1bad'");
    const long = await raw(emulator, 'POST', path, { params: { snapname: `a${'b'.repeat(40)}` } });
    assert.equal(long.body.errors?.snapname, 'value may only be 40 characters long');
    const missing = await raw(emulator, 'POST', path, { params: {} });
    assert.equal(missing.body.errors?.snapname, 'property is missing and it is not optional');
    const current = await raw(emulator, 'POST', path, { params: { snapname: 'current' } });
    assert.equal(current.status, 500);
    assert.equal(current.reason, "unable to use snapshot name 'current' (reserved name)");
    const rollback = await raw(emulator, 'POST', `${path}/9bad/rollback`);
    assert.equal(rollback.status, 400);
  });

  test("the node's task failures read as PVE's: name used, snapshot missing", async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'used', '');
    const path = `/nodes/pve/qemu/${vm.vmid}/snapshot`;
    const taken = (await raw(emulator, 'POST', path, { params: { snapname: 'used' } })).body.data as string;
    assert.equal((await settle(emulator, taken)).exitstatus, "snapshot name 'used' already used");
    const gone = (await raw(emulator, 'DELETE', `${path}/gone`)).body.data as string;
    assert.equal((await settle(emulator, gone)).exitstatus, "snapshot 'gone' does not exist");
    const back = (await raw(emulator, 'POST', `${path}/gone/rollback`)).body.data as string;
    assert.equal((await settle(emulator, back)).exitstatus, "snapshot 'gone' does not exist");
    assert.equal(stored(vm).status, 'running', 'a rollback that found nothing stopped nothing');
  });
});

describe('proxmox snapshots: lost answers, locks, failed tasks', () => {
  test('create: the answer was lost after the node took it; the retry finds it and asks nothing more', async () => {
    const vm = await running();
    await emulator.setFaults({ loseNext: CREATE });
    await rejectsWith(pve.createSnapshot(vm, 'nightly', 'n'), { kind: 'unreachable', retryable: true });
    await pve.createSnapshot(vm, 'nightly', 'n');
    assert.equal(calls(CREATE), 1);
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => s.name),
      ['nightly'],
    );
  });

  test('delete: the answer was lost; the retry sees it gone', async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'old', '');
    await emulator.setFaults({ loseNext: 'DELETE /nodes/:/qemu/:/snapshot/old' });
    await rejectsWith(pve.deleteSnapshot(vm, 'old'), { kind: 'unreachable', retryable: true });
    await pve.deleteSnapshot(vm, 'old');
    assert.equal(calls('DELETE /nodes/:/qemu/:/snapshot/old'), 1);
    assert.deepEqual(await pve.snapshots(vm), []);
  });

  test('rollback: the answer was lost; the retry rolls back again and the VM ends as the snapshot, running', async () => {
    const vm = await running();
    stored(vm).disk = { '/etc/motd': 'before the upgrade' };
    await pve.createSnapshot(vm, 'base', '');
    await changeEverything(vm);
    await emulator.setFaults({ loseNext: 'POST /nodes/:/qemu/:/snapshot/base/rollback' });
    await rejectsWith(pve.rollbackSnapshot(vm, 'base'), { kind: 'unreachable', retryable: true });
    await pve.rollbackSnapshot(vm, 'base');
    assertRestored(vm);
    assert.equal(stored(vm).status, 'running');
  });

  test('another task holds the lock: the driver waits for it, then snapshots', async () => {
    const vm = await running();
    stored(vm).lock = 'backup';
    const release = setTimeout(() => {
      stored(vm).lock = null;
    }, 100);
    try {
      await pve.createSnapshot(vm, 'after-backup', '');
    } finally {
      clearTimeout(release);
    }
    assert.equal(calls(CREATE), 1, 'asked only once the lock was gone');
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => s.name),
      ['after-backup'],
    );
  });

  test('a lock that never goes away: timeout, retryable, nothing asked', async () => {
    const vm = await running();
    stored(vm).lock = 'backup';
    try {
      await rejectsWith(driverFor(emulator, { taskTimeoutMs: 200 }).rollbackSnapshot(vm, 'whatever'), {
        kind: 'timeout',
        retryable: true,
        message: /still locked \(backup\)/,
      });
    } finally {
      stored(vm).lock = null;
    }
    assert.equal(calls('POST /nodes/:/qemu/:/snapshot/whatever/rollback'), 0);
  });

  test('a lock taken between our look and the task: the node fails the task "VM is locked"; the driver waits and retries', async () => {
    const vm = await running();
    const record = emulator.calls.set.bind(emulator.calls);
    let struck = false;
    // The moment the node receives the snapshot request, a backup takes the VM for 100 ms.
    emulator.calls.set = (key, value) => {
      if (key === CREATE && !struck) {
        struck = true;
        stored(vm).lock = 'backup';
        setTimeout(() => {
          stored(vm).lock = null;
        }, 100);
      }
      return record(key, value);
    };
    try {
      await pve.createSnapshot(vm, 'raced', '');
    } finally {
      emulator.calls.set = record;
    }
    assert.equal(calls(CREATE), 2, 'the first task failed on the lock, the second took the snapshot');
    assert.deepEqual(
      (await pve.snapshots(vm)).map((s) => s.name),
      ['raced'],
    );
  });

  test('two snapshots asked at once: both taken, one after the other (the node locks the VM meanwhile)', async () => {
    const vm = await running();
    await Promise.all([pve.createSnapshot(vm, 'left', ''), pve.createSnapshot(vm, 'right', '')]);
    assert.deepEqual((await pve.snapshots(vm)).map((s) => s.name).sort(), ['left', 'right']);
    assert.equal(stored(vm).lock, null);
  });

  test('while a task runs the node holds the lock: `snapshot` (a second snapshot fails), `rollback` (the VM stopped)', async () => {
    // Tasks of 1.5 s here, so what the node shows while one runs can be seen.
    const slow = await startProxmoxEmulator({ taskDelayMs: 1500 });
    try {
      const vm = placeRunningVm(slow, 4242, 'hp-svc-slow');
      const path = `/nodes/pve/qemu/${vm.vmid}/snapshot`;
      const current = async () =>
        (await raw(slow, 'GET', `/nodes/pve/qemu/${vm.vmid}/status/current`)).body.data as Record<string, unknown>;
      const first = (await raw(slow, 'POST', path, { params: { snapname: 'first' } })).body.data as string;
      assert.match(first, /^UPID:pve:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmsnapshot:4242:/);
      assert.equal((await current()).lock, 'snapshot');
      assert.equal((await current()).status, 'running', 'a snapshot does not stop the VM');
      const second = (await raw(slow, 'POST', path, { params: { snapname: 'second' } })).body.data as string;
      assert.equal((await settle(slow, first)).exitstatus, 'OK');
      assert.equal((await settle(slow, second)).exitstatus, 'VM is locked (snapshot)');

      const back = (await raw(slow, 'POST', `${path}/first/rollback`, { params: { start: '1' } })).body.data as string;
      assert.match(back, /:qmrollback:4242:/);
      const during = await current();
      assert.equal(during.lock, 'rollback');
      assert.equal(during.status, 'stopped', 'PVE stops the VM before it rolls back');
      assert.equal((await settle(slow, back)).exitstatus, 'OK');
      const done = await current();
      assert.equal(done.status, 'running', 'start=1: running again');
      assert.equal(done.lock, undefined);
    } finally {
      await slow.stop();
    }
  });

  test('failed tasks: create leaves nothing and the VM unlocked; the retry succeeds', async () => {
    const vm = await running();
    await emulator.setFaults({ failTasks: 1 });
    await rejectsWith(pve.createSnapshot(vm, 'flaky', ''), {
      kind: 'rejected',
      retryable: true,
      message: /task qmsnapshot failed: .*emulated task failure/,
    });
    assert.deepEqual(await pve.snapshots(vm), []);
    assert.equal(stored(vm).lock, null);
    await pve.createSnapshot(vm, 'flaky', '');
    assert.equal((await pve.snapshots(vm)).length, 1);
  });

  test('failed tasks: a half-deleted snapshot is hidden from the list, and the retry deletes it', async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'doomed', '');
    await emulator.setFaults({ failTasks: 1 });
    await rejectsWith(pve.deleteSnapshot(vm, 'doomed'), {
      retryable: true,
      message: /task qmdelsnapshot failed/,
    });
    assert.deepEqual(await pve.snapshots(vm), [], 'marked `delete` on the node: not offered for rollback');
    assert.equal(stored(vm).snapshots?.[0]?.snapstate, 'delete');
    await pve.deleteSnapshot(vm, 'doomed');
    assert.deepEqual(stored(vm).snapshots, []);
    // A half-deleted snapshot's name cannot be taken again until it is gone.
    await pve.createSnapshot(vm, 'doomed', '');
  });

  test('failed tasks: a failed rollback is reported; the VM is not left locked', async () => {
    const vm = await running();
    await pve.createSnapshot(vm, 'base', '');
    await emulator.setFaults({ failTasks: 1 });
    await rejectsWith(pve.rollbackSnapshot(vm, 'base'), {
      kind: 'rejected',
      retryable: true,
      message: /task qmrollback failed/,
    });
    assert.equal(stored(vm).lock, null);
    // PVE had stopped the VM before the failure; the driver's retry rolls back and, the VM now
    // being stopped, leaves it stopped (it cannot know it ran before the first attempt).
    await pve.rollbackSnapshot(vm, 'base');
    assert.equal(stored(vm).status, 'stopped');
  });
});
