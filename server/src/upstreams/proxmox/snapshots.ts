// VM snapshots on Proxmox VE (qemu-server `API2/Qemu.pm`, pve-guest-common `AbstractConfig.pm`):
// list, create, rollback and delete, each a task that holds the VM's lock (`snapshot`,
// `rollback`, `snapshot-delete`). PVE checks names, locks and existence inside the task, so
// refusals arrive as failed tasks; the driver looks first (lock, list) and reads those texts
// when it raced someone. The snapshots it takes hold disks and config, not RAM.

import { UpstreamError } from '../errors.ts';
import { snapshotNameProblem, type VmRef, type VmSnapshot } from '../hypervisor.ts';
import type { ProxmoxClient } from './client.ts';
import { num, powerOf, type QemuStatus } from './mapping.ts';
import { start } from './power.ts';
import { run } from './tasks.ts';
import { currentOf, unlocked, vmPath } from './vm.ts';

/** A task refused for a lock taken between our look and the task: wait for it and try again, this often. */
const LOCK_ATTEMPTS = 3;
/** What PVE stores for a description is a config comment; anything longer is a caller's mistake. */
const MAX_DESCRIPTION = 8192;

/** One entry of GET …/snapshot as PVE answers it. */
interface SnapshotEntry {
  name?: unknown;
  description?: unknown;
  snaptime?: unknown;
  vmstate?: unknown;
  parent?: unknown;
  /** `prepare` while being taken (or left by a crash), `delete` while being deleted (or after a failed delete). */
  snapstate?: unknown;
}

interface Listed extends VmSnapshot {
  snapstate: string | null;
}

function checkName(client: ProxmoxClient, name: string): void {
  const problem = snapshotNameProblem(name);
  if (problem) throw new UpstreamError('rejected', `${client.label}: ${problem}`, { retryable: false });
}

