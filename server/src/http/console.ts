// The console WebSocket, /ws/console/?t=<ticket>: redeems a one-time ticket (from the token
// surface's vnc/console actions), dials the node's console with the node's credentials, and
// relays bytes both ways. The browser never learns the node's address or credentials.
//
// The ticket is redeemed before the upgrade (preValidation runs on the upgrade request), so an
// unknown, used or expired one is an HTTP 401 in the token envelope, not a 101 and a close;
// redeemed once there, it is handed to the handler on the request.

import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import type { RedeemedTicket } from '../core/services/consoles.ts';

/** A console session ends after this long, whatever happens on it. */
const MAX_SESSION_MS = 4 * 3600 * 1000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The console ticket this upgrade request redeemed (console route only). */
    consoleTicket: RedeemedTicket | null;
  }
}

export async function consoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  app.decorateRequest('consoleTicket', null);
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
        request.consoleTicket = await deps.consoles.redeem(typeof t === 'string' ? t : '');
      },
    },
    async (client, request) => {
      // Listen before the first await: a client may speak right after the handshake, and a
      // message that arrives with no listener is gone.
      const pending: { data: WebSocket.RawData; binary: boolean }[] = [];
      let forward: ((data: WebSocket.RawData, binary: boolean) => void) | null = null;
      client.on('message', (data, binary) => {
        if (forward) forward(data, binary);
        else pending.push({ data, binary });
      });
      const redeemed = request.consoleTicket as RedeemedTicket;
      let node: Awaited<ReturnType<Deps['nodes']['get']>>;
      try {
        node = await deps.nodes.get(redeemed.nodeId);
      } catch (error) {
        request.log.warn({ err: error, service: redeemed.serviceId }, 'console node not found');
        client.close(1011, 'the node console is unreachable');
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
        if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING)
          upstream.terminate();
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
    },
  );
}
