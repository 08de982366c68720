// Address handling shared by rate-limit keys, token allow-lists and TRUST_PROXY.
// Node reports IPv4 clients of a dual-stack socket as `::ffff:a.b.c.d`; everything here
// folds those to plain IPv4 so a key or an allow-list sees one address, not two spellings.

import ipaddr from 'ipaddr.js';

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export interface Cidr {
  kind: 'ipv4' | 'ipv6';
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  /** Canonical text, e.g. `10.0.0.0/8` for input `10.1.2.3/8`. */
  text: string;
}

/** Canonical text of an address, IPv4-mapped IPv6 folded to IPv4; null when not an address. */
export function normalizeIp(raw: string): string | null {
  const value = raw.trim();
  if (DOTTED_QUAD.test(value)) return value;
  if (!value.includes(':') || !ipaddr.IPv6.isValid(value)) return null;
  return ipaddr.process(value).toString();
}

/**
 * Parse `a.b.c.d/n`, a bare IPv4 address (= /32), or an IPv6 CIDR/address. IPv4 parts must be
 * plain dotted quads: forms such as `127.1` or `0x7f.0.0.1` are refused rather than guessed.
 */
export function parseCidr(raw: string): Cidr | null {
  const value = raw.trim();
  const [addr = '', bitsText, extra] = value.split('/');
  if (extra !== undefined) return null;
  if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) return null;
  if (DOTTED_QUAD.test(addr)) {
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    if (bits > 32) return null;
    const network = ipaddr.IPv4.networkAddressFromCIDR(`${addr}/${bits}`);
    return { kind: 'ipv4', range: [network, bits], text: `${network.toString()}/${bits}` };
  }
  if (addr.includes(':') && ipaddr.IPv6.isValid(addr)) {
    const bits = bitsText === undefined ? 128 : Number(bitsText);
    if (bits > 128) return null;
    const network = ipaddr.IPv6.networkAddressFromCIDR(`${addr}/${bits}`);
    return { kind: 'ipv6', range: [network, bits], text: `${network.toString()}/${bits}` };
  }
  return null;
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
