// Address ranges as TRUST_PROXY and token allow-lists write them (`a.b.c.d/n`, IPv6 CIDRs, bare
// addresses). It sits beside config.ts, below everything, because the configuration checks
// TRUST_PROXY with it before the core exists; core/net/ip.ts builds the rest of the address
// handling on it.

import ipaddr from 'ipaddr.js';

/** A plain dotted quad: no shortened (`127.1`), octal or hexadecimal forms. */
export const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export interface Cidr {
  kind: 'ipv4' | 'ipv6';
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  /** Canonical text, e.g. `10.0.0.0/8` for input `10.1.2.3/8`. */
  text: string;
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
