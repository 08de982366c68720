// VM lifecycle paths (upstreams.md §2.4): nextid, list, clone, config (GET, sync PUT, async
// POST), resize, destroy, with PVE's rules: taken ids, locks held by running tasks, config
// digests, cipassword never echoed, a failed clone leaving nothing behind.

import { createHash, randomBytes } from 'node:crypto';
import { liveUsage } from './metrics.ts';
import { any, bool, CONFIG, dnsName, int, isTrue, maxLength, oneOf, verify } from './params.ts';
import type { NodeState, Vm } from './state.ts';
import { type ApiContext, assertUnlocked, lockedTask, PveError, paramError, startTask } from './tasks.ts';

export const STORAGES = ['local-lvm', 'local', 'local-zfs'];
const DISK = /^(scsi\d{1,2}|virtio\d{1,2}|sata\d|ide\d)$/;

export function vmOf(ctx: ApiContext, vmidText: string): Vm {
  const vm = /^\d+$/.test(vmidText) ? ctx.state.vms.get(Number(vmidText)) : undefined;
  if (!vm)
    throw new PveError(500, `Configuration file 'nodes/${ctx.node}/qemu-server/${vmidText}.conf' does not exist`);
  return vm;
}

export function digestOf(vm: Vm): string {
  return createHash('sha1')
    .update(JSON.stringify(Object.entries(vm.config).sort()))
    .digest('hex');
}

