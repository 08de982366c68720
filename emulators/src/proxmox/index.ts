// A Proxmox VE node on loopback, speaking the real HTTP API (/api2/json, API-token auth,
// {data} envelope, reason-phrase errors, UPID tasks), for the demo and the tests. Fault knobs
// make it slow, down, hanging, failing, or lose responses after doing the work.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ApiContext, handle, PveError } from './api.ts';
import { consoleUpgrade } from './console.ts';
import { NodeState } from './state.ts';

export interface ProxmoxEmulatorOptions {
  port?: number;
  node?: string;
  /** `USER@REALM!TOKENID`. */
  tokenId?: string;
  /** The token secret (a UUID on real nodes). */
  tokenSecret?: string;
  templates?: { vmid: number; name: string }[];
  /** How long a task stays `running`. */
  taskDelayMs?: number;
  /** JSON file to keep VMs in across restarts. */
  stateFile?: string | null;
}

export interface FaultKnobs {
  /** Delay before every API answer. */
  latencyMs: number;
  /** Refuse connections, as a dead node does. */
  down: boolean;
  /** Accept requests and never answer them. */
  hang: boolean;
  /** Fraction (0–1) of API calls answered `500 internal error` without doing anything. */
  errorRate: number;
  /** The next N API calls do their work, then the connection is cut before the answer. */
  loseResponses: number;
  /** The next call of this route (e.g. `POST /nodes/:/qemu/:/clone`) does its work and loses its answer. */
  loseNext: string | null;
  /** The next N tasks end with an error exit status. */
  failTasks: number;
}

export interface ProxmoxEmulator {
  url: string;
  port: number;
  node: string;
  tokenId: string;
  tokenSecret: string;
  faults: FaultKnobs;
  state: NodeState;
  /** API calls received, by `METHOD /path` with ids replaced by `:`. */
  calls: Map<string, number>;
  setFaults(faults: Partial<FaultKnobs>): Promise<void>;
  stop(): Promise<void>;
}

export const DEFAULT_TEMPLATES = [
  { vmid: 9000, name: 'ubuntu-24.04-cloud' },
  { vmid: 9001, name: 'debian-12-cloud' },
  { vmid: 9002, name: 'rocky-9-cloud' },
  { vmid: 9003, name: 'ubuntu-22.04-cloud' },
  { vmid: 9004, name: 'almalinux-9-cloud' },
];

const NO_FAULTS: FaultKnobs = {
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  failTasks: 0,
};

function parseBody(req: IncomingMessage, raw: string): Record<string, string> {
  const type = req.headers['content-type'] ?? '';
  if (raw === '') return {};
  if (type.startsWith('application/json')) {
    const value = JSON.parse(raw) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        typeof v === 'string' ? v : typeof v === 'boolean' ? (v ? '1' : '0') : String(v),
      ]),
    );
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function routeKey(method: string, path: string): string {
  return `${method} ${path
    .replace(/\/nodes\/[^/]+/, '/nodes/:')
    .replace(/\/qemu\/\d+/, '/qemu/:')
    .replace(/\/tasks\/[^/]+/, '/tasks/:')}`;
}

