// What the emulated node knows: its VMs (templates included), their configuration, power state
// and power history, its tasks and the console tickets it issued. Persisted to a JSON file when
// asked (after every change), so a demo survives restarts.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/** One period the VM was powered on (ms since the epoch); `end` null while it runs. */
export interface Run {
  start: number;
  end: number | null;
}

export interface Vm {
  vmid: number;
  name: string;
  template: boolean;
  status: 'running' | 'stopped';
  /** QMP status when it differs from `status` (prelaunch while starting, shutdown while stopping, paused). */
  qmpstatus: string | null;
  lock: string | null;
  cores: number;
  memoryMb: number;
  /** Size of the boot disk (scsi0). */
  diskGb: number;
  /**
   * The VM's config as PVE stores it. `cipassword` is kept in the clear here (tests read it;
   * PVE keeps a hash); the API never answers it.
   */
  config: Record<string, string>;
  createdAt: number;
  startedAt: number | null;
  /** Power history, newest last (optional: VMs put straight into the map may lack it). */
  runs?: Run[];
  /** Snapshots, oldest first (PVE keeps each as a `[name]` section of the VM's config file). */
  snapshots?: Snapshot[];
  /** The snapshot the current state descends from (the config file's `parent`). */
  parent?: string | null;
  /**
   * What the guest keeps on its disk, path → content: the emulator's stand-in for disk
   * contents, which snapshots keep and rollbacks restore (tests write it directly).
   */
  disk?: Record<string, string>;
  /**
   * What the VM's cloud-init drive was last generated with (at its last start) from the custom
   * files its `cicustom` names, by type (user, meta, network, vendor); null or absent: none.
   */
  cloudinit?: ({ generatedAt: number } & Partial<Record<'user' | 'meta' | 'network' | 'vendor', string>>) | null;
}

/** A snapshot as PVE records it, plus what the emulator restores on rollback. */
export interface Snapshot {
  name: string;
  description: string;
  /** Unix seconds. */
  snaptime: number;
  /** RAM saved too (only when taken of a running VM with vmstate=1). */
  vmstate: boolean;
  parent: string | null;
  /** `prepare` while it is being taken, `delete` while (or after failing) being deleted. */
  snapstate: 'prepare' | 'delete' | null;
  /** The VM's config, CPU, memory, boot-disk size and disk contents when it was taken. */
  config: Record<string, string>;
  cores: number;
  memoryMb: number;
  diskGb: number;
  disk: Record<string, string>;
}

export interface Task {
  upid: string;
  node: string;
  type: string;
  id: string;
  user: string;
  pid: number;
  pstart: number;
  starttime: number;
  endtime: number | null;
  status: 'running' | 'stopped';
  exitstatus: string | null;
  log: string[];
}

export interface ConsoleGrant {
  vmid: number;
  port: number;
  kind: 'vnc' | 'serial';
  user: string;
  expires: number;
}

const MAX_TASKS = 500;
const MAX_RUNS = 50;

export function templateConfig(vmid: number, name: string): Record<string, string> {
  return {
    name,
    ostype: 'l26',
    cores: '1',
    memory: '1024',
    scsihw: 'virtio-scsi-single',
    scsi0: `local-lvm:base-${vmid}-disk-0,size=10G`,
    ide2: `local-lvm:vm-${vmid}-cloudinit,media=cdrom`,
    net0: `virtio=BC:24:11:00:${(vmid >> 8).toString(16).padStart(2, '0')}:${(vmid & 0xff).toString(16).padStart(2, '0')},bridge=vmbr0`,
    boot: 'order=scsi0',
    serial0: 'socket',
    vga: 'serial0',
    agent: '1',
  };
}

export class NodeState {
  readonly vms = new Map<number, Vm>();
  readonly tasks = new Map<string, Task>();
  /** Console tickets issued by vncproxy/termproxy, by ticket. */
  readonly consoles = new Map<string, ConsoleGrant>();
  readonly file: string | null;
  /** Set when the emulator stops: late task timers must not write a file that may be gone. */
  frozen = false;

