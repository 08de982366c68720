// The Proxmox VE API paths the platform uses, with their real semantics (upstreams.md §2):
// asynchronous operations return a UPID and finish after a delay, a VM busy with a task is
// locked, start/stop/shutdown/reboot/reset follow the real error rules, rrddata is synthesized.

import { randomBytes, randomUUID } from 'node:crypto';
import type { NodeState, Task, Vm } from './state.ts';

export class PveError extends Error {
  readonly status: number;
  readonly errors: Record<string, string> | undefined;
  constructor(status: number, message: string, errors?: Record<string, string>) {
    super(message);
    this.status = status;
    this.errors = errors;
  }
}

export interface ApiContext {
  state: NodeState;
  node: string;
  user: string;
  taskDelayMs: number;
  /** Set by the fault knobs: the next N tasks end with an error. */
  takeTaskFailure(): boolean;
  changed(): void;
}

type Params = Record<string, string>;

const TIMEFRAMES: Record<string, { step: number; points: number }> = {
  hour: { step: 60, points: 70 },
  day: { step: 1800, points: 70 },
  week: { step: 10_800, points: 70 },
  month: { step: 43_200, points: 70 },
  year: { step: 604_800, points: 70 },
};

let pidCounter = 0x1a2b;

function hex8(n: number): string {
  return (n >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

function vmOf(ctx: ApiContext, vmidText: string): Vm {
  const vmid = Number(vmidText);
  const vm = ctx.state.vms.get(vmid);
  if (!vm)
    throw new PveError(500, `Configuration file 'nodes/${ctx.node}/qemu-server/${vmidText}.conf' does not exist`);
  return vm;
}

function assertUnlocked(vm: Vm): void {
  if (vm.lock) throw new PveError(500, `VM is locked (${vm.lock})`);
}

/** Start a task: `work` runs when it finishes (unless a failure was injected), its error text becomes the exit status. */
function task(ctx: ApiContext, type: string, id: string, work: () => void, onStart?: () => void): string {
  const starttime = Math.floor(Date.now() / 1000);
  pidCounter++;
  const upid = `UPID:${ctx.node}:${hex8(pidCounter)}:${hex8(pidCounter * 7)}:${hex8(starttime)}:${type}:${id}:${ctx.user}:`;
  const record: Task = {
    upid,
    node: ctx.node,
    type,
    id,
    user: ctx.user,
    starttime,
    status: 'running',
    exitstatus: null,
    log: [`starting ${type} ${id}`],
  };
  ctx.state.tasks.set(upid, record);
  onStart?.();
  const fail = ctx.takeTaskFailure();
  setTimeout(() => {
    try {
      if (fail) throw new Error('emulated task failure');
      work();
      record.exitstatus = 'OK';
      record.log.push('TASK OK');
    } catch (error) {
      record.exitstatus = (error as Error).message;
      record.log.push(`TASK ERROR: ${record.exitstatus}`);
    }
    record.status = 'stopped';
    ctx.changed();
  }, ctx.taskDelayMs).unref();
  return upid;
}

/** A VM-scoped task that holds the VM's lock while it runs. */
function lockedTask(ctx: ApiContext, vm: Vm, type: string, lock: string, work: () => void): string {
  assertUnlocked(vm);
  return task(
    ctx,
    type,
    String(vm.vmid),
    () => {
      vm.lock = null;
      work();
    },
    () => {
      vm.lock = lock;
    },
  );
}

function applyConfig(vm: Vm, params: Params): void {
  for (const [key, value] of Object.entries(params)) {
    if (key === 'digest' || key === 'delete' || key === 'skiplock') continue;
    if (key === 'cores') vm.cores = Number(value);
    else if (key === 'memory') vm.memoryMb = Number(value);
    else if (key === 'name') vm.name = value;
    vm.config[key] = value;
  }
  for (const key of (params.delete ?? '').split(',').filter(Boolean)) delete vm.config[key];
}

function publicConfig(vm: Vm): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...vm.config,
    name: vm.name,
    cores: vm.cores,
    memory: String(vm.memoryMb),
    digest: randomBytes(20).toString('hex'),
  };
  if ('cipassword' in out) out.cipassword = '**********';
  if (vm.template) out.template = 1;
  return out;
}

