// What the Redfish driver needs to reach one machine's BMC, with its defaults, and the check
// that the configuration can work at all (an http(s) base URL without credentials or a path:
// Redfish links are absolute paths from the BMC's root; a BMC account that fits in a login
// body). Problems are reported without echoing the values, and thrown by every call rather
// than at creation.

import type { DriverTiming, NodeAccess } from '../driver.ts';
import {
  checkEndpoint,
  configProblem,
  type EndpointConfig,
  hostLabel,
  settingsOf,
  timingOf,
  tlsOf,
} from '../driver-config.ts';
import type { UpstreamError } from '../errors.ts';
import type { TlsOptions } from '../http.ts';

export interface RedfishConfig extends EndpointConfig {
  /** The BMC's base URL, e.g. https://bmc-r12.example.in (or http://127.0.0.1:PORT for the emulator). */
  endpoint: string;
  /** The BMC account. */
  username: string;
  /** Its password. Never logged or put in an error. */
  password: string;
  /** The BMC's certificate (mostly self-signed): pin a CA or, explicitly, skip checks. */
  tls?: TlsOptions;
  /**
   * Which system to drive when the BMC manages several (an enclosure's manager): its `Id` or its
   * `@odata.id`. Unset: the BMC must list exactly one system (a rack server's BMC does).
   */
  system?: string;
  /** Deadline of one HTTP request (default 30 s: BMCs are slow). */
  requestTimeoutMs?: number;
  /** How long a task (insert media, secure erase) or a power transition may take (default 15 min). */
  taskTimeoutMs?: number;
  /** Pause between polls of a task monitor or of the power state (default 2 s). */
  pollIntervalMs?: number;
}

export interface ResolvedConfig extends RedfishConfig {
  /** The endpoint's origin, e.g. https://bmc-r12.example.in; every URI is resolved against it. */
  origin: string;
  requestTimeoutMs: number;
  taskTimeoutMs: number;
  pollIntervalMs: number;
}

/** Printable, no spaces at the ends, as BMC account names are (iDRAC: 16, iLO: 39, OpenBMC: 16 characters). */
const USER = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;
const MAX_PASSWORD = 256;

/** The configuration with defaults, or the reason it cannot work (thrown by every call, never at creation). */
export function resolveConfig(config: RedfishConfig): { resolved: ResolvedConfig; problem: UpstreamError | null } {
  let { url, origin, problem } = checkEndpoint(config.endpoint);
  // Redfish links are absolute paths from the BMC's root: a path in the endpoint would be lost.
  if (!problem && url && url.pathname !== '/' && url.pathname !== '') {
    problem = 'the endpoint must be the BMC’s base URL (https://bmc-host), without a path';
  }
  if (!problem && !USER.test(config.username)) problem = 'the BMC username is empty or malformed';
  if (!problem && (config.password === '' || config.password.length > MAX_PASSWORD)) {
    problem = 'the BMC password is empty or too long';
  }
  if (!problem && config.system !== undefined && config.system.trim() === '') problem = 'the system setting is empty';
  return {
    resolved: {
      ...config,
      origin,
      requestTimeoutMs: config.requestTimeoutMs ?? 30_000,
      taskTimeoutMs: config.taskTimeoutMs ?? 15 * 60_000,
      pollIntervalMs: config.pollIntervalMs ?? 2_000,
    },
    problem: configProblem(labelOf(config), problem),
  };
}

/** Names the BMC in every message, without anything secret: `BMC bmc-r12.example.in`. */
export function labelOf(config: Pick<RedfishConfig, 'endpoint'>): string {
  return hostLabel('BMC', config.endpoint);
}

/**
 * A node row's endpoint (the BMC's base URL), credentials ({username, password}: the BMC
 * account) and settings ({tls_insecure?, tls_ca?, system?}) as a driver configuration.
 * Unchecked: every call reports a problem.
 */
export function parseRedfishNode(node: NodeAccess, timing: DriverTiming = {}): RedfishConfig {
  const settings = settingsOf(node);
  return {
    metricsNode: node.name,
    endpoint: node.endpoint,
    username: node.credentials.username ?? '',
    password: node.credentials.password ?? '',
    tls: tlsOf(settings),
    ...(typeof settings.system === 'string' ? { system: settings.system } : {}),
    ...timingOf(timing, 'requestTimeoutMs', 'taskTimeoutMs', 'pollIntervalMs'),
  };
}
