// The Proxmox VE driver behind the Hypervisor interface (contracts in ../hypervisor.ts): one
// node reached over its HTTP API with an API token. VMs are found by their platform name, so a
// job that runs again after a crash or a lost answer continues the VM it already created.

import type { ConsoleTicket } from '../driver.ts';
import { UpstreamError } from '../errors.ts';
import {
  type Hypervisor,
  type MetricPoint,
  TIMEFRAMES,
  type Timeframe,
  type VmListed,
  type VmRef,
  type VmResize,
  type VmSpec,
  type VmStatus,
} from '../hypervisor.ts';
import { ProxmoxClient } from './client.ts';
import type { ProxmoxConfig } from './config.ts';
import { openProxmoxConsole } from './console.ts';
import { type QemuStatus, toPoints, toStatus } from './mapping.ts';
import * as power from './power.ts';
import * as provision from './provision.ts';
import { resize } from './resize.ts';
import * as snapshot from './snapshots.ts';
import { currentOf, findByName, nodePath, vmPath } from './vm.ts';

export type { ProxmoxConfig } from './config.ts';

const DEFAULT_GUEST_TIMEOUT_S = 60;

interface TicketAnswer {
  ticket: string;
  port: string | number;
  user: string;
  password?: string;
}

export function createProxmoxHypervisor(config: ProxmoxConfig): Hypervisor {
  const client = new ProxmoxClient(config);

  async function console(vm: VmRef, kind: 'vnc' | 'serial'): Promise<ConsoleTicket> {
    await currentOf(client, vm);
    const data = await client.call<TicketAnswer>(
      'POST',
      `${vmPath(client, vm)}/${kind === 'vnc' ? 'vncproxy' : 'termproxy'}`,
      kind === 'vnc' ? { websocket: true } : {},
    );
    const port = Number(data.port);
    if (typeof data.ticket !== 'string' || !Number.isInteger(port)) {
      throw new UpstreamError('protocol', `${client.label}: the console answer has no ticket or port`, {
        retryable: false,
      });
    }
    const query = new URLSearchParams({ port: String(port), vncticket: data.ticket });
    return {
      kind,
      ticket: data.ticket,
      port,
      user: data.user,
      password: kind === 'vnc' && typeof data.password === 'string' ? data.password : null,
      websocketPath: `/api2/json${vmPath(client, vm)}/vncwebsocket?${query}`,
    };
  }

  return {
    async ping() {
      const version = await client.call<{ version?: unknown }>('GET', '/version');
      if (typeof version?.version !== 'string') {
        throw new UpstreamError('protocol', `${client.label}: /version has no version`, { retryable: false });
      }
      // The configured node must exist too: a wrong name fails every later call.
      await client.call('GET', `${nodePath(client)}/qemu`);
      return { version: version.version };
    },

    findVm: (name: string) => findByName(client, name),
    createVm: (spec: VmSpec) => provision.createVm(client, spec),
    start: (vm: VmRef) => power.start(client, vm),
    stop: (vm: VmRef) => power.stop(client, vm),
    shutdown: (vm: VmRef, timeoutSeconds = DEFAULT_GUEST_TIMEOUT_S) => power.shutdown(client, vm, timeoutSeconds),
    reboot: (vm: VmRef, timeoutSeconds = DEFAULT_GUEST_TIMEOUT_S) => power.reboot(client, vm, timeoutSeconds),
    reset: (vm: VmRef) => power.reset(client, vm),

    async status(vm: VmRef): Promise<VmStatus> {
      return toStatus(await currentOf(client, vm));
    },

    async powerStates() {
      // `full` makes the node ask each running VM's QMP for its state: paused is not running.
      const list = await client.call<(QemuStatus & { vmid: number | string })[]>('GET', `${nodePath(client)}/qemu`, {
        full: true,
      });
      if (!Array.isArray(list)) {
        throw new UpstreamError('protocol', `${client.label}: the VM list is not a list`, { retryable: false });
      }
      // The listing carries each VM's vmstatus (cpu, cpus, mem, maxmem) as status/current does.
      const out = new Map<number, VmListed>();
      for (const vm of list) {
        const vmid = Number(vm.vmid);
        if (!Number.isInteger(vmid) || typeof vm.name !== 'string' || Number(vm.template ?? 0)) continue;
        const status = toStatus(vm);
        out.set(vmid, {
          name: vm.name,
          power: status.power,
          cpu: status.cpu,
          cpus: status.cpus,
          memoryBytes: status.memoryBytes,
          memoryTotalBytes: status.memoryTotalBytes,
        });
      }
      return out;
    },

    async metrics(vm: VmRef, timeframe: Timeframe): Promise<MetricPoint[]> {
      if (!TIMEFRAMES.includes(timeframe)) {
        throw new UpstreamError('rejected', `unknown timeframe '${String(timeframe)}'`, { retryable: false });
      }
      await currentOf(client, vm);
      return toPoints(await client.call('GET', `${vmPath(client, vm)}/rrddata`, { timeframe, cf: 'AVERAGE' }));
    },

    console,
    openConsole(ticket, events, options) {
      if (ticket.kind === 'game') throw new UpstreamError('rejected', 'a Proxmox node has no game-server console');
      return openProxmoxConsole(config, ticket, events, options);
    },
    reinstall: (vm: VmRef, spec: VmSpec) => provision.reinstall(client, vm, spec),
    resize: (vm: VmRef, target: VmResize) => resize(client, vm, target),
    destroy: (vm: VmRef) => provision.destroy(client, vm),
    snapshots: (vm: VmRef) => snapshot.list(client, vm),
    createSnapshot: (vm: VmRef, name: string, description: string) => snapshot.create(client, vm, name, description),
    rollbackSnapshot: (vm: VmRef, name: string) => snapshot.rollback(client, vm, name),
    deleteSnapshot: (vm: VmRef, name: string) => snapshot.remove(client, vm, name),
    close: () => client.close(),
  };
}
