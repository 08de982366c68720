// A Proxmox VE node's console websocket (…/vncwebsocket, upstreams.md §2.4, §2.7), dialed with
// the node's API token and TLS settings. A serial (termproxy) session first sends
// `<user>:<ticket>\n` and waits for the node's `OK`; a VNC one flows as soon as it opens.

import WebSocket from 'ws';
import type { ConsoleDialOptions, ConsoleEvents, ConsoleTicket } from '../driver.ts';
import type { ProxmoxConfig } from './config.ts';

/** How long the node may take to accept the websocket upgrade. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

export function openProxmoxConsole(
  config: ProxmoxConfig,
  ticket: ConsoleTicket,
  events: ConsoleEvents,
  options: ConsoleDialOptions,
): WebSocket {
  const target = `${config.endpoint.replace(/^http/, 'ws')}${ticket.websocketPath}`;
  const up = new WebSocket(target, {
    headers: { authorization: `PVEAPIToken=${config.tokenId}=${config.tokenSecret}` },
    rejectUnauthorized: config.tls?.insecure !== true,
    ...(config.tls?.ca ? { ca: config.tls.ca } : {}),
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    maxPayload: options.maxPayload,
    perMessageDeflate: false,
  });
  let serialHandshake = ticket.kind === 'serial';
  up.on('open', () => {
    // termproxy wants the user and the node's ticket first; the client never sees them.
    if (serialHandshake) up.send(`${ticket.user}:${ticket.ticket}\n`);
    else events.ready();
  });
  up.on('message', (data, binary) => {
    if (serialHandshake) {
      serialHandshake = false;
      if (data.toString() !== 'OK') return events.refused();
      events.ready();
      return;
    }
    events.output(data, binary);
  });
  return up;
}
