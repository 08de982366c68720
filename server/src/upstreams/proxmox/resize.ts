// Resizing a VM (Hypervisor.resize): CPU cores and memory through the config (a sync PUT, guarded
// by the config's digest), then the boot disk through PUT /resize with an absolute size — so a
// repeat after a lost answer changes nothing — never smaller than it is (PVE refuses that with
// "shrinking disks is not supported"). A resize task (PVE 8) is awaited; older nodes answer null.

import { UpstreamError } from '../errors.ts';
import type { VmRef, VmResize } from '../hypervisor.ts';
import type { ProxmoxClient } from './client.ts';
import { bootDisk } from './mapping.ts';
import { run } from './tasks.ts';
import { unlocked, vmPath } from './vm.ts';

function check(target: VmResize, label: string): void {
  const problem =
    !Number.isInteger(target.cores) || target.cores < 1
      ? 'cores must be a whole number >= 1'
      : !Number.isInteger(target.memoryMb) || target.memoryMb < 16
        ? 'memory must be a whole number of MiB >= 16'
        : !Number.isInteger(target.diskGb) || target.diskGb < 1
          ? 'the disk size must be a whole number of GiB >= 1'
          : null;
  if (problem) throw new UpstreamError('rejected', `${label}: ${problem}`, { retryable: false });
}

/** The config keys to write for `target`; empty when cores and memory are already so. */
export function resizeChanges(config: Record<string, unknown>, target: VmResize): Record<string, string> {
  const changes: Record<string, string> = {};
  if (String(config.cores ?? '1') !== String(target.cores)) changes.cores = String(target.cores);
  // `memory` may be written as `current=<MiB>` (PVE 8.1+ property string).
  const memory = String(config.memory ?? '').replace(/^current=/, '');
  if (memory !== String(target.memoryMb)) changes.memory = String(target.memoryMb);
  return changes;
}

export async function resize(client: ProxmoxClient, vm: VmRef, target: VmResize): Promise<void> {
  check(target, client.label);
  await unlocked(client, vm);
  const path = vmPath(client, vm);
  const config = await client.call<Record<string, unknown>>('GET', `${path}/config`);
  const changes = resizeChanges(config, target);
  if (Object.keys(changes).length > 0) {
    await run(client, 'PUT', `${path}/config`, { ...changes, digest: config.digest as string | undefined });
  }
  const disk = bootDisk(config);
  if (!disk)
    throw new UpstreamError('rejected', `${client.label}: VM ${vm.vmid} has no boot disk`, { retryable: false });
  if (disk.sizeGb < target.diskGb)
    await run(client, 'PUT', `${path}/resize`, { disk: disk.key, size: `${target.diskGb}G` });
}
