// PowerDNS Authoritative's HTTP API on loopback, for the demo and the tests: the server object,
// zones and their rrsets under /api/v1 (./api.ts), behind `X-API-Key` (a missing or wrong key is
// 401 {"error": "Unauthorized"}, as the real webserver answers). The reverse zones the platform
// writes PTR records into are created at start (`zones`). Fault knobs: `down` (connections reset)
// and `failNext` (the next N API calls answer 500). `/__emulator/state|faults` need no key.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ApiCtx, route } from './api.ts';
import { PdnsError, readText, sendError, sendJson, sendNoContent } from './http.ts';
import { absolute, PdnsState, type Zone } from './state.ts';

export type { PdnsRecord, RRset, Zone } from './state.ts';

export interface PowerDnsEmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The api-key (default random). */
  apiKey?: string;
  /** Zones to hold from the start (names, absolute or not). */
  zones?: string[];
  /** Where the zones are kept across restarts (default: memory only). */
  stateFile?: string | null;
  /** The version the server object reports (default 4.9.4). */
  version?: string;
}

export interface PowerDnsFaults {
  /** Reset every connection. */
  down: boolean;
  /** Answer the next N API calls with 500. */
  failNext: number;
}

export interface PowerDnsEmulator {
  url: string;
  port: number;
  apiKey: string;
  serverId: 'localhost';
  state: PdnsState;
  faults: PowerDnsFaults;
  /** API calls as `METHOD /path`, in order (no control paths). */
  calls: string[];
  /** The zone, or undefined. */
  zone(name: string): Zone | undefined;
  /** The PTR target of an owner name (absolute), or null. */
  ptr(owner: string): string | null;
  addZone(name: string): Zone;
  removeZone(name: string): boolean;
  setFaults(change: Partial<PowerDnsFaults>): void;
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startPowerDnsEmulator(options: PowerDnsEmulatorOptions = {}): Promise<PowerDnsEmulator> {
  const apiKey = options.apiKey ?? randomBytes(18).toString('base64url');
  const state = new PdnsState(options.stateFile ?? null);
  for (const zone of options.zones ?? []) state.addZone(zone);
  const ctx: ApiCtx = { state, serverId: 'localhost', version: options.version ?? '4.9.4' };
  const faults: PowerDnsFaults = { down: false, failNext: 0 };
  const calls: string[] = [];
  const sockets = new Set<Socket>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://pdns');
    const method = req.method ?? 'GET';
    if (url.pathname === '/__emulator/state') {
      return sendJson(res, 200, { zones: [...state.zones.values()], faults, calls });
    }
    if (url.pathname === '/__emulator/faults' && method === 'POST') {
      emulator.setFaults(JSON.parse((await readText(req)) || '{}') as Partial<PowerDnsFaults>);
      return sendJson(res, 200, { faults });
    }
    calls.push(`${method} ${url.pathname}`);
    if (faults.down) return void req.socket.resetAndDestroy();
    const text = await readText(req);
    if (faults.failNext > 0) {
      faults.failNext -= 1;
      return sendError(res, new PdnsError(500, 'Internal Server Error'));
    }
    if (!url.pathname.startsWith('/api')) return sendError(res, new PdnsError(404, 'Not Found'));
    if (req.headers['x-api-key'] !== apiKey) return sendError(res, new PdnsError(401, 'Unauthorized'));
    const answer = route(ctx, method, url.pathname, url.searchParams, text);
    if (answer.status === 204) return sendNoContent(res);
    sendJson(res, answer.status, answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof PdnsError) return sendError(res, error);
      console.error('powerdns emulator: request failed', error);
      sendError(res, new PdnsError(500, 'Internal Server Error'));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let stopped: Promise<void> | null = null;

  const emulator: PowerDnsEmulator = {
    url: `http://127.0.0.1:${port}`,
    port,
    apiKey,
    serverId: 'localhost',
    state,
    faults,
    calls,
    zone: (name) => state.zones.get(absolute(name)),
    ptr(owner) {
      const name = absolute(owner);
      for (const zone of state.zones.values()) {
        const rrset = zone.rrsets.find((r) => r.name === name && r.type === 'PTR');
        if (rrset) return rrset.records[0]?.content ?? null;
      }
      return null;
    },
    addZone: (name) => state.addZone(name),
    removeZone: (name) => state.removeZone(name),
    setFaults(change) {
      if (change.down !== undefined) faults.down = change.down === true;
      if (change.failNext !== undefined) faults.failNext = Math.max(0, Math.floor(Number(change.failNext) || 0));
      if (faults.down) for (const socket of sockets) socket.resetAndDestroy();
    },
    stop() {
      stopped ??= (async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return stopped;
    },
    close: () => emulator.stop(),
  };
  return emulator;
}
