// Wings' console WebSocket, `/api/servers/{uuid}/ws` (upstreams.md §1.8): the Origin must be the
// panel URL (else 403 before the upgrade); frames `{event, args}`; `auth` with the panel's JWT
// (auth success, then status and, when offline, stats); `set state`, `send command`, `send logs`,
// `send stats`; pushes of console output, status, stats (every statsIntervalMs while not
// offline), install and backup events. Like Wings, every push first checks the token: once it
// has expired the socket only gets `jwt error` frames until a fresh `auth`. The expiry check runs
// every tokenCheckMs: `token expiring` at <= 60 s left, `token expired` in the second it expires.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Ctx, Listener } from './context.ts';
import { command, logPower, type PowerSignal, power, stats } from './game.ts';
import { type Claims, verifyJwt } from './jwt.ts';
import type { Server } from './state.ts';

const JWT_ERRORS = new Set([
  'jwt: no jwt present',
  'jwt: missing connect permission',
  'jwt: server uuid mismatch',
  'jwt: created too far in past (denylist)',
  'jwt: exp claim is invalid',
]);

function hasPermission(claims: Claims, permission: string): boolean {
  for (const p of claims.permissions ?? []) {
    if (p === permission || (!permission.startsWith('admin') && p === '*')) return true;
  }
  return false;
}

/** Why the token may not be used now (Wings' TokenValid), or null. */
function tokenProblem(claims: Claims | null, server: Server): string | null {
  if (!claims) return 'jwt: no jwt present';
  if (Math.floor(Date.now() / 1000) > claims.exp) return 'jwt: exp claim is invalid';
  if (!hasPermission(claims, 'websocket.connect')) return 'jwt: missing connect permission';
  if (claims.server_uuid !== server.uuid) return 'jwt: server uuid mismatch';
  return null;
}

