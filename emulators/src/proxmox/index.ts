// A Proxmox VE node on loopback that speaks the real HTTP API (/api2/json, API-token auth,
// {data} envelope, reason-phrase errors, UPID tasks), for the demo and the tests. Fault knobs
// make it slow, dead, hanging, failing, or lose answers after doing the work; /__emulator/*
// sets them over HTTP and shows the node's state and per-route call counters.

import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handle } from './api.ts';
import { type ConsoleKnobs, consoleKnobs, consoleUpgrade } from './console.ts';
import { type FaultKnobs, NO_FAULTS, parseFaults, takeError, takeLoss } from './faults.ts';
import { apiPath, authFailure, parseParams, readBody, routeKey, send, sendError } from './http.ts';
import { NodeState } from './state.ts';
import { type ApiContext, PveError } from './tasks.ts';

export type { FaultKnobs } from './faults.ts';

export interface ProxmoxEmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  node?: string;
  /** `USER@REALM!TOKENID`. */
  tokenId?: string;
  /** The token secret (a UUID on real nodes); random when not given. */
  tokenSecret?: string;
  templates?: { vmid: number; name: string }[];
  /** How long a task stays `running`, in ms. */
  taskDelayMs?: number;
  /** JSON file that keeps VMs and tasks across restarts, written after every change. */
  stateFile?: string | null;
  /** Serve HTTPS with this key and certificate (PEM), as a real node does; plain HTTP without. */
  tls?: { key: string; cert: string };
  /**
   * The directory of the `local` storage (/var/lib/vz on a real node); cloud-init snippets are
   * read from its `snippets/` subdirectory (./cloudinit.ts). Default: a fresh temporary one,
   * removed when the emulator stops.
   */
  storageDir?: string;
}

export interface ProxmoxEmulator {
  url: string;
  port: number;
  node: string;
  tokenId: string;
  tokenSecret: string;
  /** The live knobs; change them with setFaults (or directly). */
  faults: FaultKnobs;
  state: NodeState;
  /** The `local` storage's directory: snippets are written to its `snippets/` by whoever shares it. */
  storageDir: string;
  /** API calls received, by `METHOD /path` with ids replaced by `:` (e.g. `POST /nodes/:/qemu/:/clone`). */
  calls: Map<string, number>;
  /** Console test knobs: hold upgrades, flood VNC consoles (console.ts). */
  console: ConsoleKnobs;
  setFaults(faults: Partial<FaultKnobs>): Promise<void>;
  /** Whether `password` is the cloud-init password set on the VM. */
  checkPassword(vmid: number, password: string): boolean;
  /** Clear the knobs and counters; with `vms`, also every VM but the templates, and the tasks. */
  reset(options?: { vms?: boolean }): void;
  stop(): Promise<void>;
}

/** Cut a connection as a dead host does: a TCP reset where possible (TLS sockets are just destroyed). */
function cut(socket: Socket): void {
  if ('encrypted' in socket) socket.destroy();
  else socket.resetAndDestroy();
}

export const DEFAULT_TEMPLATES = [
  { vmid: 9000, name: 'ubuntu-24.04-cloud' },
  { vmid: 9001, name: 'debian-12-cloud' },
  { vmid: 9002, name: 'rocky-9-cloud' },
  { vmid: 9003, name: 'ubuntu-22.04-cloud' },
  { vmid: 9004, name: 'almalinux-9-cloud' },
];

