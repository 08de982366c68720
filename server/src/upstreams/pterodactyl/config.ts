// What the Pterodactyl driver needs to reach a panel, with its defaults, and the check that the
// configuration can work at all (an http(s) endpoint without credentials in it, an application
// key and a client key that look like keys and are not swapped, a panel node id). Problems are
// reported without echoing the values, and thrown by every call rather than at creation.

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

export interface PterodactylConfig extends EndpointConfig {
  /** The panel's URL, e.g. https://panel.example.in (or http://127.0.0.1:PORT for the emulator). */
  endpoint: string;
  /** Application API key (`ptla_…`) of a root admin: users and servers. Never logged or put in an error. */
  appKey: string;
  /** Client API key (`ptlc_…`) of a root admin: everything done on a server. Never logged or put in an error. */
  clientKey: string;
  /** The panel's node id new servers are placed on (its free allocations). */
  panelNode: number;
  /** The panel's (and Wings') certificates: pin a CA or, explicitly, skip checks. */
  tls?: TlsOptions;
  /** Deadline of one HTTP request; for streamed uploads, the longest pause (default 15 s). */
  requestTimeoutMs?: number;
  /**
   * Kept for the driver timing every kind shares: the driver itself never polls (the caller
   * polls `server()` while a server installs). Default 250 ms.
   */
  pollIntervalMs?: number;
}

export interface ResolvedConfig extends PterodactylConfig {
  /** The endpoint without a trailing slash, e.g. https://panel.example.in/sub. */
  base: string;
  /** What Wings expects in the console's Origin header: the panel's origin. */
  origin: string;
  requestTimeoutMs: number;
  pollIntervalMs: number;
}

const KEY = /^[\x21-\x7e]{16,}$/;

/** The configuration with defaults, or the reason it cannot work (thrown by every call, never at creation). */
export function resolveConfig(config: PterodactylConfig): { resolved: ResolvedConfig; problem: UpstreamError | null } {
  let { base, origin, problem } = checkEndpoint(config.endpoint);
  if (!problem && !KEY.test(config.appKey)) problem = 'the application API key is empty or malformed';
  if (!problem && !KEY.test(config.clientKey)) problem = 'the client API key is empty or malformed';
  // Keys carry their type in the prefix (panel ≥ 1.7; older keys have none and pass).
  if (!problem && config.appKey.startsWith('ptlc_')) problem = 'the application API key is a client key (ptlc_)';
  if (!problem && config.clientKey.startsWith('ptla_')) problem = 'the client API key is an application key (ptla_)';
  if (!problem && !(Number.isInteger(config.panelNode) && config.panelNode > 0)) {
    problem = 'the panel node must be a positive whole number (the panel’s node id)';
  }
  return {
    resolved: {
      ...config,
      base,
      origin,
      requestTimeoutMs: config.requestTimeoutMs ?? 15_000,
      pollIntervalMs: config.pollIntervalMs ?? 250,
    },
    problem: configProblem(labelOf(config), problem),
  };
}

/** Names the panel in every message, without anything secret: `Pterodactyl panel panel.example.in`. */
export function labelOf(config: Pick<PterodactylConfig, 'endpoint'>): string {
  return hostLabel('Pterodactyl panel', config.endpoint);
}

/**
 * A node row's endpoint, credentials ({app_key, client_key}) and settings ({panel_node?: number
 * (default 1), tls_insecure?, tls_ca?}) as a driver configuration. Unchecked: a panel_node that
 * is not a whole number is kept as it is, and every call reports it.
 */
export function parsePterodactylNode(node: NodeAccess, timing: DriverTiming = {}): PterodactylConfig {
  const settings = settingsOf(node);
  const panelNode =
    settings.panel_node === undefined
      ? 1
      : typeof settings.panel_node === 'string' && /^\d+$/.test(settings.panel_node)
        ? Number(settings.panel_node)
        : typeof settings.panel_node === 'number'
          ? settings.panel_node
          : Number.NaN;
  return {
    metricsNode: node.name,
    endpoint: node.endpoint,
    appKey: node.credentials.app_key ?? '',
    clientKey: node.credentials.client_key ?? '',
    panelNode,
    tls: tlsOf(settings),
    ...timingOf(timing, 'requestTimeoutMs', 'pollIntervalMs'),
  };
}
