// Bare-metal machines behind DMTF Redfish BMCs on loopback, for the demo and the tests. Each
// machine is its own BMC on its own listener (its own port), serving the standard URI space
// (`/redfish/v1/…`) as iDRAC, iLO, Supermicro or OpenBMC do: service root, SessionService
// (X-Auth-Token sessions), Systems (power, Reset, boot override, NICs, Storage/Drives with
// SecureErase), Managers with VirtualMedia (InsertMedia / EjectMedia), TaskService (202 +
// task monitors). A machine "installs" from the virtual CD when it boots it through a one-time
// override (see ./power.ts and ./install.ts). Fault knobs (./faults.ts) apply to every
// machine; /__emulator/faults|state|reset|expire-sessions work on every machine's port.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Ctx, Runtime, Settings } from './context.ts';
import { noFaults, parseFaults, type RedfishFaultKnobs, takeCount, takeError, takeLoss } from './faults.ts';
import { message, RedfishError, readJson, sendEmpty, sendError, sendJson } from './http.ts';
import { resume } from './power.ts';
import { actionKey, route, segments } from './routes.ts';
import { type IdStyle, type Machine, newMachine, RESET_TYPES, RedfishState, type ResetType, restock } from './state.ts';

export type { RedfishFaultKnobs } from './faults.ts';
export type { IdStyle, InstalledOs, InstallParams, Machine as RedfishMachine, ResetType } from './state.ts';
export { RedfishState } from './state.ts';

export interface RedfishEmulatorOptions {
  /** 0 (the default): every machine on a free port. N: machine i listens on N + i. */
  port?: number;
  /** How many machines (each one BMC on its own port); default 3. */
  machines?: number;
  /** The same, under the name the issue used. `machines` wins when both are given. */
  systems?: number;
  /** The BMC account (default root / calvin-emulated). */
  username?: string;
  password?: string;
  /** An install takes this long after the machine boots the installer (default 5000). */
  installDelayMs?: number;
  /** PoweringOn / PoweringOff last this long (default 1000). */
  powerDelayMs?: number;
  /** A task (InsertMedia, SecureErase) runs this long (default 500). */
  taskDelayMs?: number;
  /** JSON file keeping the machines (disks, media, boot, install) across restarts. */
  stateFile?: string | null;
  /** Member ids like Dell's (`System.Embedded.1`, default) or random ones, CD slot in a random place. */
  ids?: IdStyle;
  /** PATCH of a system without If-Match answers 428 PreconditionRequired (default false). */
  requireIfMatch?: boolean;
  /** The ResetTypes the systems allow (`ResetType@Redfish.AllowableValues`; default all seven). */
  resetTypes?: ResetType[];
  /** The allowable ResetTypes in a separate ActionInfo resource, as OpenBMC does (default false: inline). */
  resetActionInfo?: boolean;
  /** VirtualMedia with InsertMedia/EjectMedia actions (default true); false: PATCH of Image/Inserted only, as older BMCs. */
  mediaActions?: boolean;
}

export interface RedfishMachineInfo {
  /** The BMC's base URL (what a node's endpoint is), e.g. http://127.0.0.1:41234. */
  url: string;
  port: number;
  serial: string;
  /** The system's member id (informational: clients must discover it). */
  systemId: string;
}

