// Power paths with PVE's rules (upstreams.md §2.4, §2.5): start of a running VM is a task that
// fails "already running"; reboot and reset of a stopped VM die at once "not running"; shutdown
// of a stopped VM is a failed task; a paused VM cannot be shut down (forceStop stops it); a
// guest that ignores ACPI makes shutdown wait its timeout, then force (forceStop) or fail.

import { generateCloudInit } from './cloudinit.ts';
import { liveUsage } from './metrics.ts';
import { any, bool, int, isTrue, verify } from './params.ts';
import type { Vm } from './state.ts';
import { type ApiContext, assertUnlocked, PveError, startTask } from './tasks.ts';
import { vmOf } from './vms.ts';

/** PVE's default wait for a guest to power down, in seconds. */
const DEFAULT_SHUTDOWN_TIMEOUT = 60;

export function currentStatus(vm: Vm): Record<string, unknown> {
  const running = vm.status === 'running';
  return {
    vmid: vm.vmid,
    name: vm.name,
    status: vm.status,
    qmpstatus: vm.qmpstatus ?? vm.status,
    ...liveUsage(vm),
    ...(running ? { pid: 10_000 + vm.vmid, 'running-machine': 'pc-i440fx-8.1+pve0', 'running-qemu': '8.1.5' } : {}),
    ...(vm.lock ? { lock: vm.lock } : {}),
    ...(vm.config.tags ? { tags: vm.config.tags } : {}),
    ...(vm.template ? { template: 1 } : {}),
    ha: { managed: 0 },
    agent: vm.config.agent === '1' ? 1 : 0,
  };
}

function notRunning(vm: Vm): PveError {
  return new PveError(500, `VM ${vm.vmid} not running`);
}

function unlessSkiplock(vm: Vm, params: Record<string, string>): void {
  if (!isTrue(params.skiplock)) assertUnlocked(vm);
}

function start(ctx: ApiContext, vm: Vm, params: Record<string, string>): string {
  verify(params, { timeout: int(0, 86_400), skiplock: bool, machine: any, 'force-cpu': any });
  if (vm.template) throw new PveError(500, "you can't start a VM if it's a template");
  unlessSkiplock(vm, params);
  const wasRunning = vm.status === 'running';
  return startTask(ctx, {
    type: 'qmstart',
    id: String(vm.vmid),
    begin: () => {
      // The QEMU process exists at once; the guest CPUs run when the task ends.
      if (!wasRunning) Object.assign(vm, { status: 'running', qmpstatus: 'prelaunch' });
    },
    work: () => {
      if (wasRunning) throw new Error(`VM ${vm.vmid} already running`);
      // PVE regenerates the cloud-init drive at every start; a custom file it names must exist.
      generateCloudInit(ctx, vm);
      ctx.state.powerOn(vm);
    },
    settle: (ok) => {
      if (!ok && !wasRunning) ctx.state.powerOff(vm);
    },
  });
}

function stopOrShutdown(ctx: ApiContext, vm: Vm, params: Record<string, string>, hard: boolean): string {
  verify(params, {
    timeout: int(0, 86_400),
    forceStop: bool,
    keepActive: bool,
    skiplock: bool,
    'overrule-shutdown': bool,
    migratedfrom: any,
  });
  unlessSkiplock(vm, params);
  const wasRunning = vm.status === 'running';
  let kill = hard;
  if (!hard && wasRunning && vm.qmpstatus === 'paused') {
    if (!isTrue(params.forceStop)) throw new PveError(500, 'VM is paused - cannot shutdown');
    kill = true;
  }
  const ignored = !kill && wasRunning && ctx.faults.ignoreAcpi;
  const timeout = Number(params.timeout ?? DEFAULT_SHUTDOWN_TIMEOUT);
  return startTask(ctx, {
    type: hard ? 'qmstop' : 'qmshutdown',
    id: String(vm.vmid),
    ...(ignored ? { durationMs: timeout * 1000 } : {}),
    begin: () => {
      if (wasRunning) vm.qmpstatus = 'shutdown';
    },
    work: (log) => {
      if (!wasRunning) {
        if (hard) return;
        throw new Error(`VM ${vm.vmid} not running`);
      }
      if (!hard && kill) log('VM is paused - stop instead of shutdown');
      if (ignored) {
        if (!isTrue(params.forceStop)) throw new Error('VM quit/powerdown failed - got timeout');
        log('VM still running - terminating now with SIGTERM');
      }
      ctx.state.powerOff(vm);
    },
    settle: (ok) => {
      if (!ok && vm.status === 'running') vm.qmpstatus = null;
    },
  });
}

function rebootOrReset(ctx: ApiContext, vm: Vm, params: Record<string, string>, reset: boolean): string {
  verify(params, reset ? { skiplock: bool } : { timeout: int(0, 86_400) });
  if (vm.status !== 'running') throw notRunning(vm);
  unlessSkiplock(vm, params);
  const ignored = !reset && ctx.faults.ignoreAcpi && vm.qmpstatus !== 'paused';
  return startTask(ctx, {
    type: reset ? 'qmreset' : 'qmreboot',
    id: String(vm.vmid),
    ...(ignored ? { durationMs: Number(params.timeout ?? DEFAULT_SHUTDOWN_TIMEOUT) * 1000 } : {}),
    work: () => {
      if (ignored) throw new Error('VM quit/powerdown failed - got timeout');
      // A reboot applies pending changes: the guest powers off and starts again.
      ctx.state.powerOff(vm);
      ctx.state.powerOn(vm);
    },
  });
}

function suspendOrResume(ctx: ApiContext, vm: Vm, params: Record<string, string>, suspend: boolean): string {
  verify(params, suspend ? { todisk: bool, skiplock: bool, statestorage: any } : { skiplock: bool, nocheck: bool });
  if (vm.status !== 'running') throw notRunning(vm);
  if (isTrue(params.todisk)) throw new PveError(501, 'suspend to disk is not emulated');
  unlessSkiplock(vm, params);
  return startTask(ctx, {
    type: suspend ? 'qmsuspend' : 'qmresume',
    id: String(vm.vmid),
    work: () => {
      if (vm.status !== 'running') throw notRunning(vm);
      vm.qmpstatus = suspend ? 'paused' : null;
    },
  });
}

/** POST …/qemu/{vmid}/status/{action}. */
export function powerAction(ctx: ApiContext, vmid: string, action: string, params: Record<string, string>): string {
  const vm = vmOf(ctx, vmid);
  switch (action) {
    case 'start':
      return start(ctx, vm, params);
    case 'stop':
    case 'shutdown':
      return stopOrShutdown(ctx, vm, params, action === 'stop');
    case 'reboot':
    case 'reset':
      return rebootOrReset(ctx, vm, params, action === 'reset');
    case 'suspend':
    case 'resume':
      return suspendOrResume(ctx, vm, params, action === 'suspend');
    default:
      throw new PveError(501, `Method 'POST /nodes/${ctx.node}/qemu/${vmid}/status/${action}' not implemented`);
  }
}
