// Tasks as PVE runs them (upstreams.md §2.3): a mutating call answers at once with a UPID, the
// work finishes later, and GET …/tasks/{upid}/status|log tell how it ended. Errors answered to a
// call are PveError: status, the text PVE would put in the reason phrase, per-parameter errors.

import { type FaultKnobs, takeTaskFailure } from './faults.ts';
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

/** 400 "Parameter verification failed." with the per-parameter reasons. */
export function paramError(errors: Record<string, string>): PveError {
  return new PveError(400, 'Parameter verification failed.', errors);
}

export interface ApiContext {
  state: NodeState;
  node: string;
  /** Who the tasks run as: the API token's id. */
  user: string;
  taskDelayMs: number;
  /** The `local` directory storage (/var/lib/vz on a real node): snippets are in its snippets/ (./cloudinit.ts). */
  storageDir: string;
  faults: FaultKnobs;
  /** Pending task timers, cleared when the emulator stops. */
  timers: Set<NodeJS.Timeout>;
  changed(): void;
}

export interface TaskSpec {
  type: string;
  id: string;
  /** How long the task runs (default: the emulator's taskDelayMs). */
  durationMs?: number;
  /** At once, when the task starts: take a lock, show a transitional state. */
  begin?: () => void;
  /** When the task ends; what it throws becomes the exit status. */
  work: (log: (line: string) => void) => void;
  /** Always, after the work or a failure: release the lock, clear the transitional state. */
  settle?: (ok: boolean) => void;
}

let pidCounter = 0x1a2b0;

function hex8(n: number): string {
  return (n >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

/** Start a task; returns its UPID (`UPID:node:pid:pstart:starttime:type:id:user:`). */
export function startTask(ctx: ApiContext, spec: TaskSpec): string {
  const starttime = Math.floor(Date.now() / 1000);
  const pid = ++pidCounter;
  const pstart = (pid * 7919) >>> 0;
  const upid = `UPID:${ctx.node}:${hex8(pid)}:${hex8(pstart)}:${hex8(starttime)}:${spec.type}:${spec.id}:${ctx.user}:`;
  const task: Task = {
    upid,
    node: ctx.node,
    type: spec.type,
    id: spec.id,
    user: ctx.user,
    pid,
    pstart,
    starttime,
    endtime: null,
    status: 'running',
    exitstatus: null,
    log: [],
  };
  ctx.state.tasks.set(upid, task);
  spec.begin?.();
  const injected = takeTaskFailure(ctx.faults);
  ctx.changed();
  const timer = setTimeout(() => {
    ctx.timers.delete(timer);
    let ok = true;
    try {
      if (injected) throw new Error(`${spec.type} failed: emulated task failure`);
      spec.work((line) => task.log.push(line));
      task.exitstatus = 'OK';
      task.log.push('TASK OK');
    } catch (error) {
      ok = false;
      task.exitstatus = (error as Error).message;
      task.log.push(`TASK ERROR: ${task.exitstatus}`);
    }
    spec.settle?.(ok);
    task.status = 'stopped';
    task.endtime = Math.floor(Date.now() / 1000);
    ctx.changed();
  }, spec.durationMs ?? ctx.taskDelayMs);
  timer.unref();
  ctx.timers.add(timer);
  return upid;
}

export function assertUnlocked(vm: Vm): void {
  if (vm.lock) throw new PveError(500, `VM is locked (${vm.lock})`);
}

/** A task that holds the VM's config lock while it runs, as clone, config, resize and destroy do. */
export function lockedTask(ctx: ApiContext, vm: Vm, lock: string, spec: TaskSpec): string {
  assertUnlocked(vm);
  return startTask(ctx, {
    ...spec,
    begin: () => {
      vm.lock = lock;
      spec.begin?.();
    },
    settle: (ok) => {
      vm.lock = null;
      spec.settle?.(ok);
    },
  });
}

function taskOf(ctx: ApiContext, upid: string): Task {
  const task = ctx.state.tasks.get(upid);
  if (task) return task;
  if (!/^UPID:[^:]+:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:[^:]+:[^:]*:[^:]+:$/.test(upid)) {
    throw new PveError(400, 'Parameter verification failed.', { upid: 'unable to parse worker upid' });
  }
  throw new PveError(500, `no such task`);
}

export function taskStatus(ctx: ApiContext, upid: string): Record<string, unknown> {
  const task = taskOf(ctx, upid);
  return {
    upid: task.upid,
    node: task.node,
    pid: task.pid,
    pstart: task.pstart,
    starttime: task.starttime,
    type: task.type,
    id: task.id,
    user: task.user,
    status: task.status,
    ...(task.status === 'stopped' ? { exitstatus: task.exitstatus ?? 'unexpected status' } : {}),
  };
}

export function taskLog(ctx: ApiContext, upid: string, params: Record<string, string>): { n: number; t: string }[] {
  const task = taskOf(ctx, upid);
  const start = Math.max(0, Number(params.start ?? 0) || 0);
  const limit = Math.max(1, Number(params.limit ?? 50) || 50);
  const lines = [`starting ${task.type} ${task.id}`, ...task.log];
  return lines.slice(start, start + limit).map((t, i) => ({ n: start + i + 1, t }));
}
