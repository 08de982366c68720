// Translations between the platform's shapes and PVE's: power state from status/qmpstatus/lock,
// live status and rrddata points, and the VM config a VmSpec asks for (cloud-init, tags, NIC
// bridge, boot disk), compared field by field so a resumed job writes only what is missing.

import type { MetricPoint, PowerState, VmSpec, VmStatus } from '../hypervisor.ts';

export interface QemuStatus {
  status?: string;
  qmpstatus?: string;
  name?: string;
  template?: number | string;
  cpu?: number;
  cpus?: number;
  mem?: number;
  maxmem?: number;
  maxdisk?: number;
  uptime?: number;
  netin?: number;
  netout?: number;
  lock?: string;
}

const STARTING = ['prelaunch', 'inmigrate', 'restore-vm'];
const STOPPING = ['shutdown', 'finish-migrate', 'postmigrate', 'save-vm'];
/** Guest CPUs halted: it does not run, and start() resumes it. */
const HALTED = ['paused', 'suspended'];

/** Platform power state: QMP state first (paused is not running), then the process, then locks. */
export function powerOf(s: QemuStatus): PowerState {
  if (s.lock === 'suspending') return 'stopping';
  if (s.status === 'stopped') return 'stopped';
  if (s.status !== 'running') return 'unknown';
  const qmp = s.qmpstatus ?? 'running';
  if (qmp === 'running') return 'running';
  if (STARTING.includes(qmp)) return 'starting';
  if (STOPPING.includes(qmp)) return 'stopping';
  if (HALTED.includes(qmp)) return 'stopped';
  // internal-error, io-error, guest-panicked, watchdog, debug…: the process is up, the guest is not well.
  return 'unknown';
}

