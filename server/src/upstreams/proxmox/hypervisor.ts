// The Proxmox VE driver behind the Hypervisor interface (contracts in ../hypervisor.ts). VMs
// are found by their platform name, so a provisioning job that runs again after a crash or a
// lost answer continues the VM it already created instead of cloning a second one.

import {
  type ConsoleTicket,
  type Hypervisor,
  type MetricPoint,
  type PowerState,
  type Timeframe,
  UpstreamError,
  type VmRef,
  type VmSpec,
  type VmStatus,
} from '../hypervisor.ts';
import { ProxmoxClient, type ProxmoxConfig } from './client.ts';

interface QemuListEntry {
  vmid: number | string;
  name?: string;
  template?: number;
}

interface QemuStatus {
  status: string;
  qmpstatus?: string;
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

/** Platform power state from PVE's status: QMP state first (paused is not running), then the process. */
export function powerOf(status: QemuStatus): PowerState {
  const qmp = status.qmpstatus ?? status.status;
  if (qmp === 'prelaunch' || qmp === 'inmigrate' || qmp === 'restore-vm') return 'starting';
  if (qmp === 'shutdown' || qmp === 'finish-migrate' || qmp === 'postmigrate') return 'stopping';
  if (status.status === 'running')
    return qmp === 'running' ? 'running' : qmp === 'paused' || qmp === 'suspended' ? 'stopped' : 'running';
  if (status.status === 'stopped') return 'stopped';
  return 'unknown';
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** PVE expects the sshkeys value URL-encoded, spaces as %20 (not +). */
function encodeSshKeys(keys: string[]): string {
  return encodeURIComponent(keys.join('\n'));
}

export function createProxmoxHypervisor(config: ProxmoxConfig): Hypervisor & { close(): void } {
  const client = new ProxmoxClient(config);
  const node = encodeURIComponent(config.node);
  const vmPath = (vm: Pick<VmRef, 'vmid'>) => `/nodes/${node}/qemu/${vm.vmid}`;

  async function status(vm: VmRef): Promise<QemuStatus> {
    return client.call<QemuStatus>('GET', `${vmPath(vm)}/status/current`);
  }

  async function findVm(name: string): Promise<VmRef | null> {
    const list = await client.call<QemuListEntry[]>('GET', `/nodes/${node}/qemu`);
    const matches = list.filter((vm) => vm.name === name && !vm.template).map((vm) => Number(vm.vmid));
    if (matches.length === 0) return null;
    return { node: config.node, vmid: Math.min(...matches), name };
  }

  /** Wait while a task (e.g. the clone we started before a crash) holds the VM. */
  async function waitUnlocked(vm: VmRef): Promise<QemuStatus> {
    const deadline = Date.now() + (config.taskTimeoutMs ?? 300_000);
    for (;;) {
      const current = await status(vm);
      if (!current.lock) return current;
      if (Date.now() > deadline) throw new UpstreamError('timeout', `VM ${vm.vmid} is still locked (${current.lock})`);
      await new Promise((resolve) => setTimeout(resolve, config.pollIntervalMs ?? 250));
    }
  }

  async function clone(spec: VmSpec, vmid?: number): Promise<VmRef> {
    for (let attempt = 0; ; attempt++) {
      const newid = vmid ?? Number(await client.call<string | number>('GET', '/cluster/nextid'));
      try {
        await client.run('POST', `/nodes/${node}/qemu/${spec.templateVmid}/clone`, {
          newid,
          name: spec.name,
          full: true,
          ...(config.storage ? { storage: config.storage } : {}),
          description: 'Managed by Hostplane',
        });
        return { node: config.node, vmid: newid, name: spec.name };
      } catch (error) {
        // Another client took the id between nextid and clone: take the next one.
        if (
          vmid === undefined &&
          attempt < 3 &&
          error instanceof UpstreamError &&
          error.kind === 'conflict' &&
          /already exists/.test(error.message)
        )
          continue;
        throw error;
      }
    }
  }

  async function configure(vm: VmRef, spec: VmSpec): Promise<void> {
    const ci = spec.cloudInit;
    await client.run('PUT', `${vmPath(vm)}/config`, {
      cores: spec.cores,
      memory: spec.memoryMb,
      ciuser: ci.user,
      cipassword: ci.password,
      ...(ci.sshKeys.length > 0 ? { sshkeys: encodeSshKeys(ci.sshKeys) } : {}),
      ipconfig0: `ip=${ci.ipv4.address}/${ci.ipv4.prefix},gw=${ci.ipv4.gateway}`,
      nameserver: ci.nameservers.join(' '),
      searchdomain: ci.hostname.includes('.') ? ci.hostname.slice(ci.hostname.indexOf('.') + 1) : undefined,
      tags: spec.tags.join(';'),
    });
    const current = await status(vm);
    if ((current.maxdisk ?? 0) < spec.diskGb * 1024 ** 3) {
      await client.run('PUT', `${vmPath(vm)}/resize`, { disk: 'scsi0', size: `${spec.diskGb}G` });
    }
  }

  async function whenStopped(vm: VmRef, action: () => Promise<void>): Promise<boolean> {
    const current = await status(vm);
    if (current.status !== 'running') return true;
    await action();
    return false;
  }

  const hypervisor = {
    async ping() {
      const version = await client.call<{ version: string }>('GET', '/version');
      return { version: version.version };
    },

    findVm,

    async createVm(spec: VmSpec) {
      let vm = await findVm(spec.name);
      if (vm) await waitUnlocked(vm);
      else vm = await clone(spec);
      await configure(vm, spec);
      return vm;
    },

    async start(vm: VmRef) {
      const current = await waitUnlocked(vm);
      if (current.status === 'running') return;
      try {
        await client.run('POST', `${vmPath(vm)}/status/start`);
      } catch (error) {
        if (!(error instanceof UpstreamError && /already running/.test(error.message))) throw error;
      }
    },

    async stop(vm: VmRef) {
      const current = await status(vm);
      if (current.status !== 'running') return;
      await client.run('POST', `${vmPath(vm)}/status/stop`);
    },

    async shutdown(vm: VmRef, timeoutSeconds = 60) {
      const current = await status(vm);
      if (current.status !== 'running') return;
      await client.run('POST', `${vmPath(vm)}/status/shutdown`, { timeout: timeoutSeconds, forceStop: true });
    },

    async reboot(vm: VmRef) {
      if (await whenStopped(vm, () => client.run('POST', `${vmPath(vm)}/status/reboot`))) await hypervisor.start(vm);
    },

    async reset(vm: VmRef) {
      if (await whenStopped(vm, () => client.run('POST', `${vmPath(vm)}/status/reset`))) await hypervisor.start(vm);
    },

    async status(vm: VmRef): Promise<VmStatus> {
      const s = await status(vm);
      return {
        power: powerOf(s),
        cpu: num(s.cpu) ?? 0,
        cpus: num(s.cpus) ?? 0,
        memoryBytes: num(s.mem) ?? 0,
        memoryTotalBytes: num(s.maxmem) ?? 0,
        diskTotalBytes: num(s.maxdisk) ?? 0,
        uptimeSeconds: num(s.uptime) ?? 0,
        netInBytes: num(s.netin) ?? 0,
        netOutBytes: num(s.netout) ?? 0,
        locked: s.lock ?? null,
      };
    },

    async metrics(vm: VmRef, timeframe: Timeframe): Promise<MetricPoint[]> {
      const points = await client.call<Record<string, unknown>[]>('GET', `${vmPath(vm)}/rrddata`, {
        timeframe,
        cf: 'AVERAGE',
      });
      return points
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
    },

    async console(vm: VmRef, kind: 'vnc' | 'serial'): Promise<ConsoleTicket> {
      const data = await client.call<{ ticket: string; port: string | number; user: string; password?: string }>(
        'POST',
        `${vmPath(vm)}/${kind === 'vnc' ? 'vncproxy' : 'termproxy'}`,
        kind === 'vnc' ? { websocket: true } : {},
      );
      const port = Number(data.port);
      return {
        kind,
        ticket: data.ticket,
        port,
        user: data.user,
        password: data.password ?? null,
        websocketPath: `/api2/json/nodes/${node}/qemu/${vm.vmid}/vncwebsocket?port=${port}&vncticket=${encodeURIComponent(data.ticket)}`,
      };
    },

    async reinstall(vm: VmRef, spec: VmSpec) {
      // Proxmox has no reinstall: stop, delete, clone the template to the same vmid, configure.
      let existing = true;
      try {
        const current = await waitUnlocked(vm);
        if (current.status === 'running') await client.run('POST', `${vmPath(vm)}/status/stop`);
      } catch (error) {
        if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
        existing = false;
      }
      if (existing) await client.run('DELETE', vmPath(vm), { purge: true, 'destroy-unreferenced-disks': true });
      const fresh = await clone({ ...spec, name: vm.name }, vm.vmid);
      await configure(fresh, spec);
      return fresh;
    },

    async destroy(vm: VmRef) {
      try {
        const current = await waitUnlocked(vm);
        if (current.status === 'running') await client.run('POST', `${vmPath(vm)}/status/stop`);
        await client.run('DELETE', vmPath(vm), { purge: true, 'destroy-unreferenced-disks': true });
      } catch (error) {
        if (error instanceof UpstreamError && error.kind === 'not_found') return;
        throw error;
      }
    },

    close: () => client.close(),
  };
  return hypervisor;
}