export interface RedfishEmulator {
  machines: RedfishMachineInfo[];
  username: string;
  password: string;
  /** The live knobs (shared by every machine); change them with setFaults. */
  faults: RedfishFaultKnobs;
  setFaults(change: Partial<RedfishFaultKnobs>): Promise<void>;
  /**
   * Calls received by every machine, by `METHOD /path` and by action name (`ComputerSystem.Reset`,
   * `VirtualMedia.InsertMedia`, `VirtualMedia.EjectMedia`, `Drive.SecureErase`,
   * `PATCH ComputerSystem`, `PATCH VirtualMedia`, `Sessions`, `DELETE Session`).
   */
  calls: Map<string, number>;
  /**
   * API requests of each machine (index → `METHOD /path` → count), counted as they arrive, before
   * any fault knob: a hanging or slow BMC still shows what it was asked.
   */
  received: Map<string, number>[];
  /** Each machine's state (`state.machines[i]`: power, boot, media, drives, install, actions). */
  state: RedfishState;
  /** Open sessions per machine (index → count). */
  sessionCount(index: number): number;
  /** Every session of every machine expires now (the next request with its token gets 401). */
  expireSessions(): void;
  /** Clear the knobs and counters; with `machines`, every machine back to stock (sessions and tasks dropped). */
  reset(options?: { machines?: boolean }): void;
  stop(): Promise<void>;
}

function cut(socket: Socket): void {
  socket.resetAndDestroy();
}

