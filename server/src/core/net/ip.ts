// Address handling shared by rate-limit keys, token allow-lists and TRUST_PROXY.
// Node reports IPv4 clients of a dual-stack socket as `::ffff:a.b.c.d`; everything here
// folds those to plain IPv4 so a key or an allow-list sees one address, not two spellings.

import ipaddr from 'ipaddr.js';
import { type Cidr, DOTTED_QUAD, parseCidr } from '../../cidr.ts';

// CIDR parsing lives below the core, beside config.ts (TRUST_PROXY is checked with it).
export { type Cidr, parseCidr };

/** Canonical text of an address, IPv4-mapped IPv6 folded to IPv4; null when not an address. */
export function normalizeIp(raw: string): string | null {
  const value = raw.trim();
  if (DOTTED_QUAD.test(value)) return value;
  if (!value.includes(':') || !ipaddr.IPv6.isValid(value)) return null;
  return ipaddr.process(value).toString();
}

/** Whether an address (any spelling normalizeIp accepts) falls inside the CIDR. */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const normal = normalizeIp(ip);
  if (normal === null) return false;
  const parsed = ipaddr.parse(normal);
  if (parsed.kind() !== cidr.kind) return false;
  return parsed.match(cidr.range);
}

/** How many leading bits of an IPv6 address name one client for rate limits (one /64 is one subscriber). */
export const IPV6_RATE_PREFIX = 64;

/**
 * The key per-IP rate limits count against: an IPv4 address (IPv4-mapped folded) as it is, an
 * IPv6 address as its /64 (`2001:db8:1:2::/64`), since anyone with a /64 can pick any address in
 * it. Something that is not an address is kept as given (trimmed, at most 100 characters), so a
 * caller never fails. Allow-lists and logs use the exact address (normalizeIp), not this.
 */
export function rateKeyIp(raw: string): string {
  const normal = normalizeIp(raw);
  if (normal === null) return raw.trim().slice(0, 100);
  if (!normal.includes(':')) return normal;
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${normal}/${IPV6_RATE_PREFIX}`);
  return `${network.toString()}/${IPV6_RATE_PREFIX}`;
}
