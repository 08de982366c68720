// What every upstream driver provides, whatever kind of node it speaks to: a health probe and
// the node's console, with the console tickets of every kind (the relay dials them all). The
// kind-specific interfaces (./hypervisor.ts, ./game-panel.ts, ./web-panel.ts, ./bare-metal.ts)
// add their own operations on top; ./registry.ts says which driver serves which kind.

import type WebSocket from 'ws';
import type { BudgetSpec } from './budgets.ts';

/** A VM's console as its hypervisor issues it (Hypervisor.console). */
export interface ConsoleTicket {
  kind: 'vnc' | 'serial';
  /** The node's one-time ticket for its console websocket; valid for seconds, not minutes. */
  ticket: string;
  port: number;
  /** Who the ticket was issued to; a serial session sends `<user>:<ticket>\n` first. */
  user: string;
  /** VNC: the RFB password (null: the ticket is the password). Serial: null. */
  password: string | null;
  /**
   * What a server-side proxy dials on the node's endpoint (ws: or wss:), authenticating with
   * the API token: the /vncwebsocket path with port and ticket, no credentials in it. Never
   * give it, or the node's address, to a browser. Real nodes may refuse API tokens for serial
   * (termproxy) sessions (upstreams.md §2.7).
   */
  websocketPath: string;
}

/** How the platform finds one panel server again: the panel's numeric id and its client identifiers. */
export interface GameServerRef {
  /** Application API id. */
  id: number;
  /** 36-char UUID (Wings' name for it). */
  uuid: string;
  /** 8-char short id the client API takes. */
  identifier: string;
}

/**
 * A console session as the relay dials it (NodeDriver.openConsole): where and with which JWT,
 * and the server, so the driver can fetch a fresh JWT when Wings says it is expiring.
 */
export interface GameConsoleTicket {
  kind: 'game';
  server: GameServerRef;
  token: string;
  socket: string;
}

/** What a console relay dials: a VM's console (vnc, serial) or a game server's (Wings). */
export type UpstreamConsoleTicket = ConsoleTicket | GameConsoleTicket;

/** A node as its driver is built from: the row's fields with its credentials unsealed. */
export interface NodeAccess {
  name: string;
  endpoint: string;
  /** Never log them or put them in an error. */
  credentials: Record<string, string>;
  /** The node row's settings JSON, as staff entered it (unchecked). */
  settings: unknown;
}

/** Deadlines of a driver's calls (tests poll faster). */
export interface DriverTiming {
  requestTimeoutMs?: number;
  taskTimeoutMs?: number;
  pollIntervalMs?: number;
  /**
   * Every node's call budget unless its settings say otherwise (`rate_per_minute`, `rate_burst`);
   * default budgets.ts DEFAULT_NODE_BUDGET. Tests that drive emulators hard raise it.
   */
  budget?: BudgetSpec;
}

/** What the node's console tells the relay while it opens and once it runs. */
export interface ConsoleEvents {
  /** The console takes input from now on (after whatever handshake the node wants). */
  ready(): void;
  /** Output of the console; a handshake's answers are never passed on. */
  output(data: WebSocket.RawData, binary: boolean): void;
  /** The node answered the handshake with a refusal; the socket is left for the caller to end. */
  refused(): void;
}

export interface ConsoleDialOptions {
  /** The largest frame accepted from the node. */
  maxPayload: number;
}

export interface NodeDriver {
  /** The node answers and accepts our credentials: its software version. Throws UpstreamError. */
  ping(): Promise<{ version: string }>;

  /**
   * Dial the node's console for a ticket the driver issued, with the node's own credentials
   * (the browser never sees them). Returns at once with the socket, still connecting: input
   * goes to it with `send` once `events.ready` was called; its `error` and `close` events, its
   * flow control (pause, resume, bufferedAmount) and `terminate` are the caller's, its output
   * comes through `events.output` (never a `message` listener of the caller's: that would see
   * the handshake too).
   */
  openConsole(ticket: UpstreamConsoleTicket, events: ConsoleEvents, options: ConsoleDialOptions): WebSocket;

  /**
   * Which client frames may reach the node's console (null: all, as bytes). A game console takes
   * only the events a player may send; the handshake (`auth`) is the driver's alone.
   */
  consoleInput?(ticket: UpstreamConsoleTicket): ((data: WebSocket.RawData, binary: boolean) => boolean) | null;

  /** Close kept-alive connections; the driver must not be used afterwards. */
  close(): void;
}