function refuse(socket: Duplex, status: string, body: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export interface ConsoleEndpoint {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Drop every open console socket (Wings went away); new ones are still accepted. */
  drop(): void;
  /** Drop every socket and stop accepting (the emulator stops). */
  close(): void;
}

export function consoleEndpoint(ctx: Ctx, statsIntervalMs: number): ConsoleEndpoint {
  const wss = new WebSocketServer({ noServer: true });
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://wings');
    const match = /^\/api\/servers\/([^/]+)\/ws$/.exec(url.pathname);
    if (!match) return refuse(socket, '404 Not Found', '404 page not found');
    const server = [...ctx.state.servers.values()].find((s) => s.uuid === match[1]);
    if (!server) {
      const body = JSON.stringify({ error: 'The requested resource does not exist on this instance.' });
      return socket.end(
        `HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    if (req.headers.origin !== ctx.panelUrl) return refuse(socket, '403 Forbidden', 'Forbidden\n');
    wss.handleUpgrade(req, socket, head, (ws) => serve(ctx, server, ws, statsIntervalMs));
  };
  return {
    upgrade,
    drop() {
      for (const ws of wss.clients) ws.terminate();
    },
    close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}

function serve(ctx: Ctx, server: Server, ws: WebSocket, statsIntervalMs: number): void {
  let claims: Claims | null = null;
  const timers: NodeJS.Timeout[] = [];
  let registered = false;

  const raw = (event: string, args?: string[]) => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify(args === undefined ? { event } : { event, args }));
  };
  /** Wings' SendJson: the token is checked before anything is sent. */
  const send = (event: string, args?: string[]) => {
    const problem = tokenProblem(claims, server);
    if (problem) return raw('jwt error', [problem]);
    if (event === 'install output' && !(claims && hasPermission(claims, 'admin.websocket.install'))) return;
    if (event.startsWith('backup completed') && !(claims && hasPermission(claims, 'backup.read'))) return;
    raw(event, args);
  };
  const errorMessage = (message: string) => `Error Event [${randomUUID()}]: ${message}`;
  const sendError = (error: string) => {
    if (JWT_ERRORS.has(error)) return raw('jwt error', [errorMessage(error)]);
    const shown =
      claims && hasPermission(claims, 'admin.websocket.errors')
        ? error
        : 'an unexpected error was encountered while handling this request';
    raw('daemon error', [errorMessage(shown)]);
  };
  const statsJson = () => JSON.stringify(stats(ctx, server));

  const listener: Listener = (event, args) => {
    if (event === 'deleted') {
      ws.close(1001, 'server deleted');
      return;
    }
    send(event, args);
  };

  const register = () => {
    if (registered) return;
    registered = true;
    let set = ctx.listeners.get(server.uuid);
    if (!set) {
      set = new Set();
      ctx.listeners.set(server.uuid, set);
    }
    set.add(listener);
    timers.push(
      setInterval(() => {
        if (ctx.state.runtimeOf(server.id).state !== 'offline') send('stats', [statsJson()]);
      }, statsIntervalMs),
      setInterval(() => {
        if (!claims) return;
        const left = claims.exp - Math.floor(Date.now() / 1000);
        if (left <= 0) send('token expired');
        else if (left <= 60) send('token expiring');
      }, ctx.delays.tokenCheckMs),
    );
  };

  const onMessage = (text: string) => {
    let frame: { event?: unknown; args?: unknown };
    try {
      frame = JSON.parse(text) as { event?: unknown; args?: unknown };
    } catch {
      return;
    }
    if (typeof frame !== 'object' || frame === null) return;
    const event = typeof frame.event === 'string' ? frame.event : '';
    const args = Array.isArray(frame.args) ? frame.args.map(String) : [];
    const joined = args.join('');
    const current = ctx.state.servers.get(server.id);
    if (!current) return;
    if (event !== 'auth') {
      const problem = tokenProblem(claims, server);
      if (problem) return raw('jwt error', [problem]);
    }
    switch (event) {
      case 'auth': {
        const node = ctx.state.nodes.get(current.nodeId);
        const check = verifyJwt(node?.daemonToken ?? '', joined);
        if (!check.ok) return sendError(check.error);
        if (!hasPermission(check.claims, 'websocket.connect')) return sendError('jwt: missing connect permission');
        const first = claims === null;
        claims = check.claims;
        raw('auth success');
        if (!first) return;
        register();
        const state = ctx.state.runtimeOf(current.id).state;
        send('status', [state]);
        if (state === 'offline' && current.status !== 'installing') send('stats', [statsJson()]);
        return;
      }
      case 'set state': {
        const signal = joined as PowerSignal;
        const needed: Record<PowerSignal, string> = {
          start: 'control.start',
          stop: 'control.stop',
          restart: 'control.restart',
          kill: 'control.stop',
        };
        if (!(signal in needed)) return sendError('attempting to handle unknown power action');
        if (claims && !hasPermission(claims, needed[signal])) return;
        if (current.status === 'suspended' && (signal === 'start' || signal === 'restart')) {
          return sendError('cannot start server instance: instance is suspended');
        }
        const result = power(ctx, current, signal);
        if (result === 'locked') {
          return send('daemon error', [
            errorMessage('another power action is currently being processed for this server, please try again later'),
          ]);
        }
        if (result === 'ok' && claims?.user_id !== undefined) logPower(ctx, current, signal, claims.user_id);
        return;
      }
      case 'send command': {
        if (claims && !hasPermission(claims, 'control.console')) return;
        if (ctx.state.runtimeOf(current.id).state === 'offline') return;
        command(ctx, current, joined);
        return;
      }
      case 'send logs': {
        if (ctx.state.runtimeOf(current.id).state === 'offline') return;
        for (const line of ctx.state.runtimeOf(current.id).console) send('console output', [line]);
        return;
      }
      case 'send stats':
        send('stats', [statsJson()]);
        return;
      default:
        return;
    }
  };

  ws.on('message', (data) => onMessage(data.toString()));
  ws.on('close', () => {
    for (const t of timers) clearInterval(t);
    ctx.listeners.get(server.uuid)?.delete(listener);
  });
}
