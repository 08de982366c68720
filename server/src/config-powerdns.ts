// PDNS_* (issue 37, CONTRACT §13): the PowerDNS Authoritative server that holds the reverse zones
// of the platform's IPv4 ranges, reached through its HTTP API. URL and key together or neither;
// the key is never echoed in a problem. The result is node-shaped (upstreams/driver.ts NodeAccess)
// so the driver is built like every other (upstreams/registry.ts DNS_DRIVERS).

import type { NodeAccess } from './upstreams/driver.ts';
import type { DnsKind } from './upstreams/registry.ts';

export interface ReverseDnsSettings {
  kind: DnsKind;
  access: NodeAccess;
}

/** Config's part (config.ts extends it). */
export interface ReverseDnsConfig {
  /** The DNS server of the reverse zones, or null: no reverse DNS (demo mode: the emulator's). */
  reverseDns: ReverseDnsSettings | null;
}

export const POWERDNS_VARIABLES = [
  {
    name: 'PDNS_API_URL',
    description: "the PowerDNS Authoritative webserver's base URL (the API is its /api/v1), for reverse DNS",
    default: 'unset (no reverse DNS; demo mode: the PowerDNS emulator)',
  },
  { name: 'PDNS_API_KEY', description: 'the api-key of pdns.conf, sent as X-API-Key', default: 'unset' },
  { name: 'PDNS_SERVER_ID', description: 'the server id in the API paths', default: 'localhost' },
  {
    name: 'PDNS_REVERSE_ZONES',
    description:
      'comma-separated CIDR=zone rules naming the reverse zone of a range (e.g. 203.0.113.0/26=0/26.113.0.203.in-addr.arpa.); an address outside them uses its /24 zone',
    default: 'unset (every address: its /24 zone, c.b.a.in-addr.arpa.)',
  },
  { name: 'PDNS_TTL', description: 'TTL of the PTR records set (60–604800 seconds)', default: '3600' },
] as const;

interface Reader {
  get(name: string): string | undefined;
  fail(name: string, value: string, why: string): void;
  problem(text: string): void;
}

const IPV4_CIDR = /^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/;
const ZONE = /^([a-z0-9_/-]{1,63}\.)+$/;

export function readPowerDns(r: Reader): ReverseDnsConfig {
  const url = r.get('PDNS_API_URL');
  const key = r.get('PDNS_API_KEY');
  const serverId = r.get('PDNS_SERVER_ID') ?? 'localhost';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(serverId)) r.fail('PDNS_SERVER_ID', serverId, 'letters, digits, ".", "_", "-"');
  const ttlRaw = r.get('PDNS_TTL') ?? '3600';
  if (!/^\d+$/.test(ttlRaw) || Number(ttlRaw) < 60 || Number(ttlRaw) > 604_800) {
    r.fail('PDNS_TTL', ttlRaw, 'must be a whole number of seconds from 60 to 604800');
  }
  const zones: { cidr: string; zone: string }[] = [];
  for (const part of (r.get('PDNS_REVERSE_ZONES') ?? '').split(',')) {
    const rule = part.trim();
    if (rule === '') continue;
    const [cidr = '', zoneRaw = ''] = rule.split('=', 2);
    const zone = zoneRaw.trim().toLowerCase().replace(/\.?$/, '.');
    if (!IPV4_CIDR.test(cidr.trim()) || !ZONE.test(zone)) {
      r.fail('PDNS_REVERSE_ZONES', rule, 'each rule is CIDR=zone, e.g. 203.0.113.0/24=113.0.203.in-addr.arpa.');
    } else zones.push({ cidr: cidr.trim(), zone });
  }
  if (url === undefined && key === undefined) return { reverseDns: null };
  if (url === undefined || key === undefined) {
    r.problem('PDNS_API_URL and PDNS_API_KEY are set together or not at all');
    return { reverseDns: null };
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') r.fail('PDNS_API_URL', url, 'must be http(s)://');
    if (parsed.username || parsed.password) r.fail('PDNS_API_URL', '<hidden>', 'must not carry credentials');
  } catch {
    r.fail('PDNS_API_URL', url, 'not a URL');
  }
  return {
    reverseDns: {
      kind: 'powerdns',
      access: {
        name: 'powerdns',
        endpoint: url,
        credentials: { api_key: key },
        settings: { server_id: serverId, ttl: Number(ttlRaw), zones },
      },
    },
  };
}
