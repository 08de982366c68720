// What the cPanel/WHM driver needs to reach a server, with its defaults, and the check that the
// configuration can work at all (an http(s) WHM endpoint without credentials in it, a WHM user
// name that fits in the `whm user:token` header, a token that looks like one). Problems are
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

export interface CpanelConfig extends EndpointConfig {
  /** WHM's base URL, e.g. https://host.example.in:2087 (or http://127.0.0.1:PORT for the emulator). */
  endpoint: string;
  /** The WHM user the token belongs to (root or a reseller). */
  username: string;
  /** WHM API token. Never logged or put in an error. */
  apiToken: string;
  /** The server's certificate: pin a CA or, explicitly, skip checks. */
  tls?: TlsOptions;
  /**
   * Deadline of one ordinary request (default 15 s). Calls that make cPanel do real work on the
   * server (createacct, removeacct, suspendacct, unsuspendacct, passwd) get SLOW_FACTOR times it.
   */
  requestTimeoutMs?: number;
}

export interface ResolvedConfig extends CpanelConfig {
  /** The endpoint without a trailing slash, e.g. https://host.example.in:2087. */
  base: string;
  requestTimeoutMs: number;
  /** Deadline of the calls that run account scripts on the server. */
  slowTimeoutMs: number;
}

/** createacct and removeacct run for tens of seconds on a real server (DNS, Apache, quotas, mail). */
export const SLOW_FACTOR = 6;

/** cPanel usernames are lowercase letters and digits; resellers and root too. Nothing that breaks the header. */
const USER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** WHM tokens are 32 uppercase letters and digits; accept any printable text of 16 or more (no spaces). */
const TOKEN = /^[\x21-\x7e]{16,}$/;

/** The configuration with defaults, or the reason it cannot work (thrown by every call, never at creation). */
export function resolveConfig(config: CpanelConfig): { resolved: ResolvedConfig; problem: UpstreamError | null } {
  let { base, problem } = checkEndpoint(config.endpoint);
  if (!problem && !USER.test(config.username)) problem = 'the WHM username is empty or malformed';
  if (!problem && !TOKEN.test(config.apiToken)) problem = 'the API token is empty or malformed';
  const requestTimeoutMs = config.requestTimeoutMs ?? 15_000;
  return {
    resolved: { ...config, base, requestTimeoutMs, slowTimeoutMs: requestTimeoutMs * SLOW_FACTOR },
    problem: configProblem(labelOf(config), problem),
  };
}

/** Names the server in every message, without anything secret: `cPanel server host.example.in:2087`. */
export function labelOf(config: Pick<CpanelConfig, 'endpoint'>): string {
  return hostLabel('cPanel server', config.endpoint);
}

/**
 * A node row's endpoint (WHM's base URL), credentials ({username, api_token}) and settings
 * ({tls_insecure?, tls_ca?}) as a driver configuration. Unchecked: every call reports a problem.
 */
export function parseCpanelNode(node: NodeAccess, timing: DriverTiming = {}): CpanelConfig {
  const settings = settingsOf(node);
  return {
    metricsNode: node.name,
    endpoint: node.endpoint,
    username: node.credentials.username ?? '',
    apiToken: node.credentials.api_token ?? '',
    tls: tlsOf(settings),
    ...timingOf(timing, 'requestTimeoutMs'),
  };
}
