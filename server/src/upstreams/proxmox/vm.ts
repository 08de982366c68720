// Finding a VM on the node and making sure it is ours: the VM at a vmid must still carry the
// platform's name (vmids are reused once freed), and an operation waits while another task
// (a clone from an earlier attempt, a backup) holds the VM's lock.

import { UpstreamError } from '../errors.ts';
import type { VmRef } from '../hypervisor.ts';
import type { ProxmoxClient } from './client.ts';
import type { QemuStatus } from './mapping.ts';

const MAX_LOCK_POLL_MS = 2_000;

export function nodePath(client: ProxmoxClient): string {
  return `/nodes/${encodeURIComponent(client.config.node)}`;
}

export function vmPath(client: ProxmoxClient, vm: Pick<VmRef, 'vmid'>): string {
  return `${nodePath(client)}/qemu/${vm.vmid}`;
}

/** The lowest-numbered VM (not template) called `name`, or null. */
export async function findByName(client: ProxmoxClient, name: string): Promise<VmRef | null> {
  const list = await client.call<{ vmid: number | string; name?: string; template?: number | string }[]>(
    'GET',
    `${nodePath(client)}/qemu`,
  );
  const vmids = list
    .filter((vm) => vm.name === name && !Number(vm.template ?? 0))
    .map((vm) => Number(vm.vmid))
    .filter((vmid) => Number.isInteger(vmid));
  return vmids.length === 0 ? null : { node: client.config.node, vmid: Math.min(...vmids), name };
}

/** status/current of the VM, which must be ours: `not_found` when it is gone or is now another VM. */
export async function currentOf(client: ProxmoxClient, vm: VmRef): Promise<QemuStatus> {
  const status = await client.call<QemuStatus>('GET', `${vmPath(client, vm)}/status/current`);
  if (status.name !== vm.name || Number(status.template ?? 0)) {
    throw new UpstreamError(
      'not_found',
      `${client.label}: VM ${vm.vmid} is no longer ${vm.name} (its id now belongs to another VM)`,
      { retryable: false },
    );
  }
  return status;
}

/** Like currentOf, but null when the VM is gone (or its id belongs to another VM). */
export async function currentOrNull(client: ProxmoxClient, vm: VmRef): Promise<QemuStatus | null> {
  try {
    return await currentOf(client, vm);
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'not_found') return null;
    throw error;
  }
}

/** Wait while a task holds the VM's lock; resolves with its status once free. */
export async function unlocked(client: ProxmoxClient, vm: VmRef): Promise<QemuStatus> {
  const deadline = Date.now() + client.config.taskTimeoutMs;
  let interval = client.config.pollIntervalMs;
  for (;;) {
    const status = await currentOf(client, vm);
    // A VM paused for suspension keeps lock "suspended" for good: that is a state, not a task.
    if (!status.lock || status.lock === 'suspended') return status;
    if (Date.now() > deadline) {
      throw new UpstreamError('timeout', `${client.label}: VM ${vm.vmid} is still locked (${status.lock})`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
    interval = Math.min(Math.ceil(interval * 1.5), Math.max(client.config.pollIntervalMs, MAX_LOCK_POLL_MS));
  }
}
