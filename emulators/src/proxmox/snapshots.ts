// Snapshot paths (upstreams.md §2.4; qemu-server `API2/Qemu.pm`, pve-guest-common
// `AbstractConfig.pm`): list with its `current` pseudo-entry, create, rollback, delete. As on
// PVE, each mutation answers a UPID at once and makes its checks when the task starts (a taken
// name, a missing snapshot, a lock are failed tasks, not refused calls), holds the VM's lock
// (`snapshot`, `rollback`, `snapshot-delete`) while it runs, and a rollback stops the VM,
// restores config and disk contents, and starts it only when asked (or the snapshot has RAM).

import { any, bool, isTrue, type Schema, verify } from './params.ts';
import type { Snapshot, Vm } from './state.ts';
import { type ApiContext, PveError, startTask } from './tasks.ts';
import { digestOf, vmOf } from './vms.ts';

/** PVE's `pve-snapshot-name`: format `pve-configid` (`[a-z][a-z0-9_-]+`, case-insensitive), at most 40 long. */
const NAME: Schema = {
  snapname: (v) =>
    !/^[a-z][a-z0-9_-]+$/i.test(v)
      ? `invalid format - invalid configuration ID '${v}'`
      : v.length > 40
        ? 'value may only be 40 characters long'
        : null,
};

function snapshotsOf(vm: Vm): Snapshot[] {
  vm.snapshots ??= [];
  return vm.snapshots;
}

function checkName(name: string): void {
  verify({ snapname: name }, NAME);
}

/** GET …/snapshot: every snapshot, then `current` ("You are here!"), as PVE lists them. */
export function listSnapshots(
  ctx: ApiContext,
  vmid: string,
  params: Record<string, string>,
): Record<string, unknown>[] {
  verify(params, {});
  const vm = vmOf(ctx, vmid);
  // PVE walks a hash: the order means nothing. Sorted by name here, so clients must sort themselves.
  const entries = [...snapshotsOf(vm)]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((s) => ({
      name: s.name,
      snaptime: s.snaptime,
      vmstate: s.vmstate ? 1 : 0,
      description: s.description,
      ...(s.parent ? { parent: s.parent } : {}),
      ...(s.snapstate ? { snapstate: s.snapstate } : {}),
    }));
  return [
    ...entries,
    {
      name: 'current',
      digest: digestOf(vm),
      running: vm.status === 'running' ? 1 : 0,
      description: 'You are here!',
      ...(vm.parent ? { parent: vm.parent } : {}),
    },
  ];
}

/** POST …/snapshot {snapname, vmstate?, description?}: a `qmsnapshot` task. */
export function createSnapshot(ctx: ApiContext, vmid: string, params: Record<string, string>): string {
  verify(params, { ...NAME, vmstate: bool, description: any }, ['snapname']);
  const name = params.snapname ?? '';
  // The only checks PVE makes before forking the task.
  if (name === 'current') throw new PveError(500, "unable to use snapshot name 'current' (reserved name)");
  if (name.toLowerCase() === 'pending')
    throw new PveError(500, "unable to use snapshot name 'pending' (reserved name)");
  const vm = vmOf(ctx, vmid);
  let problem: string | null = null;
  let taken: Snapshot | null = null;
  return startTask(ctx, {
    type: 'qmsnapshot',
    id: vmid,
    begin: () => {
      problem = vm.template
        ? "you can't take a snapshot if it's a template"
        : vm.lock
          ? `VM is locked (${vm.lock})`
          : snapshotsOf(vm).some((s) => s.name === name)
            ? `snapshot name '${name}' already used`
            : null;
      if (problem) return;
      vm.lock = 'snapshot';
      taken = {
        name,
        description: params.description ?? '',
        snaptime: Math.floor(Date.now() / 1000),
        // RAM is saved only from a running VM.
        vmstate: isTrue(params.vmstate) && vm.status === 'running',
        parent: vm.parent ?? null,
        snapstate: 'prepare',
        config: { ...vm.config },
        cores: vm.cores,
        memoryMb: vm.memoryMb,
        diskGb: vm.diskGb,
        disk: { ...(vm.disk ?? {}) },
      };
      snapshotsOf(vm).push(taken);
    },
    work: (log) => {
      if (problem) throw new Error(problem);
      if (!taken) return;
      for (const key of Object.keys(vm.config).filter((k) => /^(scsi|virtio|sata)\d+$/.test(k))) {
        log(`snapshotting '${key}' (${vm.config[key]})`);
      }
      taken.snapstate = null;
      vm.parent = name;
    },
    settle: (ok) => {
      if (problem) return;
      vm.lock = null;
      // PVE cleans a failed snapshot up (snapshot_delete with force).
      if (!ok) vm.snapshots = snapshotsOf(vm).filter((s) => s !== taken);
    },
  });
}

