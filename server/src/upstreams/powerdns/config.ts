// What the PowerDNS driver needs to reach the Authoritative server's HTTP API, with its defaults,
// read from a NodeAccess (config-powerdns.ts builds one from the PDNS_* variables): the API's base
// URL (the webserver, e.g. http://ns1.example.in:8081; `/api/v1` is added), the API key
// (credentials.api_key), and settings {server_id?, ttl?, zones?: [{cidr, zone}], tls_insecure?,
// tls_ca?}. Problems are reported without echoing the key, and thrown by every call.

import { parseIpv4Cidr, type ReverseZoneRule } from '../dns.ts';
import type { DriverTiming, NodeAccess } from '../driver.ts';
import { checkEndpoint, configProblem, type EndpointConfig, hostLabel, settingsOf, tlsOf } from '../driver-config.ts';
import type { UpstreamError } from '../errors.ts';

export interface PowerDnsConfig extends EndpointConfig {
  /** The webserver's base URL; the API is under `/api/v1`. */
  endpoint: string;
  /** The `api-key` of pdns.conf, sent as X-API-Key. Never logged or put in an error. */
  apiKey: string;
  /** The server id in the API's paths (default `localhost`, the only one an Authoritative server has). */
  serverId: string;
  /** TTL of the PTR records set (default 3600). */
  ttl: number;
  /** Reverse zones of configured ranges; an address outside them uses its /24's zone. */
  zones: ReverseZoneRule[];
  /** Deadline of one HTTP request (default 10 s). */
  requestTimeoutMs: number;
}

/** A zone name: labels of letters, digits, `-`, `_` and `/` (RFC 2317), absolute (a trailing dot). */
const ZONE = /^([a-z0-9_/-]{1,63}\.)+$/;
const KEY = /^[\x21-\x7e]{1,512}$/;

/** The driver's configuration from a node-shaped access, and the reason it cannot work (or null). */
export function parsePowerDnsNode(
  node: NodeAccess,
  timing: DriverTiming = {},
): { config: PowerDnsConfig; problem: UpstreamError | null } {
  const settings = settingsOf(node);
  const serverId = typeof settings.server_id === 'string' && settings.server_id ? settings.server_id : 'localhost';
  const ttl = settings.ttl === undefined ? 3600 : Number(settings.ttl);
  const rawZones = Array.isArray(settings.zones) ? (settings.zones as unknown[]) : [];
  const zones: ReverseZoneRule[] = [];
  let { problem } = checkEndpoint(node.endpoint);
  for (const entry of rawZones) {
    const { cidr, zone } = (entry ?? {}) as { cidr?: unknown; zone?: unknown };
    const name = typeof zone === 'string' ? zone.toLowerCase().replace(/\.?$/, '.') : '';
    if (typeof cidr !== 'string' || parseIpv4Cidr(cidr) === null || !ZONE.test(name)) {
      problem ??= `the reverse zone rule ${JSON.stringify(entry)} is not {cidr, zone}`;
      continue;
    }
    zones.push({ cidr, zone: name });
  }
  if (!problem && !KEY.test(node.credentials.api_key ?? '')) problem = 'the API key is empty or malformed';
  if (!problem && !/^[A-Za-z0-9._-]{1,64}$/.test(serverId)) problem = 'the server id is malformed';
  if (!problem && (!Number.isInteger(ttl) || ttl < 60 || ttl > 604_800)) problem = 'the TTL must be 60–604800 seconds';
  const config: PowerDnsConfig = {
    metricsNode: node.name,
    endpoint: node.endpoint,
    apiKey: node.credentials.api_key ?? '',
    serverId,
    ttl: Number.isInteger(ttl) ? ttl : 3600,
    zones,
    requestTimeoutMs: timing.requestTimeoutMs ?? 10_000,
    tls: tlsOf(settings),
  };
  return { config, problem: configProblem(labelOf(config), problem) };
}

/** Names the server in every message, without anything secret: `PowerDNS ns1.example.in:8081`. */
export function labelOf(config: Pick<PowerDnsConfig, 'endpoint'>): string {
  return hostLabel('PowerDNS', config.endpoint);
}