  constructor(file: string | null) {
    this.file = file;
  }

  /** Read the file if there is one. Tasks that were running when the node went away end as PVE's do. */
  load(): boolean {
    if (this.file === null) return false;
    let raw: string;
    try {
      raw = readFileSync(this.file, 'utf8');
    } catch {
      return false;
    }
    const saved = JSON.parse(raw) as { vms?: Partial<Vm>[]; tasks?: Task[] };
    for (const vm of saved.vms ?? []) {
      if (typeof vm.vmid !== 'number' || typeof vm.name !== 'string') continue;
      const config = { ...(vm.config ?? {}) };
      const template = vm.template === true;
      this.vms.set(vm.vmid, {
        vmid: vm.vmid,
        name: vm.name,
        template,
        status: vm.status === 'running' ? 'running' : 'stopped',
        qmpstatus: vm.qmpstatus === 'paused' ? 'paused' : null,
        lock: null,
        cores: vm.cores ?? 1,
        memoryMb: vm.memoryMb ?? 1024,
        diskGb: vm.diskGb ?? 10,
        config: template ? { ...templateConfig(vm.vmid, vm.name), ...config } : config,
        createdAt: vm.createdAt ?? Date.now(),
        startedAt: vm.startedAt ?? null,
        runs: vm.runs ?? [],
        // A task that was taking or deleting a snapshot died with the node: its snapstate stays, as on PVE.
        snapshots: vm.snapshots ?? [],
        parent: vm.parent ?? null,
        disk: vm.disk ?? {},
        cloudinit: vm.cloudinit ?? null,
      });
      const loaded = this.vms.get(vm.vmid)!;
      if (loaded.status === 'running' && loaded.runs?.at(-1)?.end !== null) {
        loaded.runs?.push({ start: loaded.startedAt ?? Date.now(), end: null });
      }
    }
    for (const task of saved.tasks ?? []) {
      if (task.status === 'running') Object.assign(task, { status: 'stopped', exitstatus: 'unexpected status' });
      this.tasks.set(task.upid, task);
    }
    return true;
  }

  save(): void {
    if (this.file === null || this.frozen) return;
    const tasks = [...this.tasks.values()];
    for (const old of tasks.slice(0, Math.max(0, tasks.length - MAX_TASKS))) this.tasks.delete(old.upid);
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(
      partial,
      JSON.stringify({ version: 2, vms: [...this.vms.values()], tasks: [...this.tasks.values()] }),
      { mode: 0o600 }, // the emulator's state is private to its owner, like the data directory
    );
    renameSync(partial, this.file);
  }

  /** The lowest free id from 100, as PVE's /cluster/nextid answers. */
  nextId(): number {
    let id = 100;
    while (this.vms.has(id)) id++;
    return id;
  }

  addTemplate(vmid: number, name: string): void {
    if (this.vms.has(vmid)) return;
    this.vms.set(vmid, {
      vmid,
      name,
      template: true,
      status: 'stopped',
      qmpstatus: null,
      lock: null,
      cores: 1,
      memoryMb: 1024,
      diskGb: 10,
      config: templateConfig(vmid, name),
      createdAt: Date.now(),
      startedAt: null,
      runs: [],
    });
  }

  powerOn(vm: Vm): void {
    vm.status = 'running';
    vm.qmpstatus = null;
    vm.startedAt = Date.now();
    vm.runs ??= [];
    const runs = vm.runs;
    runs.push({ start: vm.startedAt, end: null });
    if (runs.length > MAX_RUNS) runs.splice(0, runs.length - MAX_RUNS);
  }

  powerOff(vm: Vm): void {
    vm.status = 'stopped';
    vm.qmpstatus = null;
    vm.startedAt = null;
    const last = vm.runs?.at(-1);
    if (last && last.end === null) last.end = Date.now();
  }
}
