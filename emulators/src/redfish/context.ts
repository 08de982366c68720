// What every part of the emulator shares: the settings it was started with, the fault knobs,
// the persisted state, and per machine (one BMC) what lives only in memory: its sessions, its
// tasks, its power and install timers, and its listener's URL.

import type { RedfishFaultKnobs } from './faults.ts';
import type { IdStyle, Machine, RedfishState, ResetType } from './state.ts';

export interface Settings {
  username: string;
  password: string;
  /** How long an install takes once the machine boots the installer from virtual CD. */
  installDelayMs: number;
  /** How long PoweringOn / PoweringOff last. */
  powerDelayMs: number;
  /** How long a task (InsertMedia, SecureErase) runs. */
  taskDelayMs: number;
  /** PATCH of the system without If-Match answers 428 (as some BMCs do). */
  requireIfMatch: boolean;
  /** `ResetType@Redfish.AllowableValues` of the systems. */
  resetTypes: readonly ResetType[];
  /** The allowable ResetTypes are in a separate ActionInfo resource (`@Redfish.ActionInfo`, as OpenBMC does). */
  resetActionInfo: boolean;
  /** VirtualMedia slots have the InsertMedia / EjectMedia actions; false: only PATCH of Image/Inserted (older BMCs). */
  mediaActions: boolean;
  ids: IdStyle;
}

export interface Session {
  id: string;
  token: string;
  user: string;
  createdAt: number;
  lastUsedAt: number;
}

export type TaskState = 'Running' | 'Completed' | 'Exception';

export interface Task {
  id: string;
  name: string;
  state: TaskState;
  /** What the task was started on (the action's target URI). */
  targetUri: string;
  startedAt: string;
  endedAt: string | null;
  /** A failure's reason, shown in Messages. */
  failure: string | null;
}

export interface Runtime {
  machine: Machine;
  url: string;
  sessions: Map<string, Session>;
  tasks: Map<string, Task>;
  nextTask: number;
  /** The pending power transition, if any. */
  powerTimer: NodeJS.Timeout | null;
  installTimer: NodeJS.Timeout | null;
  /** Virtual media slots with an InsertMedia task running. */
  busySlots: Set<string>;
  /** Drives with a SecureErase task running. */
  erasing: Set<string>;
}

export interface Ctx {
  state: RedfishState;
  faults: RedfishFaultKnobs;
  settings: Settings;
  /** Every timer started, so stop() can clear them. */
  timers: Set<NodeJS.Timeout>;
  changed(): void;
}

/** A timer that stop() clears; it forgets itself when it fires. */
export function later(ctx: Ctx, ms: number, run: () => void): NodeJS.Timeout {
  const timer = setTimeout(() => {
    ctx.timers.delete(timer);
    if (ctx.state.frozen) return;
    run();
  }, ms);
  ctx.timers.add(timer);
  return timer;
}

export function cancel(ctx: Ctx, timer: NodeJS.Timeout | null): void {
  if (timer === null) return;
  clearTimeout(timer);
  ctx.timers.delete(timer);
}