export async function startProxmoxEmulator(options: ProxmoxEmulatorOptions = {}): Promise<ProxmoxEmulator> {
  const node = options.node ?? 'pve';
  const tokenId = options.tokenId ?? 'hostplane@pve!provision';
  const tokenSecret = options.tokenSecret ?? randomUUID();
  const templates = options.templates ?? DEFAULT_TEMPLATES;
  const ownDir = options.storageDir === undefined;
  const storageDir = options.storageDir ?? mkdtempSync(join(tmpdir(), 'pve-local-'));
  mkdirSync(join(storageDir, 'snippets'), { recursive: true, mode: 0o700 });
  const state = new NodeState(options.stateFile ?? null);
  state.load();
  for (const t of templates) state.addTemplate(t.vmid, t.name);
  state.save();
  const faults: FaultKnobs = { ...NO_FAULTS };
  const calls = new Map<string, number>();
  const sockets = new Set<Socket>();
  const ctx: ApiContext = {
    state,
    node,
    user: tokenId,
    taskDelayMs: options.taskDelayMs ?? 300,
    storageDir,
    faults,
    timers: new Set(),
    changed: () => state.save(),
  };

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    // A dead node: the connection is cut, nothing is done, nothing is answered.
    if (faults.down) return void cut(req.socket);
    const raw = await readBody(req);
    if (faults.hang) return; // the socket stays open and silent
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    const path = apiPath(url.pathname);
    if (path === null) return send(res, 404, 'Not Found', { data: null });
    const key = routeKey(method, path);
    calls.set(key, (calls.get(key) ?? 0) + 1);
    const denied = authFailure(req.headers.authorization, tokenId, tokenSecret);
    if (denied) return sendError(res, denied);
    if (raw === null) return sendError(res, new PveError(413, 'request entity too large'));
    if (takeError(faults)) return sendError(res, new PveError(500, 'internal error'));
    let answer: () => void;
    try {
      const data = handle(ctx, method, path, parseParams(req, url, raw));
      answer = () => send(res, 200, 'OK', { data });
    } catch (error) {
      if (!(error instanceof PveError)) console.error('proxmox emulator: handler failed', error);
      const failure = error instanceof PveError ? error : new PveError(500, (error as Error).message);
      answer = () => sendError(res, failure);
    }
    // The work is done; the answer never arrives.
    if (takeLoss(faults, key)) return void req.socket.destroy();
    answer();
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const raw = (await readBody(req)) ?? '';
    if (path === '/__emulator/faults' && req.method === 'POST') {
      try {
        applyFaults(parseFaults(JSON.parse(raw || '{}')), req.socket);
      } catch (error) {
        return send(res, 400, 'Bad Request', { error: (error as Error).message });
      }
      return send(res, 200, 'OK', { faults });
    }
    if (path === '/__emulator/faults') return send(res, 200, 'OK', { faults });
    if (path === '/__emulator/state') {
      return send(res, 200, 'OK', {
        node,
        vms: [...state.vms.values()],
        tasks: {
          total: state.tasks.size,
          running: [...state.tasks.values()].filter((t) => t.status === 'running').length,
        },
        calls: Object.fromEntries(calls),
        faults,
      });
    }
    if (path === '/__emulator/reset' && req.method === 'POST') {
      let body: { vms?: unknown } = {};
      try {
        body = JSON.parse(raw || '{}') as { vms?: unknown };
      } catch {}
      emulator.reset({ vms: body.vms === true });
      return send(res, 200, 'OK', { ok: true });
    }
    send(res, 404, 'Not Found', { error: 'unknown control path' });
  }

  /** Set knobs; a node going down also cuts the connections kept alive from before (but not `keep`). */
  function applyFaults(change: Partial<FaultKnobs>, keep?: Socket): void {
    Object.assign(faults, change);
    if (change.down) for (const socket of sockets) if (socket !== keep) cut(socket);
  }

  const listener: RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const work = url.pathname.startsWith('/__emulator/') ? control(req, res, url.pathname) : api(req, res, url);
    work.catch((error: unknown) => {
      console.error('proxmox emulator: request failed', error);
      if (!res.headersSent) sendError(res, new PveError(500, 'internal error'));
    });
  };
  const server = options.tls ? createTlsServer(options.tls, listener) : createServer(listener);
  const knobs = consoleKnobs();
  server.on(
    'upgrade',
    consoleUpgrade(state, (req) => !authFailure(req.headers.authorization, tokenId, tokenSecret), knobs),
  );
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const emulator: ProxmoxEmulator = {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    node,
    tokenId,
    tokenSecret,
    faults,
    state,
    storageDir,
    calls,
    console: knobs,
    async setFaults(change) {
      applyFaults(parseFaults(change));
    },
    checkPassword: (vmid, password) => state.vms.get(vmid)?.config.cipassword === password,
    reset({ vms = false } = {}) {
      Object.assign(faults, NO_FAULTS);
      Object.assign(knobs, consoleKnobs());
      calls.clear();
      if (!vms) return;
      for (const vm of [...state.vms.values()]) if (!vm.template) state.vms.delete(vm.vmid);
      state.tasks.clear();
      state.consoles.clear();
      state.save();
    },
    async stop() {
      state.frozen = true;
      for (const timer of ctx.timers) clearTimeout(timer);
      ctx.timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (ownDir) rmSync(storageDir, { recursive: true, force: true });
    },
  };
  return emulator;
}