export async function startProxmoxEmulator(options: ProxmoxEmulatorOptions = {}): Promise<ProxmoxEmulator> {
  const node = options.node ?? 'pve';
  const tokenId = options.tokenId ?? 'hostplane@pve!provision';
  const tokenSecret = options.tokenSecret ?? randomUUID();
  const state = new NodeState(options.stateFile ?? null);
  state.load();
  for (const t of options.templates ?? DEFAULT_TEMPLATES) state.addTemplate(t.vmid, t.name);
  state.save();
  const faults: FaultKnobs = { ...NO_FAULTS };
  const calls = new Map<string, number>();
  const sockets = new Set<Socket>();
  const ctx: ApiContext = {
    state,
    node,
    user: tokenId,
    taskDelayMs: options.taskDelayMs ?? 300,
    takeTaskFailure() {
      if (faults.failTasks <= 0) return false;
      faults.failTasks--;
      return true;
    },
    changed: () => state.save(),
  };

  const send = (res: ServerResponse, status: number, reason: string, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, reason.replace(/[\r\n]/g, ' '), {
      'content-type': 'application/json;charset=UTF-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void respond(req, res, Buffer.concat(chunks).toString('utf8')));
  });

  async function respond(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/__emulator/')) return control(req, res, url.pathname, raw);
    if (faults.hang) return; // the socket stays open and silent
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (!url.pathname.startsWith('/api2/json/')) return send(res, 404, 'Not Found', { data: null });
    const path = url.pathname.slice('/api2/json'.length);
    const key = routeKey(method, path);
    calls.set(key, (calls.get(key) ?? 0) + 1);
    const auth = req.headers.authorization;
    if (!auth) return send(res, 401, 'No ticket', { data: null, message: 'No ticket\n' });
    const match = /^PVEAPIToken[= ]([^=]+)=(.+)$/.exec(auth);
    if (!match || match[1] !== tokenId || match[2] !== tokenSecret) {
      return send(res, 401, 'Authentication failed!', { data: null, message: 'Authentication failed!\n' });
    }
    if (faults.errorRate > 0 && Math.random() < faults.errorRate)
      return send(res, 500, 'internal error', { data: null, message: 'internal error\n' });
    let params: Record<string, string>;
    try {
      params = { ...Object.fromEntries(url.searchParams), ...parseBody(req, raw) };
    } catch {
      return send(res, 400, 'Parameter verification failed.', {
        data: null,
        message: 'Parameter verification failed.\n',
      });
    }
    let status = 200;
    let reason = 'OK';
    let body: Record<string, unknown>;
    try {
      body = { data: handle(ctx, method, path, params) };
    } catch (error) {
      if (!(error instanceof PveError)) throw error;
      status = error.status;
      reason = error.message;
      body = { data: null, message: `${error.message}\n`, ...(error.errors ? { errors: error.errors } : {}) };
    }
    if (faults.loseResponses > 0 || faults.loseNext === key) {
      if (faults.loseNext === key) faults.loseNext = null;
      else faults.loseResponses--;
      req.socket.destroy();
      return;
    }
    send(res, status, reason, body);
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string, raw: string): Promise<void> {
    if (path === '/__emulator/faults' && req.method === 'POST') {
      await emulator.setFaults(JSON.parse(raw || '{}') as Partial<FaultKnobs>);
      return send(res, 200, 'OK', { faults });
    }
    if (path === '/__emulator/state') {
      return send(res, 200, 'OK', { vms: [...state.vms.values()], calls: Object.fromEntries(calls), faults });
    }
    if (path === '/__emulator/reset' && req.method === 'POST') {
      Object.assign(faults, NO_FAULTS);
      calls.clear();
      return send(res, 200, 'OK', { ok: true });
    }
    send(res, 404, 'Not Found', {});
  }

  const authOk = (req: IncomingMessage) => {
    const match = /^PVEAPIToken[= ]([^=]+)=(.+)$/.exec(req.headers.authorization ?? '');
    return match !== null && match[1] === tokenId && match[2] === tokenSecret;
  };
  server.on('upgrade', consoleUpgrade(state, authOk));

  server.on('connection', (socket: Socket) => {
    if (faults.down) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let listening = true;

  const emulator: ProxmoxEmulator = {
    url: `http://127.0.0.1:${port}`,
    port,
    node,
    tokenId,
    tokenSecret,
    faults,
    state,
    calls,
    async setFaults(change) {
      Object.assign(faults, change);
      // A node that is down refuses connections: stop listening (and cut open keep-alive
      // sockets) so clients see ECONNREFUSED; listen again on the same port when it is back.
      if (faults.down && listening) {
        listening = false;
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } else if (!faults.down && !listening) {
        await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
        listening = true;
      }
    },
    async stop() {
      for (const socket of sockets) socket.destroy();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      listening = false;
    },
  };
  return emulator;
}
