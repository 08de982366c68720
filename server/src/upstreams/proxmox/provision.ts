// Creating, reinstalling and destroying VMs. Every step can run again after a crash or a lost
// answer: the VM is looked up by its platform name before any clone, config writes are skipped
// when already in place, the disk is grown to an absolute size, and a VM already gone is fine.

import { UpstreamError } from '../errors.ts';
import type { VmRef, VmSpec } from '../hypervisor.ts';
import type { ProxmoxClient } from './client.ts';
import { bootDisk, configChanges, macsOf, nicKeys } from './mapping.ts';
import { removeSnippet, writeSnippet } from './snippets.ts';
import { run } from './tasks.ts';
import { currentOrNull, findByName, nodePath, unlocked, vmPath } from './vm.ts';

/** Another client may take the id nextid gave us before our clone lands: try a few fresh ids. */
const CLONE_ID_ATTEMPTS = 4;

function check(spec: VmSpec, label: string): void {
  const problem = !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(spec.name)
    ? 'the VM name must be a DNS label'
    : !Number.isInteger(spec.cores) || spec.cores < 1
      ? 'cores must be a whole number >= 1'
      : !Number.isInteger(spec.memoryMb) || spec.memoryMb < 16
        ? 'memory must be a whole number of MiB >= 16'
        : !(spec.diskGb > 0)
          ? 'the disk size must be positive'
          : null;
  if (problem) throw new UpstreamError('rejected', `${label}: ${problem}`, { retryable: false });
}

async function clone(client: ProxmoxClient, spec: VmSpec, newid: number): Promise<void> {
  await run(client, 'POST', `${nodePath(client)}/qemu/${spec.templateVmid}/clone`, {
    newid,
    name: spec.name,
    full: true,
    storage: client.config.storage,
    description: 'Managed by Hostplane',
  });
}

/** Clone the template to a fresh vmid from /cluster/nextid. */
async function cloneFresh(client: ProxmoxClient, spec: VmSpec): Promise<VmRef> {
  for (let attempt = 1; ; attempt++) {
    const newid = Number(await client.call<string | number>('GET', '/cluster/nextid'));
    try {
      await clone(client, spec, newid);
      return { node: client.config.node, vmid: newid, name: spec.name };
    } catch (error) {
      const taken = error instanceof UpstreamError && error.kind === 'conflict' && /already exists/.test(error.message);
      if (!taken || attempt >= CLONE_ID_ATTEMPTS) throw error;
    }
  }
}

/**
 * Write what the spec asks for and is not there yet, then grow the boot disk (never shrink it).
 * Answers the VM with its MAC addresses as configured.
 */
async function configure(client: ProxmoxClient, vm: VmRef, spec: VmSpec): Promise<VmRef> {
  const path = vmPath(client, vm);
  const config = await client.call<Record<string, unknown>>('GET', `${path}/config`);
  // The customer's user data: a snippet on the shared storage, named by cicustom (./snippets.ts).
  const { userData } = spec.cloudInit;
  const cicustom =
    userData === undefined
      ? undefined
      : await writeSnippet(client.config.snippets, client.label, spec.name, { ...spec.cloudInit, userData });
  const changes = configChanges(config, spec, client.config.bridge, cicustom);
  if (Object.keys(changes).length > 0) {
    // The digest makes PVE refuse the write if someone changed the config since we read it.
    await run(client, 'PUT', `${path}/config`, { ...changes, digest: config.digest as string | undefined });
  }
  const disk = bootDisk(config);
  if (!disk)
    throw new UpstreamError('rejected', `${client.label}: VM ${vm.vmid} has no boot disk`, { retryable: false });
  if (disk.sizeGb < spec.diskGb)
    await run(client, 'PUT', `${path}/resize`, { disk: disk.key, size: `${spec.diskGb}G` });
  // Our write keeps each NIC's MAC; a NIC that had none got one when PVE saved it: read again.
  const written = { ...config, ...changes };
  let macs = macsOf(written);
  if (macs.length < nicKeys(written).length)
    macs = macsOf(await client.call<Record<string, unknown>>('GET', `${path}/config`));
  return { node: vm.node, vmid: vm.vmid, name: vm.name, macs };
}

/** Wait for a VM we (may have) just cloned to be free; a clone that failed meanwhile left no VM. */
async function settled(client: ProxmoxClient, vm: VmRef): Promise<void> {
  try {
    await unlocked(client, vm);
  } catch (error) {
    if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
    throw new UpstreamError(
      'conflict',
      `${client.label}: the clone of ${vm.name} (VM ${vm.vmid}) vanished; cloning again`,
      {
        retryable: true,
      },
    );
  }
}

export async function createVm(client: ProxmoxClient, spec: VmSpec): Promise<VmRef> {
  check(spec, client.label);
  const vm = (await findByName(client, spec.name)) ?? (await cloneFresh(client, spec));
  await settled(client, vm);
  return configure(client, vm, spec);
}

async function stopAndDelete(client: ProxmoxClient, vm: VmRef): Promise<boolean> {
  if (!(await currentOrNull(client, vm))) return false;
  const current = await unlocked(client, vm);
  if (current.status === 'running') await run(client, 'POST', `${vmPath(client, vm)}/status/stop`);
  await run(client, 'DELETE', vmPath(client, vm), { purge: true, 'destroy-unreferenced-disks': true });
  return true;
}

/** The template must exist before anything is deleted: a reinstall cannot be undone. */
async function assertTemplate(client: ProxmoxClient, vmid: number): Promise<void> {
  let template = false;
  try {
    const config = await client.call<{ template?: number | string }>('GET', `${nodePath(client)}/qemu/${vmid}/config`);
    template = Number(config.template ?? 0) === 1;
  } catch (error) {
    if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
  }
  if (!template) {
    throw new UpstreamError('rejected', `${client.label}: template ${vmid} does not exist or is not a template`, {
      retryable: false,
    });
  }
}

export async function reinstall(client: ProxmoxClient, vm: VmRef, spec: VmSpec): Promise<VmRef> {
  const target = { ...spec, name: vm.name };
  check(target, client.label);
  await assertTemplate(client, spec.templateVmid);
  await stopAndDelete(client, vm);
  // The old system's user data is not the new one's.
  if (spec.cloudInit.userData === undefined) await removeSnippet(client.config.snippets, vm.name);
  try {
    await clone(client, target, vm.vmid);
  } catch (error) {
    const taken = error instanceof UpstreamError && error.kind === 'conflict' && /already exists/.test(error.message);
    // Our own clone whose answer was lost is fine; anyone else's VM on the id is not ours to touch.
    if (!taken || !(await currentOrNull(client, vm))) {
      if (taken) {
        throw new UpstreamError(
          'conflict',
          `${client.label}: VM id ${vm.vmid} was taken by another VM during the reinstall`,
          {
            retryable: false,
          },
        );
      }
      throw error;
    }
  }
  await settled(client, vm);
  return configure(client, vm, target);
}

export async function destroy(client: ProxmoxClient, vm: VmRef): Promise<void> {
  const deleted = await stopAndDelete(client, vm);
  await removeSnippet(client.config.snippets, vm.name);
  if (deleted) return;
  // The id holds nothing, or another VM: if ours lives on under another id (never expected), remove that one.
  const elsewhere = await findByName(client, vm.name);
  if (elsewhere && elsewhere.vmid !== vm.vmid) await stopAndDelete(client, elsewhere);
}
