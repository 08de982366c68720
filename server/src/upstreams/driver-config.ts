// What every driver's configuration shares, whatever node it reaches: an http(s) endpoint that
// carries no credentials, query or fragment; a label naming the node by its host (never anything
// secret) in every message; a problem reported as a `rejected` UpstreamError that every call
// throws; the node row's settings read as an object, with their TLS choice (`tls_insecure`,
// `tls_ca`); the driver timing a kind uses; and the HTTP client built from all that. Each
// driver's config.ts keeps its own credentials, checks, defaults and settings.

import type { DriverTiming, NodeAccess } from './driver.ts';
import { UpstreamError } from './errors.ts';
import { createHttpClient, type HttpClient, type TlsOptions } from './http.ts';

/** The fields of a driver configuration that say how its node is reached. */
export interface EndpointConfig {
  /** Our name of the node (`nodes.name`): the `node` label of its upstream-call metrics. */
  metricsNode?: string;
  endpoint: string;
  tls?: TlsOptions;
}

export interface CheckedEndpoint {
  /** The parsed endpoint; null when it is not a URL. */
  url: URL | null;
  /** The endpoint without a trailing slash, e.g. https://panel.example.in/sub ('' when not a URL). */
  base: string;
  /** The endpoint's origin, e.g. https://panel.example.in ('' when not a URL). */
  origin: string;
  /** Why the endpoint cannot work, without echoing it; null when it can. */
  problem: string | null;
}

/** The endpoint as an http(s) URL without credentials, query or fragment (a driver may check more). */
export function checkEndpoint(endpoint: string): CheckedEndpoint {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { url: null, base: '', origin: '', problem: 'the endpoint is not a URL' };
  }
  let problem: string | null = null;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') problem = 'the endpoint must be an http(s) URL';
  else if (url.username || url.password) problem = 'the endpoint must not contain credentials';
  else if (url.search || url.hash) problem = 'the endpoint must not have a query or fragment';
  return { url, base: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, origin: url.origin, problem };
}

/** Names a node by what it is and its host, without anything secret: `BMC bmc-r12.example.in`. */
export function hostLabel(what: string, endpoint: string): string {
  try {
    return `${what} ${new URL(endpoint).host}`;
  } catch {
    return what;
  }
}

/** A configuration problem as every call of the driver throws it (null: none). */
export function configProblem(label: string, problem: string | null): UpstreamError | null {
  return problem ? new UpstreamError('rejected', `${label}: ${problem}`, { retryable: false }) : null;
}

/** The TLS settings a node row may carry (`nodes add --settings`), unchecked. */
export interface TlsSettings {
  tls_insecure?: unknown;
  tls_ca?: unknown;
}

/** A node row's settings JSON as an object (anything else reads as no settings); each value unchecked. */
export function settingsOf(node: NodeAccess): Readonly<Record<string, unknown>> {
  const raw = node.settings;
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? Object.fromEntries(Object.entries(raw)) : {};
}

/** The settings' TLS choice: checks skipped only when `tls_insecure` is exactly true; a non-empty `tls_ca` pinned. */
export function tlsOf(settings: TlsSettings): TlsOptions {
  return {
    insecure: settings.tls_insecure === true,
    ...(typeof settings.tls_ca === 'string' && settings.tls_ca ? { ca: settings.tls_ca } : {}),
  };
}

type TimingKey = 'requestTimeoutMs' | 'taskTimeoutMs' | 'pollIntervalMs';

/** The deadlines of `timing` a driver takes, those set only (the driver's defaults fill the rest). */
export function timingOf<K extends TimingKey>(timing: DriverTiming, ...keys: K[]): { [P in K]?: number } {
  const picked: { [P in K]?: number } = {};
  for (const key of keys) {
    const value = timing[key];
    if (value !== undefined) picked[key] = value;
  }
  return picked;
}

/** The HTTP client a driver reaches its node with: the node's TLS choice, label and call budget. */
export function nodeHttpClient(
  config: EndpointConfig,
  label: string,
  limits: { timeoutMs: number; maxBytes?: number },
): HttpClient {
  return createHttpClient({
    ...(config.tls ? { tls: config.tls } : {}),
    ...limits,
    label,
    metricsNode: config.metricsNode,
  });
}
