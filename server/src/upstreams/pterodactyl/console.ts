// A game server's console: Wings' websocket (upstreams.md §1.8), dialed with the panel's
// origin in the Origin header (Wings checks it) and the panel's TLS settings. The driver does
// the handshake: it sends `auth` with the ticket's JWT and calls `ready` on the first `auth
// success`; `jwt error` before that is a refusal. When Wings says the token is expiring (or
// expired), fresh credentials are fetched from the panel and `auth` is sent again on the same
// socket. None of these frames reach the caller; every other frame goes to `events.output`,
// less what Wings keeps for panel administrators (below). Before `auth success`, `jwt error`,
// `daemon error` or silence for AUTH_TIMEOUT_MS is `refused`.
//
// The JWT is minted for the platform's panel key, a root administrator's, so Wings sends this
// socket what it sends only to administrators (`admin.websocket.*` permissions): the install
// script's output, transfer logs and the detail of every daemon error. A customer's own panel
// account would never see them, so the relay holds them back as Wings would for that account:
// those events are dropped, and a daemon error keeps its reference but says only what Wings says
// to everyone else, except the few texts Wings sends to every user (a busy power lock).

import WebSocket from 'ws';
import type { ConsoleDialOptions, ConsoleEvents, GameConsoleTicket } from '../driver.ts';
import { UpstreamError } from '../errors.ts';
import type { GameConsoleCredentials, GameServerRef } from '../game-panel.ts';
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

/**
 * What Wings sends only to a token with `admin.websocket.install` or `admin.websocket.transfer`:
 * the install script's output (it may print the egg's variables and the image's internals) and
 * a server transfer between nodes.
 */
const ADMIN_EVENTS = new Set(['install output', 'transfer logs', 'transfer status']);
/** What Wings tells a user without `admin.websocket.errors` instead of an error's text. */
const REDACTED_ERROR = 'an unexpected error was encountered while handling this request';
/** Daemon errors Wings sends to every user as they are (not through its redacting error path). */
const PUBLIC_ERRORS = new Set([
  'another power action is currently being processed for this server, please try again later',
  'server is currently in a suspended state',
]);
/** Wings prefixes an error with a reference for its own log: `Error Event [<uuid>]: <text>`. */
const ERROR_REFERENCE = /^(Error Event \[[^\]]*\]: )([\s\S]*)$/;

interface Frame {
  event: string;
  args?: unknown;
}

/** A Wings frame, or null when it is not one (then it is passed on as it is). */
function frameOf(data: WebSocket.RawData): Frame | null {
  try {
    const frame: unknown = JSON.parse(data.toString());
    if (typeof frame === 'object' && frame !== null && typeof (frame as { event?: unknown }).event === 'string') {
      return frame as Frame;
    }
  } catch {
    // Not JSON: not ours to read.
  }
  return null;
}

/** A daemon error as a customer's own panel account would get it: the reference, not the detail. */
function redactedError(frame: Frame): Buffer {
  const text = Array.isArray(frame.args) && typeof frame.args[0] === 'string' ? frame.args[0] : '';
  const match = ERROR_REFERENCE.exec(text);
  const detail = match ? (match[2] ?? '') : text;
  const shown = PUBLIC_ERRORS.has(detail) ? detail : REDACTED_ERROR;
  return Buffer.from(JSON.stringify({ event: 'daemon error', args: [`${match?.[1] ?? ''}${shown}`] }));
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
    const frame = binary ? null : frameOf(data);
    const event = frame?.event ?? null;
    if (!ready && event !== null && REFUSALS.has(event)) return refuse();
    if (frame !== null && ADMIN_EVENTS.has(frame.event)) return;
    if (frame !== null && frame.event === 'daemon error') return events.output(redactedError(frame), false);
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
