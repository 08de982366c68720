// What the emulated node knows: its VMs (templates included), their configuration and power
// state, and its tasks. Persisted to a JSON file when asked, so a demo survives restarts.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface Vm {
  vmid: number;
  name: string;
  template: boolean;
  status: 'running' | 'stopped';
  /** Transitional QMP status while a task moves the VM (prelaunch while starting, shutdown while stopping). */
  qmpstatus: string | null;
  lock: string | null;
  cores: number;
  memoryMb: number;
  diskGb: number;
  config: Record<string, string>;
  createdAt: number;
  startedAt: number | null;
}

export interface Task {
  upid: string;
  node: string;
  type: string;
  id: string;
  user: string;
  starttime: number;
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

export class NodeState {
  readonly vms = new Map<number, Vm>();
  readonly tasks = new Map<string, Task>();
  /** Console tickets issued by vncproxy/termproxy, by ticket. */
  readonly consoles = new Map<string, ConsoleGrant>();
  readonly file: string | null;

  constructor(file: string | null) {
    this.file = file;
  }

  load(): boolean {
    if (this.file === null) return false;
    let raw: string;
    try {
      raw = readFileSync(this.file, 'utf8');
    } catch {
      return false;
    }
    const saved = JSON.parse(raw) as { vms: Vm[] };
    for (const vm of saved.vms) {
      // Tasks do not survive a restart: whatever they were doing is treated as finished.
      this.vms.set(vm.vmid, { ...vm, lock: null, qmpstatus: null });
    }
    return true;
  }

  save(): void {
    if (this.file === null) return;
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify({ vms: [...this.vms.values()] }));
    renameSync(partial, this.file);
  }

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
      config: { name, ostype: 'l26', scsi0: `local-lvm:base-${vmid}-disk-0,size=10G`, ide2: 'local-lvm:cloudinit' },
      createdAt: Date.now(),
      startedAt: null,
    });
  }
}
