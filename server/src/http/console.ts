// The console WebSocket, /ws/console/?t=<ticket>: redeems a one-time ticket (from the token
// surface's vnc/console actions), has the node's driver dial the node's console with the node's
// credentials (deps.drivers.openConsole), and relays bytes both ways. The browser never learns
// the node's address or credentials.
//
// The ticket is redeemed before the upgrade (preValidation runs on the upgrade request), so an
// unknown, used or expired one is an HTTP 401 in the token envelope, not a 101 and a close;
// redeemed once there, it is handed to the handler on the request. Redeeming also opens a
// console session row (the per-account and per-node caps, core/services/consoles.ts), released
// here when the socket closes.
//
// Memory (security review F3): what one side sends waits in our process only while the other
// side is slow to take it, so it is bounded. Before the node's console opens, at most
// PENDING_MAX_BYTES of client input are kept. Once open, a side whose queue (`bufferedAmount`)
// passes HIGH_WATER_BYTES stops the other side from being read (ws pause: TCP pushes back to the
// sender) until its queue drains below LOW_WATER_BYTES. Should a queue still pass
// HARD_CAP_BYTES, the session closes with 1009. Frames from the node are at most
// UPSTREAM_MAX_PAYLOAD, from the client 1 MiB.
//
// Access (F10): an `access_revoked` message on the bus (suspension, password change or reset)
// closes every console of that account (1008). A `service` message re-checks that service's
// consoles; `all` (the bus may have missed messages) re-checks every open console rather than
// closing them all: a console is closed when its account is suspended or its service no longer
// active, which is what a missed revocation that still matters leaves behind. (A missed password
// change cannot be seen afterwards; it is the bus's reconnect window, not a standing gap.)

import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { CONSOLE_LEASE_MS, CONSOLE_SESSION_MS, type RedeemedTicket } from '../core/services/consoles.ts';
import { whoOf } from './request-context.ts';

/** A console session ends after this long, whatever happens on it. */
const MAX_SESSION_MS = CONSOLE_SESSION_MS;
/** Client input kept while the node's console is still opening. */
export const PENDING_MAX_BYTES = 1024 * 1024;
/** Above this many queued bytes towards one side, the other side is no longer read... */
export const HIGH_WATER_BYTES = 1024 * 1024;
/** ...until the queue is back below this. */
const LOW_WATER_BYTES = 256 * 1024;
/** A queue this large (should pausing not hold it) closes the session with 1009. */
export const HARD_CAP_BYTES = 8 * 1024 * 1024;
/** The largest frame accepted from the node. */
const UPSTREAM_MAX_PAYLOAD = 4 * 1024 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The console ticket this upgrade request redeemed (console route only). */
    consoleTicket: RedeemedTicket | null;
  }
}

interface Relay {
  sessionId: number;
  accountId: number;
  serviceId: number;
  stop(code?: number, reason?: string): void;
  paused(): boolean;
  queued(): number;
}

/** Every relay of this process (all apps), for the stats below. */
const relays = new Set<Relay>();
let peakQueuedBytes = 0;

/** What the relays of this process hold now, and the most any one queue ever held. */
export function consoleRelayStats(): { open: number; paused: number; queuedBytes: number; peakQueuedBytes: number } {
  let paused = 0;
  let queuedBytes = 0;
  for (const relay of relays) {
    if (relay.paused()) paused++;
    queuedBytes += relay.queued();
  }
  return { open: relays.size, paused, queuedBytes, peakQueuedBytes };
}

const size = (data: WebSocket.RawData): number =>
  Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer | ArrayBuffer).byteLength;

/**
 * Keep the open consoles of this app honest: renew their session rows, and close or re-check
 * them on the bus's access messages (see the top of this file).
 */
function watchConsoles(app: FastifyInstance, deps: Deps, open: Set<Relay>): void {
  const recheck = (which: Relay[]) => {
    if (which.length === 0) return;
    deps.consoles
      .revoked([...new Set(which.map((r) => r.serviceId))])
      .then((gone) => {
        for (const relay of which) if (gone.has(relay.serviceId)) relay.stop(1008, 'console access ended');
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'console access re-check failed'));
  };
  // The open consoles of this process keep their session rows alive; a crashed process's lapse.
  const renewal = setInterval(() => {
    deps.consoles
      .renew([...open].map((r) => r.sessionId))
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'console session renewal failed'));
  }, CONSOLE_LEASE_MS / 3);
  renewal.unref();
  app.addHook('onClose', async () => clearInterval(renewal));
  deps.bus.subscribe((message) => {
    if (message.topic === 'access_revoked') {
      for (const relay of [...open]) if (relay.accountId === message.id) relay.stop(1008, 'access revoked');
    } else if (message.topic === 'service') {
      recheck([...open].filter((r) => r.serviceId === message.id));
    } else if (message.topic === 'all') {
      recheck([...open]);
    }
  });
}

/**
 * Relay one redeemed console: buffer the client's first input, have the node's driver open its
 * console, then pipe both ways with bounded queues until either side closes or time runs out.
 */