function randomMac(): string {
  return ['BC', '24', '11', ...[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0').toUpperCase())].join(':');
}

/** GET /nodes/{node}/qemu: `full=1` adds the QMP state of running VMs (paused is not running). */
export function listVms(state: NodeState, params: Record<string, string>): Record<string, unknown>[] {
  verify(params, { full: bool });
  const full = isTrue(params.full);
  return [...state.vms.values()].map((vm) => ({
    vmid: vm.vmid,
    name: vm.name,
    status: vm.status,
    ...(full && vm.status === 'running' ? { qmpstatus: vm.qmpstatus ?? vm.status } : {}),
    ...liveUsage(vm),
    ...(vm.status === 'running' ? { pid: 10_000 + vm.vmid } : {}),
    ...(vm.config.tags ? { tags: vm.config.tags } : {}),
    ...(vm.lock ? { lock: vm.lock } : {}),
    ...(vm.template ? { template: 1 } : {}),
  }));
}

export function nextId(ctx: ApiContext, params: Record<string, string>): string {
  verify(params, { vmid: int(100, 999_999_999) });
  if (params.vmid === undefined) return String(ctx.state.nextId());
  if (ctx.state.vms.has(Number(params.vmid))) throw paramError({ vmid: `VM ${params.vmid} already exists` });
  return params.vmid;
}

/** A disk of the source as the clone gets it: its own volume (full) or one based on the template's (linked). */
function cloneDisk(value: string, source: number, newid: number, full: boolean, storage: string | undefined): string {
  const match = /^([^:]+):((?:base|vm)-\d+-(disk-\d+|cloudinit))(.*)$/.exec(value);
  if (!match) return value;
  const [, store = '', volume = '', suffix = '', rest = ''] = match;
  const target = storage ?? store;
  if (suffix === 'cloudinit') return `${target}:vm-${newid}-cloudinit${rest}`;
  if (full) return `${target}:vm-${newid}-${suffix}${rest}`;
  return `${store}:${volume.startsWith('base-') ? volume : `base-${source}-${suffix}`}/vm-${newid}-${suffix}${rest}`;
}

export function cloneVm(ctx: ApiContext, sourceId: string, params: Record<string, string>): string {
  verify(
    params,
    {
      newid: int(100, 999_999_999),
      name: dnsName,
      description: maxLength(8192),
      full: bool,
      storage: any,
      format: oneOf('raw', 'qcow2', 'vmdk'),
      pool: any,
      target: any,
      snapname: any,
      bwlimit: int(0),
    },
    ['newid'],
  );
  const source = vmOf(ctx, sourceId);
  // Linked clones exist only from templates; anything else is always copied in full.
  const full = source.template ? isTrue(params.full) : true;
  if (params.storage !== undefined && !full) throw paramError({ storage: 'Only can be used with full clone.' });
  if (params.storage !== undefined && !STORAGES.includes(params.storage)) {
    throw new PveError(500, `storage '${params.storage}' does not exist`);
  }
  if (params.target !== undefined && params.target !== ctx.node) {
    throw new PveError(500, `no such cluster node '${params.target}'`);
  }
  const newid = Number(params.newid);
  if (ctx.state.vms.has(newid)) throw new PveError(500, `unable to create VM ${newid}: config file already exists`);
  assertUnlocked(source);
  const name = params.name ?? `Copy-of-VM-${source.name}`;
  const config: Record<string, string> = { name };
  for (const [key, value] of Object.entries(source.config)) {
    if (key === 'name' || key === 'template' || key === 'description') continue;
    if (DISK.test(key)) config[key] = cloneDisk(value, source.vmid, newid, full, params.storage);
    else if (/^net\d$/.test(key)) config[key] = value.replace(/=([0-9A-F]{2}:){5}[0-9A-F]{2}/i, `=${randomMac()}`);
    else config[key] = value;
  }
  if (params.description) config.description = params.description;
  const vm: Vm = {
    ...structuredClone(source),
    vmid: newid,
    name,
    template: false,
    status: 'stopped',
    qmpstatus: null,
    lock: null,
    config,
    createdAt: Date.now(),
    startedAt: null,
    runs: [],
    // A clone starts with no history of its own.
    snapshots: [],
    parent: null,
  };
  // PVE writes the new config (locked) before the copy starts: the VM is listed at once.
  ctx.state.vms.set(newid, vm);
  return lockedTask(ctx, vm, 'clone', {
    type: 'qmclone',
    id: String(source.vmid),
    work: (log) => log(`create ${full ? 'full' : 'linked'} clone of drive scsi0 (${source.config.scsi0 ?? ''})`),
    settle: (ok) => {
      if (!ok) ctx.state.vms.delete(newid);
    },
  });
}

export function publicConfig(vm: Vm): Record<string, unknown> {
  const out: Record<string, unknown> = { ...vm.config, digest: digestOf(vm) };
  if (out.cores !== undefined) out.cores = Number(out.cores);
  if ('cipassword' in out) out.cipassword = '**********';
  if (vm.template) out.template = 1;
  return out;
}

/** Check a config change and return the config it makes; nothing changes if anything is wrong. */
function changedConfig(vm: Vm, params: Record<string, string>): Record<string, string> {
  verify(params, CONFIG);
  if (params.digest !== undefined && params.digest !== digestOf(vm)) {
    throw new PveError(500, 'detected modified configuration - file changed by other user? Try again.');
  }
  const next = { ...vm.config };
  for (const [key, value] of Object.entries(params)) {
    if (key === 'digest' || key === 'delete' || key === 'skiplock' || key === 'revert') continue;
    if (/^net\d$/.test(key) && !/=([0-9A-F]{2}:){5}/i.test(value))
      next[key] = value.replace(/^(\w+)/, `$1=${randomMac()}`);
    else next[key] = value;
  }
  for (const key of (params.delete ?? '').split(/[,;\s]+/).filter(Boolean)) delete next[key];
  return next;
}

function applyConfig(vm: Vm, config: Record<string, string>): void {
  vm.config = config;
  vm.name = config.name ?? vm.name;
  vm.cores = Number(config.cores ?? vm.cores);
  vm.memoryMb = Number(config.memory ?? vm.memoryMb);
}

export function updateConfig(ctx: ApiContext, vmid: string, params: Record<string, string>, async: boolean): unknown {
  const vm = vmOf(ctx, vmid);
  if (!isTrue(params.skiplock)) assertUnlocked(vm);
  const config = changedConfig(vm, params);
  if (!async) {
    applyConfig(vm, config);
    ctx.changed();
    return null;
  }
  return startTask(ctx, { type: 'qmconfig', id: vmid, work: () => applyConfig(vm, config) });
}

function gigabytes(size: string): number {
  const match = /^(\d+(?:\.\d+)?)([KMGT])?$/.exec(size);
  const factor = { K: 1 / 1024 ** 2, M: 1 / 1024, G: 1, T: 1024 }[match?.[2] ?? 'G'] ?? 1;
  return Number(match?.[1] ?? 0) * factor;
}

export function resizeDisk(ctx: ApiContext, vmid: string, params: Record<string, string>): string {
  verify(params, { disk: any, size: any, digest: any, skiplock: bool }, ['disk', 'size']);
  const vm = vmOf(ctx, vmid);
  const disk = params.disk ?? '';
  const match = /^(\+)?(\d+(?:\.\d+)?[KMGT]?)$/.exec(params.size ?? '');
  if (!match) throw paramError({ size: `value '${params.size}' does not match the regex pattern` });
  const current = vm.config[disk];
  if (!DISK.test(disk) || current === undefined) throw new PveError(500, `disk '${disk}' does not exist`);
  if (/media=cdrom|cloudinit/.test(current)) throw new PveError(500, "you can't resize a cdrom");
  const have = gigabytes(/size=([\d.]+[KMGT]?)/.exec(current)?.[1] ?? '0');
  const want = match[1] ? have + gigabytes(match[2] ?? '0') : gigabytes(match[2] ?? '0');
  if (want < have) throw new PveError(500, 'shrinking disks is not supported');
  return lockedTask(ctx, vm, 'disk', {
    type: 'resize',
    id: vmid,
    work: (log) => {
      vm.config[disk] = current.replace(/size=[\d.]+[KMGT]?/, `size=${want}G`);
      if (disk === 'scsi0' || disk === 'virtio0') vm.diskGb = want;
      log(`Image resized to ${want}G.`);
    },
  });
}

export function destroyVm(ctx: ApiContext, vmid: string, params: Record<string, string>): string {
  verify(params, { purge: bool, 'destroy-unreferenced-disks': bool, skiplock: bool });
  const vm = vmOf(ctx, vmid);
  if (vm.status === 'running') throw new PveError(500, `VM ${vmid} is running - destroy failed`);
  if (isTrue(vm.config.protection)) throw new PveError(500, `can't remove VM ${vmid} - protection mode enabled`);
  return lockedTask(ctx, vm, 'destroyed', {
    type: 'qmdestroy',
    id: vmid,
    work: (log) => {
      ctx.state.vms.delete(vm.vmid);
      log(`destroyed VM ${vmid}${isTrue(params.purge) ? ' and purged it from jobs and HA' : ''}`);
    },
  });
}
