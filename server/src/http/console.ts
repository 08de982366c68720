// The console WebSocket, /ws/console/?t=<ticket>: redeems a one-time ticket (from the token
// surface's vnc/console actions), dials the node's console with the node's credentials, and
// relays bytes both ways. The browser never learns the node's address or credentials.

import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import type { Deps } from '../core/deps.ts';

/** A console session ends after this long, whatever happens on it. */
const MAX_SESSION_MS = 4 * 3600 * 1000;

export async function consoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  app.get('/ws/console/', { websocket: true, schema: { hide: true } }, async (client, request) => {
    // Listen before the first await: a client may speak right after the handshake, and a
    // message that arrives with no listener is gone.
    const pending: { data: WebSocket.RawData; binary: boolean }[] = [];
    let forward: ((data: WebSocket.RawData, binary: boolean) => void) | null = null;
    client.on('message', (data, binary) => {
      if (forward) forward(data, binary);
      else pending.push({ data, binary });
    });
    const ticket = (request.query as { t?: string }).t ?? '';
    let redeemed: Awaited<ReturnType<Deps['consoles']['redeem']>>;
    let node: Awaited<ReturnType<Deps['nodes']['get']>>;
    try {
      redeemed = await deps.consoles.redeem(ticket);
      node = await deps.nodes.get(redeemed.nodeId);
    } catch {
      client.close(4401, 'invalid, used or expired ticket');
      return;
    }
    const credentials = deps.nodes.credentials(node);
    const settings = node.settings as { tls_insecure?: boolean; ca?: string };
    const target = `${node.endpoint.replace(/^http/, 'ws')}${redeemed.upstream.websocketPath}`;
    const upstream = new WebSocket(target, {
      headers: { authorization: `PVEAPIToken=${credentials.token_id}=${credentials.token_secret}` },
      rejectUnauthorized: settings.tls_insecure !== true,
      ...(settings.ca ? { ca: settings.ca } : {}),
      handshakeTimeout: 10_000,
    });
    let serialHandshake = redeemed.upstream.kind === 'serial';
    const stop = (code = 1000, reason = '') => {
      clearTimeout(limit);
      if (client.readyState === WebSocket.OPEN) client.close(code, reason);
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    };
    const limit = setTimeout(() => stop(1000, 'session time limit'), MAX_SESSION_MS);

    const flow = () => {
      for (const m of pending.splice(0)) upstream.send(m.data, { binary: m.binary });
      forward = (data, binary) => upstream.send(data, { binary });
    };
    upstream.on('open', () => {
      // termproxy wants the user and the node's ticket first; the client never sees them.
      if (serialHandshake) upstream.send(`${redeemed.upstream.user}:${redeemed.upstream.ticket}\n`);
      else flow();
    });
    upstream.on('message', (data, binary) => {
      if (serialHandshake) {
        serialHandshake = false;
        if (data.toString() !== 'OK') return stop(1011, 'the node refused the console');
        flow();
        return;
      }
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
    });
    upstream.on('error', (error) => {
      request.log.warn({ err: error, service: redeemed.serviceId }, 'console upstream failed');
      stop(1011, 'the node console is unreachable');
    });
    upstream.on('close', () => stop(1000, 'console closed'));
    client.on('close', () => stop());
  });
}