async function relayConsole(deps: Deps, open: Set<Relay>, client: WebSocket, request: FastifyRequest): Promise<void> {
  const redeemed = request.consoleTicket as RedeemedTicket;
  // Listen before the first await: a client may speak right after the handshake, and a
  // message that arrives with no listener is gone.
  const pending: { data: WebSocket.RawData; binary: boolean }[] = [];
  let pendingBytes = 0;
  let forward: ((data: WebSocket.RawData, binary: boolean) => void) | null = null;
  let upstream: WebSocket | null = null;
  let stopped = false;
  const stop = (code = 1000, reason = '') => {
    if (stopped) return;
    stopped = true;
    clearTimeout(limit);
    open.delete(relay);
    relays.delete(relay);
    deps.consoles
      .release(redeemed.sessionId)
      .catch((error: unknown) => request.log.warn({ err: error }, 'console session release failed'));
    if (client.readyState === WebSocket.OPEN || client.readyState === WebSocket.CONNECTING) client.close(code, reason);
    if (upstream && (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING))
      upstream.terminate();
  };
  const relay: Relay = {
    sessionId: redeemed.sessionId,
    accountId: redeemed.accountId,
    serviceId: redeemed.serviceId,
    stop,
    paused: () => client.isPaused || upstream?.isPaused === true,
    queued: () => client.bufferedAmount + (upstream?.bufferedAmount ?? 0) + pendingBytes,
  };
  open.add(relay);
  relays.add(relay);
  const limit = setTimeout(() => stop(1000, 'session time limit'), MAX_SESSION_MS);
  client.on('close', () => stop());
  client.on('message', (data, binary) => {
    if (forward) return forward(data, binary);
    pendingBytes += size(data);
    if (pendingBytes > PENDING_MAX_BYTES) return stop(1009, 'too much input before the console opened');
    pending.push({ data, binary });
  });

  /**
   * Send to `sink`, and keep its queue bounded: above the high-water mark `source` is no
   * longer read until the queue drains; past the hard cap the session ends.
   */
  const pipe = (source: WebSocket, sink: WebSocket, data: WebSocket.RawData, binary: boolean) => {
    if (sink.readyState !== WebSocket.OPEN) return;
    sink.send(data, { binary }, () => {
      if (source.isPaused && sink.bufferedAmount <= LOW_WATER_BYTES && !stopped) source.resume();
    });
    const queued = sink.bufferedAmount;
    if (queued > peakQueuedBytes) peakQueuedBytes = queued;
    if (queued > HARD_CAP_BYTES) return stop(1009, 'the console is sending faster than it is read');
    if (queued > HIGH_WATER_BYTES && !source.isPaused) source.pause();
  };

  let node: Awaited<ReturnType<Deps['nodes']['get']>>;
  try {
    node = await deps.nodes.get(redeemed.nodeId);
    // A revocation published between the redeem and `open.add` above would be missed.
    if ((await deps.consoles.revoked([redeemed.serviceId])).size > 0) return stop(1008, 'console access ended');
  } catch (error) {
    request.log.warn({ err: error, service: redeemed.serviceId }, 'console node not found');
    stop(1011, 'the node console is unreachable');
    return;
  }
  if (stopped) return;
  // What the node's protocol lets a client send (a game console: player events, never `auth`).
  const accept = deps.drivers.consoleInput(node, redeemed.upstream);
  const send = (data: WebSocket.RawData, binary: boolean) => {
    if (!accept || accept(data, binary)) pipe(client, up, data, binary);
  };
  const flow = () => {
    pendingBytes = 0;
    for (const m of pending.splice(0)) send(m.data, m.binary);
    forward = send;
  };
  // The node's driver dials its console with the node's credentials and does any handshake.
  const up = deps.drivers.openConsole(
    node,
    redeemed.upstream,
    {
      ready: flow,
      output: (data, binary) => pipe(up, client, data, binary),
      refused: () => stop(1011, 'the node refused the console'),
    },
    { maxPayload: UPSTREAM_MAX_PAYLOAD },
  );
  upstream = up;
  up.on('error', (error) => {
    request.log.warn({ err: error, service: redeemed.serviceId }, 'console upstream failed');
    stop(1011, 'the node console is unreachable');
  });
  up.on('close', () => stop(1000, 'console closed'));
}

export async function consoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  app.decorateRequest('consoleTicket', null);

  const open = new Set<Relay>();
  watchConsoles(app, deps, open);

  app.get(
    '/ws/console/',
    {
      websocket: true,
      schema: { hide: true },
      preValidation: async (request) => {
        // A plain GET (or a HEAD, which cannot be upgraded) must not spend the ticket it carries.
        if (!request.ws || request.method !== 'GET')
          throw new AppError('bad_request', { message: 'Open this URL as a WebSocket.' });
        const { t } = request.query as { t?: unknown };
        request.consoleTicket = await deps.consoles.redeem(typeof t === 'string' ? t : '', whoOf(request));
      },
    },
    (client, request) => relayConsole(deps, open, client, request),
  );
}
