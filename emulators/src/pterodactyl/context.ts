// What every handler shares: the state, the fault knobs, the two base URLs, the delays, the
// timers to clear on stop, and the per-server event bus the console WebSockets listen on
// (Wings' server events: console output, status, stats, install, backups).

import type { PteroFaultKnobs } from './faults.ts';
import type { Body } from './http.ts';
import type { ApiKey, PanelState, Server, User } from './state.ts';

export type Listener = (event: string, args: string[]) => void;

export interface Delays {
  installMs: number;
  startMs: number;
  backupMs: number;
  tokenTtlSeconds: number;
  tokenCheckMs: number;
}

export interface Ctx {
  state: PanelState;
  faults: PteroFaultKnobs;
  panelUrl: string;
  wingsUrl: string;
  delays: Delays;
  timers: Set<NodeJS.Timeout>;
  listeners: Map<string, Set<Listener>>;
  /** Used JWT ids of single-use Wings tokens (upload/download). */
  usedJti: Set<string>;
}

/** One authenticated API request. */
export interface Req {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Body;
  raw: Buffer;
  user: User;
  key: ApiKey;
  ip: string;
}

/** Run `fn` after `ms` unless the emulator stops first. */
export function later(ctx: Ctx, ms: number, fn: () => void): void {
  const timer = setTimeout(() => {
    ctx.timers.delete(timer);
    fn();
  }, ms);
  ctx.timers.add(timer);
}

/** Push an event to every console socket of this server (by uuid). */
export function emit(ctx: Ctx, server: Server, event: string, ...args: string[]): void {
  for (const listener of ctx.listeners.get(server.uuid) ?? []) listener(event, args);
}

export function changed(ctx: Ctx): void {
  ctx.state.save();
}

/** Log an activity event for a server, as the panel's Activity facade does. */
export function activity(
  ctx: Ctx,
  req: Pick<Req, 'user' | 'ip'> | null,
  server: Server | null,
  event: string,
  properties: Record<string, unknown> = {},
): void {
  ctx.state.addActivity({
    serverId: server?.id ?? null,
    batch: null,
    event,
    isApi: req !== null,
    ip: req?.ip ?? '127.0.0.1',
    description: null,
    properties,
    actorId: req?.user.id ?? null,
  });
}