export async function startRedfishEmulator(options: RedfishEmulatorOptions = {}): Promise<RedfishEmulator> {
  const count = options.machines ?? options.systems ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error('machines: a whole number >= 1');
  const state = new RedfishState(options.stateFile ?? null);
  state.load();
  const ids = options.ids ?? 'dell';
  while (state.machines.length < count) state.machines.push(newMachine(state.machines.length, ids));
  const settings: Settings = {
    username: options.username ?? 'root',
    password: options.password ?? 'calvin-emulated',
    installDelayMs: options.installDelayMs ?? 5000,
    powerDelayMs: options.powerDelayMs ?? 1000,
    taskDelayMs: options.taskDelayMs ?? 500,
    requireIfMatch: options.requireIfMatch ?? false,
    resetTypes: options.resetTypes ?? RESET_TYPES,
    resetActionInfo: options.resetActionInfo ?? false,
    mediaActions: options.mediaActions ?? true,
    ids,
  };
  const faults = noFaults();
  const calls = new Map<string, number>();
  const counted = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  const sockets = new Set<Socket>();
  const received: Map<string, number>[] = [];
  const ctx: Ctx = { state, faults, settings, timers: new Set(), changed: () => state.save() };
  const runtimes: Runtime[] = [];
  const servers: Server[] = [];

  const newRuntime = (machine: Machine): Runtime => ({
    machine,
    url: '',
    sessions: new Map(),
    tasks: new Map(),
    nextTask: 1,
    powerTimer: null,
    installTimer: null,
    busySlots: new Set(),
    erasing: new Set(),
  });

  async function api(rt: Runtime, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    if (faults.down) return void cut(req.socket);
    let body: unknown;
    let bodyError: RedfishError | null = null;
    try {
      body = await readJson(req);
    } catch (error) {
      if (!(error instanceof RedfishError)) throw error;
      bodyError = error;
    }
    if (faults.hang) return;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (faults.down) return void cut(req.socket);
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    counted(`${method} ${path}`);
    const parts = segments(path);
    const key = parts ? actionKey(method, parts.slice(2)) : null;
    if (key) counted(key);
    if (faults.resetting || takeCount(faults, 'unavailable')) {
      const seconds = Math.max(0, Math.round(faults.retryAfterSeconds));
      return sendError(
        res,
        new RedfishError(503, message('ServiceTemporarilyUnavailable', [String(seconds)]), {
          'retry-after': String(seconds),
        }),
      );
    }
    if (takeError(faults)) return sendError(res, new RedfishError(500, message('InternalError')));
    if (bodyError) return sendError(res, bodyError);
    if (!parts) return sendError(res, new RedfishError(404, message('ResourceMissingAtURI', [path])));
    let answer: ReturnType<typeof route>;
    try {
      answer = route(ctx, rt, req, method, path, parts, body);
    } catch (error) {
      if (error instanceof RedfishError) return sendError(res, error);
      throw error;
    }
    if (method !== 'GET') ctx.changed();
    // The work is done; the answer never arrives.
    if (takeLoss(faults, key ? [`${method} ${path}`, key] : `${method} ${path}`)) return void req.socket.destroy();
    if (answer.body === undefined) sendEmpty(res, answer.status, answer.headers);
    else sendJson(res, answer.status, answer.body, answer.headers);
  }

  function snapshot(): unknown {
    return {
      machines: runtimes.map((rt) => ({
        url: rt.url,
        ...rt.machine,
        installParams: rt.machine.installParams
          ? { ...rt.machine.installParams, PasswordHash: rt.machine.installParams.PasswordHash ? '(set)' : null }
          : null,
        sessions: rt.sessions.size,
        tasks: [...rt.tasks.values()],
      })),
      calls: Object.fromEntries(calls),
      faults,
    };
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return sendJson(res, 400, { error: 'the body is not JSON' });
    }
    if (path === '/__emulator/faults' && req.method === 'POST') {
      try {
        applyFaults(parseFaults(body ?? {}), req.socket);
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
      return sendJson(res, 200, { faults });
    }
    if (path === '/__emulator/faults') return sendJson(res, 200, { faults });
    if (path === '/__emulator/state') return sendJson(res, 200, snapshot());
    if (path === '/__emulator/reset' && req.method === 'POST') {
      const machines = typeof body === 'object' && body !== null && (body as { machines?: unknown }).machines === true;
      emulator.reset({ machines });
      return sendJson(res, 200, { ok: true });
    }
    if (path === '/__emulator/expire-sessions' && req.method === 'POST') {
      emulator.expireSessions();
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'unknown control path' });
  }

  function applyFaults(change: Partial<RedfishFaultKnobs>, keep?: Socket): void {
    Object.assign(faults, change);
    if (change.down) for (const socket of sockets) if (socket !== keep) cut(socket);
  }

  for (const machine of state.machines) {
    const rt = newRuntime(machine);
    runtimes.push(rt);
    resume(ctx, rt);
    const arrived = new Map<string, number>();
    received.push(arrived);
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://bmc');
      if (!url.pathname.startsWith('/__emulator/')) {
        const key = `${req.method ?? 'GET'} ${url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname}`;
        arrived.set(key, (arrived.get(key) ?? 0) + 1);
      }
      const work = url.pathname.startsWith('/__emulator/') ? control(req, res, url.pathname) : api(rt, req, res, url);
      work.catch((error: unknown) => {
        console.error('redfish emulator: request failed', error);
        if (!res.headersSent) sendError(res, new RedfishError(500, message('InternalError')));
      });
    });
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    const port = options.port ? options.port + machine.index : 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    rt.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    servers.push(server);
  }
  state.save();

  const emulator: RedfishEmulator = {
    machines: runtimes.map((rt) => ({
      url: rt.url,
      port: Number(new URL(rt.url).port),
      serial: rt.machine.serial,
      systemId: rt.machine.systemId,
    })),
    username: settings.username,
    password: settings.password,
    faults,
    calls,
    received,
    state,
    async setFaults(change) {
      applyFaults(parseFaults(change));
    },
    sessionCount: (index) => runtimes[index]?.sessions.size ?? 0,
    expireSessions() {
      for (const rt of runtimes) rt.sessions.clear();
    },
    reset({ machines = false } = {}) {
      Object.assign(faults, noFaults());
      calls.clear();
      for (const arrived of received) arrived.clear();
      if (!machines) return;
      // Power transitions, installs and tasks under way are abandoned.
      for (const timer of ctx.timers) clearTimeout(timer);
      ctx.timers.clear();
      for (const rt of runtimes) {
        rt.powerTimer = null;
        rt.installTimer = null;
        rt.sessions.clear();
        rt.tasks.clear();
        rt.busySlots.clear();
        rt.erasing.clear();
        restock(rt.machine);
      }
      state.save();
    },
    async stop() {
      state.frozen = true;
      for (const timer of ctx.timers) clearTimeout(timer);
      ctx.timers.clear();
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
  return emulator;
}