function statusOf(vm: Vm): Record<string, unknown> {
  const running = vm.status === 'running';
  const t = Date.now() / 1000;
  const uptime = running && vm.startedAt ? Math.floor(t - vm.startedAt / 1000) : 0;
  return {
    vmid: vm.vmid,
    name: vm.name,
    status: vm.status,
    qmpstatus: vm.qmpstatus ?? vm.status,
    cpus: vm.cores,
    cpu: running ? 0.05 + 0.04 * Math.abs(Math.sin(t / 300 + vm.vmid)) : 0,
    maxmem: vm.memoryMb * 1024 * 1024,
    mem: running ? Math.floor(vm.memoryMb * 1024 * 1024 * (0.3 + 0.1 * Math.abs(Math.sin(t / 900 + vm.vmid)))) : 0,
    maxdisk: vm.diskGb * 1024 ** 3,
    disk: 0,
    uptime,
    netin: running ? uptime * 12_000 : 0,
    netout: running ? uptime * 9_000 : 0,
    diskread: running ? uptime * 40_000 : 0,
    diskwrite: running ? uptime * 25_000 : 0,
    pid: running ? 10_000 + vm.vmid : undefined,
    ...(vm.lock ? { lock: vm.lock } : {}),
    ...(vm.config.tags ? { tags: vm.config.tags } : {}),
    template: vm.template ? 1 : undefined,
    ha: { managed: 0 },
    agent: 1,
  };
}

function rrd(vm: Vm, timeframe: string): Record<string, number>[] {
  const spec = TIMEFRAMES[timeframe];
  if (!spec)
    throw new PveError(400, 'Parameter verification failed.', {
      timeframe: "value 'x' does not have a value in the enumeration 'hour, day, week, month, year'",
    });
  const now = Math.floor(Date.now() / 1000 / spec.step) * spec.step;
  const points = [];
  for (let i = spec.points - 1; i >= 0; i--) {
    const time = now - i * spec.step;
    const maxmem = vm.memoryMb * 1024 * 1024;
    const point: Record<string, number> = { time, maxcpu: vm.cores, maxmem, maxdisk: vm.diskGb * 1024 ** 3, disk: 0 };
    // Before the VM existed there is nothing to report; a stopped VM reports only its maxima.
    if ((time + spec.step) * 1000 > vm.createdAt && vm.status === 'running') {
      const wave = Math.abs(Math.sin(time / (spec.step * 7) + vm.vmid));
      point.cpu = Number((0.03 + 0.4 * wave).toFixed(4));
      point.mem = Math.floor(maxmem * (0.25 + 0.3 * wave));
      point.netin = Math.floor(2000 + 50_000 * wave);
      point.netout = Math.floor(1500 + 30_000 * wave);
      point.diskread = Math.floor(10_000 * wave);
      point.diskwrite = Math.floor(20_000 * wave);
    }
    points.push(point);
  }
  return points;
}