function snapshotPath(client: ProxmoxClient, vm: VmRef, name?: string): string {
  return `${vmPath(client, vm)}/snapshot${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

const notFound = (client: ProxmoxClient, vm: VmRef, name: string) =>
  new UpstreamError('rejected', `${client.label}: snapshot '${name}' of VM ${vm.vmid} does not exist`, {
    retryable: false,
    reason: 'snapshot_not_found',
  });

const failedWith = (error: unknown, text: RegExp): error is UpstreamError =>
  error instanceof UpstreamError && text.test(error.message);

/** Every snapshot of the VM (half-made ones included), oldest first; the VM must be ours. */
async function listAll(client: ProxmoxClient, vm: VmRef): Promise<Listed[]> {
  await currentOf(client, vm);
  const raw = await client.call<unknown>('GET', snapshotPath(client, vm));
  if (!Array.isArray(raw)) {
    throw new UpstreamError('protocol', `${client.label}: the snapshot list is not a list`, { retryable: false });
  }
  const out: Listed[] = [];
  for (const entry of raw as SnapshotEntry[]) {
    if (typeof entry?.name !== 'string' || entry.name === 'current') continue;
    const snaptime = num(entry.snaptime);
    out.push({
      name: entry.name,
      description: typeof entry.description === 'string' ? entry.description : '',
      createdAt: snaptime ? new Date(snaptime * 1000).toISOString() : null,
      parent: typeof entry.parent === 'string' && entry.parent !== '' ? entry.parent : null,
      withRam: Number(entry.vmstate ?? 0) === 1 || entry.vmstate === true,
      snapstate: typeof entry.snapstate === 'string' && entry.snapstate !== '' ? entry.snapstate : null,
    });
  }
  // PVE lists them in hash order. By time; within one second (snaptime has no finer grain),
  // ancestors before descendants (a snapshot is always taken after its parent), then by name.
  const byName = new Map(out.map((s) => [s.name, s]));
  const depth = (s: Listed): number => {
    let n = 0;
    for (let p = s.parent; p !== null && n <= out.length; p = byName.get(p)?.parent ?? null) n++;
    return n;
  };
  const depths = new Map(out.map((s) => [s.name, depth(s)]));
  return out.sort(
    (a, b) =>
      (a.createdAt ?? '').localeCompare(b.createdAt ?? '') ||
      (depths.get(a.name) ?? 0) - (depths.get(b.name) ?? 0) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}

/**
 * Run one snapshot step once the VM is free (it gets the VM's status as seen then); when the
 * task is refused because someone took the lock meanwhile, wait for it and run the step again.
 */
async function whenFree(client: ProxmoxClient, vm: VmRef, task: (current: QemuStatus) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const current = await unlocked(client, vm);
    try {
      return await task(current);
    } catch (error) {
      const locked = failedWith(error, /is locked|can't lock file|got timeout/) && error.kind === 'conflict';
      if (!locked || attempt >= LOCK_ATTEMPTS) throw error;
    }
  }
}

export async function list(client: ProxmoxClient, vm: VmRef): Promise<VmSnapshot[]> {
  return (await listAll(client, vm))
    .filter((s) => s.snapstate === null)
    .map(({ snapstate: _, ...snapshot }) => snapshot);
}

export async function create(client: ProxmoxClient, vm: VmRef, name: string, description: string): Promise<void> {
  checkName(client, name);
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION) {
    throw new UpstreamError('rejected', `${client.label}: a snapshot description has at most 8192 characters`, {
      retryable: false,
    });
  }
  await whenFree(client, vm, async () => {
    const existing = (await listAll(client, vm)).find((s) => s.name === name);
    if (existing?.snapstate === null) return; // ours, from a call whose answer was lost
    if (existing) {
      // A snapshot half made by a task that died, or half deleted: PVE refuses the name.
      throw new UpstreamError(
        'conflict',
        `${client.label}: snapshot '${name}' of VM ${vm.vmid} is incomplete (${existing.snapstate}); delete it first`,
        { retryable: false, reason: 'snapshot_incomplete' },
      );
    }
    try {
      await run(client, 'POST', snapshotPath(client, vm), {
        snapname: name,
        description: description === '' ? undefined : description,
        vmstate: false,
      });
    } catch (error) {
      // Someone (or our own earlier request) took it meanwhile: it exists, which is what we want.
      if (!failedWith(error, /snapshot name '.*' already used/)) throw error;
      const now = (await listAll(client, vm)).find((s) => s.name === name);
      if (now?.snapstate !== null) throw error;
    }
  });
}

export async function rollback(client: ProxmoxClient, vm: VmRef, name: string): Promise<void> {
  checkName(client, name);
  let wasRunning = false;
  await whenFree(client, vm, async (current) => {
    // Half made or half deleted (snapstate) is nothing to roll back to; PVE refuses it too.
    if (!(await listAll(client, vm)).some((s) => s.name === name && s.snapstate === null)) {
      throw notFound(client, vm, name);
    }
    // A paused VM does not run for its owner; PVE stops it either way.
    wasRunning = powerOf(current) !== 'stopped';
    const path = `${snapshotPath(client, vm, name)}/rollback`;
    try {
      // PVE stops the VM, rolls back, and starts it again only when asked (or the snapshot has RAM).
      await run(client, 'POST', path, wasRunning ? { start: true } : {});
    } catch (error) {
      if (failedWith(error, /snapshot '.*' does not exist/)) {
        throw notFound(client, vm, name);
      }
      // Nodes from before `start` was added (qemu-server, autumn 2022) refuse it: roll back, start below.
      if (!failedWith(error, /start: property is not defined in schema/)) throw error;
      await run(client, 'POST', path);
    }
  });
  // Started by the task already (one more look), or by us on a node without `start`.
  if (wasRunning) await start(client, vm);
}

export async function remove(client: ProxmoxClient, vm: VmRef, name: string): Promise<void> {
  checkName(client, name);
  await whenFree(client, vm, async () => {
    // A snapshot left half deleted by a failed task is deleted again: PVE allows it.
    if (!(await listAll(client, vm)).some((s) => s.name === name)) return;
    try {
      await run(client, 'DELETE', snapshotPath(client, vm, name));
    } catch (error) {
      // Gone meanwhile (our own earlier request whose answer was lost): the outcome we wanted.
      if (!failedWith(error, /snapshot '.*' does not exist/)) throw error;
    }
  });
}
