// A Pterodactyl Panel and its Wings node on loopback, speaking the real APIs (upstreams.md §1):
// the Application API and the Client API on the panel port, and Wings (console WebSocket, signed
// upload/download) on a separate port, like a real node. Servers install, start, run a fake
// Minecraft console, keep files, backups, databases, schedules and subusers. Fault knobs make it
// slow, dead, hanging, failing, rate limited, forbidding, losing answers or cut off from Wings;
// /__emulator/* sets them over HTTP and shows the state and per-route call counters.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { cut, handlePanel } from './api.ts';
import { runDueSchedules } from './client-extra.ts';
import type { Ctx } from './context.ts';
import { NO_FAULTS, type PteroFaultKnobs, parseFaults } from './faults.ts';
import { readBody } from './http.ts';
import { checkKey, makeKey, PANEL_NODE_ID, seed, setKeys } from './seed.ts';
import { PanelState } from './state.ts';
import { createWings } from './wings.ts';

export type { PteroFaultKnobs } from './faults.ts';
export type { Backup as PteroBackup, FileEntry, Server as PteroServer, User as PteroUser } from './state.ts';
export { PanelState } from './state.ts';

export interface PterodactylEmulatorOptions {
  /** 0 (the default) picks a free port; the panel's HTTP API. */
  port?: number;
  /** 0 (the default) picks a free port; Wings (console WebSocket, upload/download), a separate listener. */
  wingsPort?: number;
  /** `ptla_` + 11 + 32 characters (48); random when absent. */
  appKey?: string;
  /** `ptlc_` key of the root admin (user 1), who may use the client API on every server; random when absent. */
  clientKey?: string;
  /** JSON file keeping users, servers, files, backups… across restarts, written after changes. */
  stateFile?: string | null;
  /** How long a new server / reinstall stays `installing` (default 3000). */
  installDelayMs?: number;
  /** Power start: `starting` → `running` (default 1500); stopping takes a third of it. */
  startDelayMs?: number;
  /** A backup (and a restore) completes after this (default 500). */
  backupDelayMs?: number;
  /** Console JWT lifetime (default 600 s). */
  tokenTtlSeconds?: number;
  /** How often a console socket checks its token for `token expiring`/`token expired` (default 30000). */
  tokenCheckMs?: number;
  /** How often a console socket gets `stats` while the server is not offline (default 1000). */
  statsIntervalMs?: number;
}

export interface PterodactylEmulator {
  url: string;
  wingsUrl: string;
  appKey: string;
  clientKey: string;
  /** The node with the free allocations (1). */
  panelNodeId: number;
  /** The live knobs; change them with setFaults (or directly). */
  faults: PteroFaultKnobs;
  setFaults(faults: Partial<PteroFaultKnobs>): Promise<void>;
  /** Calls received, by `METHOD /path` with ids replaced by `:` (e.g. `POST /api/client/servers/:/power`). */
  calls: Map<string, number>;
  /**
   * Panel API requests by `METHOD /exact/path` (ids kept), counted as they arrive, before any
   * fault knob: a hanging or slow panel still shows what it was asked (one list probe per server).
   */
  received: Map<string, number>;
  /**
   * Everything the panel and Wings hold: `servers` by id, `files` (server id → path → entry),
   * `backups`, `databases`, `schedules`, `subusers`, `activity`, and `runtime` (server id →
   * power state and console lines).
   */
  state: PanelState;
  /** Clear the knobs and counters; with `servers`, also every server (and what hangs on it) and every user but the admin. */
  reset(options?: { servers?: boolean }): void;
  stop(): Promise<void>;
}