export function num(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

/** A VM's status as Proxmox VE reports it: the node sees inside the VM, so every figure is known. */
export type QemuVmStatus = VmStatus & {
  cpu: number;
  memoryBytes: number;
  uptimeSeconds: number;
  netInBytes: number;
  netOutBytes: number;
};

export function toStatus(s: QemuStatus): QemuVmStatus {
  return {
    power: powerOf(s),
    cpu: Math.min(1, Math.max(0, num(s.cpu) ?? 0)),
    cpus: num(s.cpus) ?? 0,
    memoryBytes: num(s.mem) ?? 0,
    memoryTotalBytes: num(s.maxmem) ?? 0,
    diskTotalBytes: num(s.maxdisk) ?? 0,
    uptimeSeconds: num(s.uptime) ?? 0,
    netInBytes: num(s.netin) ?? 0,
    netOutBytes: num(s.netout) ?? 0,
    locked: s.lock ?? null,
  };
}

export function toPoints(raw: unknown): MetricPoint[] {
  const rows = Array.isArray(raw) ? (raw as Record<string, unknown>[]) : [];
  return rows
    .filter((p) => num(p?.time) !== null)
    .map((p) => ({
      time: num(p.time) ?? 0,
      cpu: num(p.cpu),
      memoryBytes: num(p.mem),
      memoryTotalBytes: num(p.maxmem),
      netInBytesPerSecond: num(p.netin),
      netOutBytesPerSecond: num(p.netout),
      diskReadBytesPerSecond: num(p.diskread),
      diskWriteBytesPerSecond: num(p.diskwrite),
    }))
    .sort((a, b) => a.time - b.time);
}

/** PVE wants sshkeys URL-encoded with %20 for spaces (it decodes percent escapes only, not `+`). */
export function encodeSshKeys(keys: string[]): string {
  return encodeURIComponent(keys.map((k) => k.trim()).join('\n'));
}

function decoded(value: string | undefined): string {
  try {
    return decodeURIComponent(value ?? '').trim();
  } catch {
    return value ?? '';
  }
}

const tagSet = (value: string | undefined) =>
  [...new Set((value ?? '').split(/[;, ]/).filter(Boolean))].sort().join(';');

/**
 * The MAC addresses of a VM's NICs (`net0`…`net31`), lower-case colon form, in NIC order. PVE
 * writes a NIC as `<model>=<MAC>,bridge=…` (`virtio=BC:24:11:5E:0A:01,bridge=vmbr0`) or with an
 * explicit `macaddr=`; a NIC written without one gets one generated when the config is saved.
 */
export function macsOf(config: Record<string, unknown>): string[] {
  const macs: string[] = [];
  for (const key of nicKeys(config)) {
    const mac = /(?:^|,)[a-z0-9]+=((?:[0-9a-f]{2}:){5}[0-9a-f]{2})(?:,|$)/i.exec(String(config[key]))?.[1];
    if (mac && !macs.includes(mac.toLowerCase())) macs.push(mac.toLowerCase());
  }
  return macs;
}

/** A VM's NIC keys (`net0`…`net31`), in NIC order. */
export function nicKeys(config: Record<string, unknown>): string[] {
  return Object.keys(config)
    .filter((key) => /^net\d+$/.test(key))
    .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
}

/** The first NIC on `bridge`, keeping its model and MAC (a new MAC would mean a new NIC to the guest). */
function withBridge(net0: string | undefined, bridge: string): string {
  if (!net0) return `virtio,bridge=${bridge}`;
  return /(^|,)bridge=[^,]*/.test(net0)
    ? net0.replace(/(^|,)bridge=[^,]*/, `$1bridge=${bridge}`)
    : `${net0},bridge=${bridge}`;
}

/**
 * The config writes that make `config` match `spec`; empty when it already does. When anything
 * is missing the whole set (password included) is returned, because PVE applies one PUT at
 * once: a VM whose settings all match got its password in the same write.
 */
export function configChanges(
  config: Record<string, unknown>,
  spec: VmSpec,
  bridge?: string,
  /** `user=<storage>:snippets/<file>` when the VM boots with the customer's user data (./snippets.ts). */
  cicustom?: string,
): Record<string, string> {
  const ci = spec.cloudInit;
  const dot = ci.hostname.indexOf('.');
  const want: Record<string, string | undefined> = {
    name: spec.name,
    cores: String(spec.cores),
    memory: String(spec.memoryMb),
    ciuser: ci.user,
    ipconfig0: `ip=${ci.ipv4.address}/${ci.ipv4.prefix},gw=${ci.ipv4.gateway}`,
    nameserver: ci.nameservers.join(' ') || undefined,
    searchdomain: dot > 0 ? ci.hostname.slice(dot + 1) : undefined,
    sshkeys: ci.sshKeys.length > 0 ? encodeSshKeys(ci.sshKeys) : undefined,
    tags: spec.tags.join(';') || undefined,
    net0: bridge ? withBridge(config.net0 as string | undefined, bridge) : undefined,
    cicustom,
  };
  const have = (key: string) => (config[key] === undefined ? undefined : String(config[key]));
  const same = (key: string, value: string | undefined): boolean => {
    if (key === 'sshkeys') return decoded(have(key)) === decoded(value);
    if (key === 'tags') return tagSet(have(key)) === tagSet(value);
    if (key === 'memory') return (have(key) ?? '').replace(/^current=/, '') === value;
    if (key === 'net0' && value === undefined) return true;
    return have(key) === value;
  };
  const differs = Object.entries(want).some(([key, value]) => !same(key, value));
  if (!differs && config.cipassword !== undefined) return {};
  const out: Record<string, string> = { cipassword: ci.password };
  const remove: string[] = [];
  for (const [key, value] of Object.entries(want)) {
    if (value !== undefined) out[key] = value;
    else if (key !== 'net0' && have(key) !== undefined) remove.push(key);
  }
  if (remove.length > 0) out.delete = remove.join(',');
  return out;
}

const DISK_KEY = /^(scsi|virtio|sata|ide)\d+$/;

/** The boot disk and its size in GiB, from `boot: order=…` or else the first disk that is not a CD-ROM. */
export function bootDisk(config: Record<string, unknown>): { key: string; sizeGb: number } | null {
  const isDisk = (key: string) =>
    DISK_KEY.test(key) && typeof config[key] === 'string' && !/media=cdrom|cloudinit/.test(config[key] as string);
  const order = /order=([^,]+)/.exec(String(config.boot ?? ''))?.[1]?.split(';') ?? [];
  const rank = (k: string) =>
    ['scsi', 'virtio', 'sata', 'ide'].findIndex((bus) => k.startsWith(bus)) * 100 + Number(k.replace(/\D/g, ''));
  const key =
    order.find(isDisk) ??
    Object.keys(config)
      .filter(isDisk)
      .sort((a, b) => rank(a) - rank(b))[0];
  if (!key) return null;
  const size = /(?:^|,)size=(\d+(?:\.\d+)?)([KMGT])?/.exec(config[key] as string);
  const factor = { K: 1 / 1024 ** 2, M: 1 / 1024, G: 1, T: 1024 }[size?.[2] ?? 'G'] ?? 1;
  return { key, sizeGb: Number(size?.[1] ?? 0) * factor };
}