/** Answer one API call: returns `data`, or throws PveError. */
export function handle(ctx: ApiContext, method: string, path: string, params: Params): unknown {
  const parts = path.split('/').filter(Boolean);
  const route = `${method} /${parts.map((p, i) => ((i === 1 && parts[0] === 'nodes') || (i === 3 && parts[2] === 'qemu') || (i === 3 && parts[2] === 'tasks') ? ':' : p)).join('/')}`;
  if (parts[0] === 'nodes' && parts[1] !== ctx.node)
    throw new PveError(
      500,
      `hostname lookup '${parts[1]}' failed - failed to get address info for: ${parts[1]}: Name or service not known`,
    );
  const vmid = parts[3] ?? '';
  switch (route) {
    case 'GET /version':
      return { version: '8.2.4', release: '8.2', repoid: 'faa83925c9641325' };
    case 'GET /cluster/nextid': {
      if (params.vmid !== undefined) {
        if (ctx.state.vms.has(Number(params.vmid)))
          throw new PveError(400, 'Parameter verification failed.', { vmid: `VM ${params.vmid} already exists` });
        return params.vmid;
      }
      return String(ctx.state.nextId());
    }
    case 'GET /nodes/:/qemu':
      return [...ctx.state.vms.values()].map((vm) => ({ ...statusOf(vm), template: vm.template ? 1 : 0 }));
    case 'POST /nodes/:/qemu/:/clone': {
      const source = vmOf(ctx, vmid);
      const newid = Number(params.newid);
      if (!Number.isInteger(newid) || newid < 100)
        throw new PveError(400, 'Parameter verification failed.', { newid: 'value must be an integer >= 100' });
      if (ctx.state.vms.has(newid)) throw new PveError(500, `unable to create VM ${newid}: config file already exists`);
      assertUnlocked(source);
      const vm: Vm = {
        ...structuredClone(source),
        vmid: newid,
        name: params.name ?? `Copy-of-VM-${source.name}`,
        template: false,
        status: 'stopped',
        qmpstatus: null,
        lock: 'clone',
        config: {
          ...source.config,
          name: params.name ?? `Copy-of-VM-${source.name}`,
          scsi0: `local-lvm:vm-${newid}-disk-0,size=${source.diskGb}G`,
        },
        createdAt: Date.now(),
        startedAt: null,
      };
      if (params.description) vm.config.description = params.description;
      ctx.state.vms.set(newid, vm);
      ctx.changed();
      return task(ctx, 'qmclone', String(source.vmid), () => {
        vm.lock = null;
      });
    }
    case 'GET /nodes/:/qemu/:/config':
      return publicConfig(vmOf(ctx, vmid));
    case 'PUT /nodes/:/qemu/:/config': {
      const vm = vmOf(ctx, vmid);
      assertUnlocked(vm);
      applyConfig(vm, params);
      ctx.changed();
      return null;
    }
    case 'POST /nodes/:/qemu/:/config': {
      const vm = vmOf(ctx, vmid);
      return lockedTask(ctx, vm, 'qmconfig', 'config', () => applyConfig(vm, params));
    }
    case 'PUT /nodes/:/qemu/:/resize': {
      const vm = vmOf(ctx, vmid);
      assertUnlocked(vm);
      const match = /^(\+)?(\d+)G$/.exec(params.size ?? '');
      if (!match || !params.disk)
        throw new PveError(400, 'Parameter verification failed.', { size: 'value does not match the regex pattern' });
      const size = Number(match[2]);
      const target = match[1] ? vm.diskGb + size : size;
      if (target < vm.diskGb) throw new PveError(500, 'shrinking disks is not supported');
      return lockedTask(ctx, vm, 'resize', 'disk', () => {
        vm.diskGb = target;
      });
    }
    case 'GET /nodes/:/qemu/:/status/current':
      return statusOf(vmOf(ctx, vmid));
    case 'POST /nodes/:/qemu/:/status/start': {
      const vm = vmOf(ctx, vmid);
      if (vm.template) throw new PveError(500, 'you cannot start a template');
      assertUnlocked(vm);
      const wasRunning = vm.status === 'running';
      return task(
        ctx,
        'qmstart',
        vmid,
        () => {
          vm.qmpstatus = null;
          if (wasRunning) throw new Error(`VM ${vmid} already running`);
          vm.status = 'running';
          vm.startedAt = Date.now();
        },
        () => {
          if (!wasRunning) vm.qmpstatus = 'prelaunch';
        },
      );
    }
    case 'POST /nodes/:/qemu/:/status/stop':
    case 'POST /nodes/:/qemu/:/status/shutdown': {
      const vm = vmOf(ctx, vmid);
      assertUnlocked(vm);
      const hard = route.endsWith('/stop');
      const wasRunning = vm.status === 'running';
      return task(
        ctx,
        hard ? 'qmstop' : 'qmshutdown',
        vmid,
        () => {
          vm.qmpstatus = null;
          if (!wasRunning && !hard) throw new Error(`VM ${vmid} not running`);
          vm.status = 'stopped';
          vm.startedAt = null;
        },
        () => {
          if (wasRunning) vm.qmpstatus = 'shutdown';
        },
      );
    }
    case 'POST /nodes/:/qemu/:/status/reboot':
    case 'POST /nodes/:/qemu/:/status/reset': {
      const vm = vmOf(ctx, vmid);
      if (vm.status !== 'running') throw new PveError(500, `VM ${vmid} not running`);
      assertUnlocked(vm);
      return task(ctx, route.endsWith('reboot') ? 'qmreboot' : 'qmreset', vmid, () => {
        vm.startedAt = Date.now();
      });
    }
    case 'POST /nodes/:/qemu/:/status/suspend':
    case 'POST /nodes/:/qemu/:/status/resume': {
      const vm = vmOf(ctx, vmid);
      if (vm.status !== 'running') throw new PveError(500, `VM ${vmid} not running`);
      const suspend = route.endsWith('suspend');
      return task(ctx, suspend ? 'qmsuspend' : 'qmresume', vmid, () => {
        vm.qmpstatus = suspend ? 'paused' : null;
      });
    }
    case 'GET /nodes/:/qemu/:/rrddata':
      if (!params.timeframe)
        throw new PveError(400, 'Parameter verification failed.', {
          timeframe: 'property is missing and it is not optional',
        });
      return rrd(vmOf(ctx, vmid), params.timeframe);
    case 'POST /nodes/:/qemu/:/vncproxy':
    case 'POST /nodes/:/qemu/:/termproxy': {
      const vm = vmOf(ctx, vmid);
      if (vm.status !== 'running') throw new PveError(500, `VM ${vmid} not running`);
      const port = 5900 + (vm.vmid % 100);
      const ticket = `PVEVNC:${hex8(Math.floor(Date.now() / 1000))}::${randomBytes(48).toString('base64')}`;
      const upid = task(ctx, route.endsWith('vncproxy') ? 'vncproxy' : 'vncshell', vmid, () => {});
      ctx.state.consoles.set(ticket, {
        vmid: vm.vmid,
        port,
        kind: route.endsWith('vncproxy') ? 'vnc' : 'serial',
        user: ctx.user,
        expires: Date.now() + 40_000,
      });
      return route.endsWith('vncproxy')
        ? {
            user: ctx.user,
            ticket,
            cert: '-----BEGIN CERTIFICATE-----\nEMULATED\n-----END CERTIFICATE-----\n',
            port: String(port),
            upid,
            password: randomUUID().slice(0, 8),
          }
        : { user: ctx.user, ticket, port: String(port), upid };
    }
    case 'DELETE /nodes/:/qemu/:': {
      const vm = vmOf(ctx, vmid);
      if (vm.status === 'running') throw new PveError(500, `VM ${vmid} is running - destroy failed`);
      return lockedTask(ctx, vm, 'qmdestroy', 'destroyed', () => {
        ctx.state.vms.delete(vm.vmid);
      });
    }
    case 'GET /nodes/:/tasks/:/status': {
      const found = ctx.state.tasks.get(decodeURIComponent(parts[3] ?? ''));
      if (!found) throw new PveError(500, 'no such task');
      const { log: _log, ...status } = found;
      return {
        ...status,
        pid: Number.parseInt(found.upid.split(':')[2] ?? '0', 16),
        ...(found.exitstatus === null ? {} : { exitstatus: found.exitstatus }),
      };
    }
    case 'GET /nodes/:/tasks/:/log': {
      const found = ctx.state.tasks.get(decodeURIComponent(parts[3] ?? ''));
      if (!found) throw new PveError(500, 'no such task');
      return found.log.map((t, i) => ({ n: i + 1, t }));
    }
    default:
      throw new PveError(501, `Method '${method} /${parts.join('/')}' not implemented`);
  }
}