function listen(server: ReturnType<typeof createServer>, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The keys of user 1 stored in a loaded state file. */
function storedKey(state: PanelState, type: 1 | 2): string | null {
  for (const k of state.keys.values()) if (k.userId === 1 && k.type === type) return k.identifier + k.secret;
  return null;
}

export async function startPterodactylEmulator(options: PterodactylEmulatorOptions = {}): Promise<PterodactylEmulator> {
  if (options.appKey) checkKey(options.appKey, 'ptla_');
  if (options.clientKey) checkKey(options.clientKey, 'ptlc_');
  const state = new PanelState(options.stateFile ?? null);
  const loaded = state.load();
  const appKey = options.appKey ?? (loaded ? storedKey(state, 2) : null) ?? makeKey('ptla_');
  const clientKey = options.clientKey ?? (loaded ? storedKey(state, 1) : null) ?? makeKey('ptlc_');
  const faults: PteroFaultKnobs = { ...NO_FAULTS };
  const calls = new Map<string, number>();
  const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  const received = new Map<string, number>();
  const panelSockets = new Set<Socket>();

  // The context needs both URLs: listen first, then fill them in.
  const ctx: Ctx = {
    state,
    faults,
    panelUrl: '',
    wingsUrl: '',
    delays: {
      installMs: options.installDelayMs ?? 3000,
      startMs: options.startDelayMs ?? 1500,
      backupMs: options.backupDelayMs ?? 500,
      tokenTtlSeconds: options.tokenTtlSeconds ?? 600,
      tokenCheckMs: options.tokenCheckMs ?? 30_000,
    },
    timers: new Set(),
    listeners: new Map(),
    usedJti: new Set(),
  };

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const raw = ((await readBody(req, 1024 * 1024)) ?? Buffer.alloc(0)).toString('utf8');
    if (path === '/__emulator/faults' && req.method === 'POST') {
      try {
        applyFaults(parseFaults(JSON.parse(raw || '{}')), req.socket);
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
      return sendJson(res, 200, { faults });
    }
    if (path === '/__emulator/faults') return sendJson(res, 200, { faults });
    if (path === '/__emulator/state') return sendJson(res, 200, summary());
    if (path === '/__emulator/reset' && req.method === 'POST') {
      let body: { servers?: unknown } = {};
      try {
        body = JSON.parse(raw || '{}') as { servers?: unknown };
      } catch {}
      emulator.reset({ servers: body.servers === true });
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'unknown control path' });
  }

  function summary(): Record<string, unknown> {
    return {
      url: ctx.panelUrl,
      wingsUrl: ctx.wingsUrl,
      users: [...state.users.values()],
      servers: [...state.servers.values()].map((s) => ({
        ...s,
        power: state.runtimeOf(s.id).state,
        console: state.runtimeOf(s.id).console.slice(-20),
        files: [...(state.files.get(s.id)?.keys() ?? [])].filter((p) => p !== '').sort(),
      })),
      backups: [...state.backups.values()].map(({ archive: _archive, ...rest }) => rest),
      databases: [...state.databases.values()].map(({ password: _password, ...rest }) => rest),
      schedules: [...state.schedules.values()],
      subusers: [...state.subusers.values()],
      activity: state.activity.slice(-50),
      calls: Object.fromEntries(calls),
      faults,
    };
  }

  function applyFaults(change: Partial<PteroFaultKnobs>, keep?: Socket): void {
    Object.assign(faults, change);
    if (change.down) for (const socket of panelSockets) if (socket !== keep) socket.resetAndDestroy();
    if (change.wingsDown) {
      wings.console.drop();
      for (const socket of wings.sockets) socket.resetAndDestroy();
    }
  }

  const panel = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://panel');
    const isControl = url.pathname.startsWith('/__emulator/');
    if (!isControl) {
      const key = `${req.method ?? 'GET'} ${url.pathname}`;
      received.set(key, (received.get(key) ?? 0) + 1);
    }
    const work = isControl ? control(req, res, url.pathname) : handlePanel(ctx, req, res, url, count);
    work.catch((error: unknown) => {
      console.error('pterodactyl emulator: request failed', error);
      if (!res.headersSent) cut(req);
    });
  });
  panel.on('connection', (socket: Socket) => {
    panelSockets.add(socket);
    socket.on('close', () => panelSockets.delete(socket));
  });
  const wings = createWings(ctx, options.statsIntervalMs ?? 1000, count);
  const port = await listen(panel, options.port ?? 0);
  const wingsPort = await listen(wings.http, options.wingsPort ?? 0);
  ctx.panelUrl = `http://127.0.0.1:${port}`;
  ctx.wingsUrl = `http://127.0.0.1:${wingsPort}`;
  if (!loaded) seed(state, appKey, clientKey, ctx.panelUrl);
  else setKeys(state, appKey, clientKey);
  state.save();
  // The panel's scheduler: due schedules are looked at every second (cron has minute resolution).
  const scheduler = setInterval(() => runDueSchedules(ctx), 1000);
  scheduler.unref();
  ctx.timers.add(scheduler);

  const emulator: PterodactylEmulator = {
    url: ctx.panelUrl,
    wingsUrl: ctx.wingsUrl,
    appKey,
    clientKey,
    panelNodeId: PANEL_NODE_ID,
    faults,
    calls,
    received,
    state,
    async setFaults(change) {
      applyFaults(parseFaults(change));
    },
    reset({ servers = false } = {}) {
      Object.assign(faults, NO_FAULTS);
      calls.clear();
      received.clear();
      if (!servers) return;
      for (const id of [...state.servers.keys()]) state.deleteServer(id);
      for (const id of [...state.users.keys()]) if (id !== 1) state.users.delete(id);
      for (const [k, key] of state.keys) if (key.userId !== 1) state.keys.delete(k);
      state.backups.clear();
      state.activity.length = 0;
      state.save();
    },
    async stop() {
      state.frozen = true;
      for (const timer of ctx.timers) {
        clearTimeout(timer);
        clearInterval(timer);
      }
      ctx.timers.clear();
      wings.console.close();
      for (const socket of panelSockets) socket.destroy();
      for (const socket of wings.sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => panel.close(() => resolve())),
        new Promise<void>((resolve) => wings.http.close(() => resolve())),
      ]);
    },
  };
  return emulator;
}