/** POST …/snapshot/{snapname}/rollback {start?}: a `qmrollback` task. */
export function rollbackSnapshot(ctx: ApiContext, vmid: string, name: string, params: Record<string, string>): string {
  checkName(name);
  verify(params, { start: bool });
  const vm = vmOf(ctx, vmid);
  const startAfter = isTrue(params.start);
  let problem: string | null = null;
  let target: Snapshot | undefined;
  let stopped = false;
  return startTask(ctx, {
    type: 'qmrollback',
    id: vmid,
    begin: () => {
      target = snapshotsOf(vm).find((s) => s.name === name);
      problem = vm.template
        ? "you can't rollback if vm is a template"
        : !target
          ? `snapshot '${name}' does not exist`
          : target.snapstate
            ? `unable to rollback to incomplete snapshot (snapstate = ${target.snapstate})`
            : vm.lock
              ? `VM is locked (${vm.lock})`
              : null;
      if (problem) return;
      // PVE stops the VM first (a hard stop), then holds the `rollback` lock.
      if (vm.status === 'running') {
        ctx.state.powerOff(vm);
        stopped = true;
      }
      vm.lock = 'rollback';
    },
    work: (log) => {
      if (problem) throw new Error(problem);
      if (!target) return;
      if (stopped) log('VM stopped for the rollback');
      // The config returns to the snapshot's; the VM's description and the snapshot list stay.
      const description = vm.config.description;
      vm.config = { ...target.config };
      if (description !== undefined) vm.config.description = description;
      else delete vm.config.description;
      vm.name = vm.config.name ?? vm.name;
      vm.cores = target.cores;
      vm.memoryMb = target.memoryMb;
      vm.diskGb = target.diskGb;
      vm.disk = { ...target.disk };
      vm.parent = name;
      log(`rolled back to snapshot '${name}'`);
      if (target.vmstate || startAfter) {
        ctx.state.powerOn(vm);
        log(target.vmstate ? 'VM resumed from the saved RAM' : 'VM started');
      }
    },
    settle: () => {
      if (!problem) vm.lock = null;
    },
  });
}

/** DELETE …/snapshot/{snapname} {force?}: a `qmdelsnapshot` task. */
export function deleteSnapshot(ctx: ApiContext, vmid: string, name: string, params: Record<string, string>): string {
  checkName(name);
  verify(params, { force: bool });
  const vm = vmOf(ctx, vmid);
  let problem: string | null = null;
  let target: Snapshot | undefined;
  return startTask(ctx, {
    type: 'qmdelsnapshot',
    id: vmid,
    begin: () => {
      target = snapshotsOf(vm).find((s) => s.name === name);
      problem = !target
        ? `snapshot '${name}' does not exist`
        : vm.lock
          ? `VM is locked (${vm.lock})`
          : vm.template
            ? "you can't delete a snapshot if vm is a template"
            : null;
      if (problem || !target) return;
      vm.lock = 'snapshot-delete';
      target.snapstate = 'delete';
    },
    work: (log) => {
      if (problem) throw new Error(problem);
      if (!target) return;
      const parent = target.parent;
      // Whatever descended from it now descends from its parent.
      if (vm.parent === name) vm.parent = parent;
      for (const other of snapshotsOf(vm)) if (other.parent === name) other.parent = parent;
      vm.snapshots = snapshotsOf(vm).filter((s) => s !== target);
      log(`deleted snapshot '${name}'`);
    },
    // A failed delete leaves the snapshot marked `delete` (a retry finishes it); PVE would also
    // keep the lock until `qm unlock`, which the emulator spares its users.
    settle: () => {
      if (!problem) vm.lock = null;
    },
  });
}
