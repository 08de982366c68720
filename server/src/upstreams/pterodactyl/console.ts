// A game server's console: Wings' websocket (upstreams.md §1.8), dialed with the panel's
// origin in the Origin header (Wings checks it) and the panel's TLS settings. The driver does
// the handshake: it sends `auth` with the ticket's JWT and calls `ready` on the first `auth
// success`; `jwt error` before that is a refusal. When Wings says the token is expiring (or
// expired), fresh credentials are fetched from the panel and `auth` is sent again on the same
// socket. None of these frames reach the caller; every other frame goes to `events.output`.
// Before `auth success`, `jwt error`, `daemon error` or silence for AUTH_TIMEOUT_MS is `refused`.

import WebSocket from 'ws';
import type { ConsoleDialOptions, ConsoleEvents } from '../driver.ts';
import type { GameConsoleCredentials, GameConsoleTicket, GameServerRef } from '../game-panel.ts';
import { UpstreamError } from '../hypervisor.ts';
import type { PterodactylClient } from './client.ts';

/** How long Wings may take to accept the websocket upgrade. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** How long Wings may take to answer `auth` once the socket is open; silence is a refusal. */
const AUTH_TIMEOUT_MS = 15_000;

/** Frames that belong to the handshake and token renewal: never passed on. */
const AUTH_EVENTS = new Set(['auth success', 'token expiring', 'token expired', 'jwt error']);
/**
 * Before `auth success`, the only thing sent is `auth`: an error then is its answer. Wings calls
 * a malformed or wrongly signed JWT a `daemon error` (only expiry, permission and server
 * mismatches are `jwt error`), so both are a refusal.
 */
const REFUSALS = new Set(['jwt error', 'daemon error']);

/** The `event` of a Wings frame, or null when it is not one (then it is passed on as it is). */
function eventOf(data: WebSocket.RawData): string | null {
  try {
    const frame: unknown = JSON.parse(data.toString());
    if (typeof frame === 'object' && frame !== null && typeof (frame as { event?: unknown }).event === 'string') {
      return (frame as { event: string }).event;
    }
  } catch {
    // Not JSON: not ours to read.
  }
  return null;
}

export function openPterodactylConsole(
  client: PterodactylClient,
  ticket: GameConsoleTicket,
  events: ConsoleEvents,
  options: ConsoleDialOptions,
  fresh: (ref: GameServerRef) => Promise<GameConsoleCredentials>,
): WebSocket {
  client.check();
  if (!/^wss?:\/\//.test(ticket.socket)) {
    throw new UpstreamError('protocol', `${client.label}: the console socket is not a ws(s) URL`, { retryable: false });
  }
  const tls = client.config.tls;
  const up = new WebSocket(ticket.socket, {
    headers: { origin: client.config.origin },
    rejectUnauthorized: tls?.insecure !== true,
    ...(tls?.ca ? { ca: tls.ca } : {}),
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    maxPayload: options.maxPayload,
    perMessageDeflate: false,
  });
  const auth = (token: string) => {
    if (up.readyState === WebSocket.OPEN) up.send(JSON.stringify({ event: 'auth', args: [token] }));
  };
  let ready = false;
  let renewing = false;
  /** Fetch a new JWT and authenticate again; when the old one has expired already, failing ends the session. */
  const renew = (expired: boolean) => {
    if (renewing) return;
    renewing = true;
    fresh(ticket.server)
      .then((credentials) => auth(credentials.token))
      .catch(() => {
        // Still expiring: Wings warns again before it expires. Expired: nothing more will flow.
        if (expired && up.readyState === WebSocket.OPEN) up.close(1011, 'console credentials expired');
      })
      .finally(() => {
        renewing = false;
      });
  };

  let refused = false;
  let silence: NodeJS.Timeout | undefined;
  const refuse = () => {
    clearTimeout(silence);
    if (ready || refused) return;
    refused = true;
    events.refused();
  };
  up.on('open', () => {
    auth(ticket.token);
    silence = setTimeout(refuse, AUTH_TIMEOUT_MS);
  });
  up.on('close', () => clearTimeout(silence));
  up.on('message', (data, binary) => {
    if (refused) return;
    const event = binary ? null : eventOf(data);
    if (!ready && event !== null && REFUSALS.has(event)) return refuse();
    if (event === null || !AUTH_EVENTS.has(event)) return events.output(data, binary);
    if (event === 'auth success') {
      if (!ready) {
        clearTimeout(silence);
        ready = true;
        events.ready();
      }
    } else if (event === 'token expiring' || event === 'token expired') {
      renew(event === 'token expired');
    }
    // A `jwt error` once running (a push while the token had expired, before the renewal) is dropped.
  });
  return up;
}

/** The Wings events a client of the relay may send; `auth` and anything else are the driver's alone. */
const CLIENT_EVENTS = new Set(['send command', 'set state', 'send logs', 'send stats']);

/** Whether a client frame may go on to Wings: a JSON `{event, args}` of CLIENT_EVENTS, as text. */
export function acceptClientFrame(data: WebSocket.RawData, binary: boolean): boolean {
  if (binary) return false;
  try {
    const frame = JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : String(data)) as { event?: unknown };
    return typeof frame.event === 'string' && CLIENT_EVENTS.has(frame.event);
  } catch {
    return false;
  }
}
