// The shape of a query's free text: an address, prefix, MAC, e-mail, public id, `#id`, domain or
// plain text, with its normalised value, so each searcher can pick an index-backed lookup per
// shape. Pure functions: no database, no I/O.

import ipaddr from 'ipaddr.js';
import { PUBLIC_ID } from '../ids.ts';
import { type ParsedQuery, SearchQueryError } from './query-types.ts';

export type Shape = Omit<ParsedQuery, 'q' | 'text' | 'operators'>;

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const QUAD = `${OCTET}(?:\\.${OCTET}){3}`;
const IPV4 = new RegExp(`^(${QUAD})\\.?$`);
const IPV4_CIDR = new RegExp(`^(${QUAD})/(\\d+|${QUAD})$`);
const IPV4_PARTIAL = new RegExp(`^(${OCTET}(?:\\.${OCTET}){0,2})\\.$`);
const MAX_INT32 = 2_147_483_647;

function numberShape(text: string): Shape | null {
  const match = /^#(\d{1,10})$/.exec(text);
  if (!match) return null;
  const value = Number(match[1]);
  return value >= 1 && value <= MAX_INT32 ? { kind: 'number', number: value } : null;
}

/** `pay_…` / `order_…` with 16 Crockford base32 characters; i and l read as 1, o as 0. */
function publicIdShape(text: string): Shape | null {
  const match = /^(pay|order)_([0-9a-z]{16})$/i.exec(text);
  if (!match) return null;
  const prefix = (match[1] ?? '').toLowerCase();
  const body = (match[2] ?? '').toLowerCase().replace(/[il]/g, '1').replace(/o/g, '0');
  const id = `${prefix}_${body}`;
  if (!PUBLIC_ID.test(id)) return null;
  return { kind: prefix === 'pay' ? 'payment_id' : 'order_id', publicId: id };
}

const LABEL = /^[\p{L}\p{N}_](?:[\p{L}\p{M}\p{N}_-]{0,61}[\p{L}\p{M}\p{N}_])?$/u;
const TLD = /^(?:\p{L}[\p{L}\p{M}]{1,62}|xn--[a-z0-9-]{1,59})$/u;

/** A lower-cased name of two or more labels whose last label is letters; null otherwise. */
function domainOf(raw: string): string | null {
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (name.length > 253) return null;
  const labels = name.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((label) => LABEL.test(label))) return null;
  return TLD.test(labels[labels.length - 1] ?? '') ? name : null;
}

function domainShape(text: string): Shape | null {
  const domain = domainOf(text);
  return domain === null ? null : { kind: 'domain', domain };
}

function emailShape(text: string): Shape | null {
  const raw = text.replace(/^mailto:/i, '');
  const match = /^([\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]{1,64})@([^@]+)$/u.exec(raw);
  if (!match || raw.length > 254) return null;
  const local = match[1] ?? '';
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  const domain = domainOf(match[2] ?? '');
  return domain === null ? null : { kind: 'email', email: `${local.toLowerCase()}@${domain}` };
}

/**
 * MAC notations: `aa:bb:cc:dd:ee:ff` (also one-digit groups, as macOS prints them),
 * `aa-bb-cc-dd-ee-ff`, Cisco `aabb.ccdd.eeff`, and bare `aabbccddeeff` only when it holds a
 * letter a-f (twelve digits are more likely a UPI/UTR reference or a phone number).
 */
function macShape(text: string): Shape | null {
  let groups: string[] | null = null;
  if (/^[0-9a-f]{1,2}(?::[0-9a-f]{1,2}){5}$/i.test(text)) groups = text.split(':');
  else if (/^[0-9a-f]{2}(?:-[0-9a-f]{2}){5}$/i.test(text)) groups = text.split('-');
  else if (/^[0-9a-f]{4}(?:\.[0-9a-f]{4}){2}$/i.test(text)) groups = text.replace(/\./g, '').match(/../g);
  else if (/^[0-9a-f]{12}$/i.test(text) && /[a-f]/i.test(text)) groups = text.match(/../g);
  if (groups === null) return null;
  return { kind: 'mac', mac: groups.map((group) => group.padStart(2, '0').toLowerCase()).join(':') };
}

/** Canonical text: dotted quad, or RFC 5952 compressed lower-case IPv6. */
function show(ip: ipaddr.IPv4 | ipaddr.IPv6): string {
  return ip instanceof ipaddr.IPv6 ? ip.toRFC5952String() : ip.toString();
}

function cidrShape(family: 4 | 6, address: string, prefix: number): Shape {
  const text = `${address}/${prefix}`;
  const network = family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
  const last = family === 4 ? ipaddr.IPv4.broadcastAddressFromCIDR(text) : ipaddr.IPv6.broadcastAddressFromCIDR(text);
  return { kind: 'cidr', cidr: { family, network: show(network), prefix, first: show(network), last: show(last) } };
}

function prefixOf(bits: string, max: number, family: string): number {
  const value = Number(bits);
  if (!Number.isInteger(value) || value > max) {
    throw new SearchQueryError(`prefix /${bits} is out of range for ${family} (0-${max})`);
  }
  return value;
}

/** `a.b.c.d` (one trailing dot allowed), `a.b.c.d/n` or `/mask`, and prefixes `a.`, `a.b.`, `a.b.c.`. */
function ipv4Shape(text: string): Shape | null {
  const address = IPV4.exec(text);
  if (address) return { kind: 'ipv4', ipv4: address[1] ?? '' };
  const cidr = IPV4_CIDR.exec(text);
  if (cidr) {
    const bits = cidr[2] ?? '';
    if (bits.includes('.')) {
      const prefix = ipaddr.IPv4.parse(bits).prefixLengthFromSubnetMask();
      return prefix === null ? null : cidrShape(4, cidr[1] ?? '', prefix);
    }
    return cidrShape(4, cidr[1] ?? '', prefixOf(bits, 32, 'IPv4'));
  }
  const partial = IPV4_PARTIAL.exec(text);
  if (partial) {
    const octets = (partial[1] ?? '').split('.');
    const prefix = octets.length * 8;
    while (octets.length < 4) octets.push('0');
    return cidrShape(4, octets.join('.'), prefix);
  }
  return null;
}

/**
 * IPv6 in any spelling ipaddr.js reads, optionally in brackets, with a zone (`fe80::1%eth0`) or
 * a prefix (`2001:db8::/32`), not both. IPv4-mapped addresses (`::ffff:10.0.0.1`) fold to IPv4,
 * as everywhere else in the server (net/ip.ts); a mapped prefix of /96 or more folds to IPv4 too.
 */
function ipv6Shape(text: string): Shape | null {
  let body = text;
  const bracketed = /^\[([^\]]*)\](\/\d+)?$/.exec(body);
  if (bracketed) body = `${bracketed[1] ?? ''}${bracketed[2] ?? ''}`;
  const slash = body.indexOf('/');
  const bits = slash < 0 ? null : body.slice(slash + 1);
  if (bits !== null) body = body.slice(0, slash);
  const percent = body.indexOf('%');
  const zone = percent < 0 ? null : body.slice(percent + 1);
  if (zone !== null) body = body.slice(0, percent);
  if (!body.includes(':') || !ipaddr.IPv6.isValid(body)) return null;
  if (zone !== null && (bits !== null || !/^[0-9a-z_.~-]{1,64}$/i.test(zone))) return null;
  if (bits !== null && !/^\d+$/.test(bits)) return null;
  const address = ipaddr.IPv6.parse(body);
  if (bits === null) {
    if (address.isIPv4MappedAddress()) return { kind: 'ipv4', ipv4: address.toIPv4Address().toString() };
    const shape: Shape = { kind: 'ipv6', ipv6: address.toRFC5952String() };
    if (zone !== null) shape.zone = zone;
    return shape;
  }
  const prefix = prefixOf(bits, 128, 'IPv6');
  if (address.isIPv4MappedAddress() && prefix >= 96) {
    return cidrShape(4, address.toIPv4Address().toString(), prefix - 96);
  }
  return cidrShape(6, address.toRFC5952String(), prefix);
}

/** `scheme://[user@]host[:port][/…]`: the host's shape (IPv4, IPv6 in brackets, domain), else null. */
function urlShape(text: string): Shape | null {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(\[[^\]]+\]|[^/?#:[\]]+)(?::\d*)?(?:[/?#].*)?$/i.exec(text);
  if (!match) return null;
  const host = match[1] ?? '';
  if (host.startsWith('[')) {
    const shape = ipv6Shape(host);
    return shape && (shape.kind === 'ipv6' || shape.kind === 'ipv4') ? shape : null;
  }
  const ip = IPV4.exec(host);
  if (ip) return { kind: 'ipv4', ipv4: ip[1] ?? '' };
  const domain = domainOf(host);
  return domain === null ? null : { kind: 'domain', domain };
}

/** The shape of collapsed free text: plain text when it has a space or no other shape fits. */
export function detect(text: string): Shape {
  if (text === '') return { kind: 'empty' };
  if (text.includes(' ')) return { kind: 'text' };
  return (
    numberShape(text) ??
    publicIdShape(text) ??
    emailShape(text) ??
    urlShape(text) ??
    macShape(text) ??
    ipv4Shape(text) ??
    ipv6Shape(text) ??
    domainShape(text) ?? { kind: 'text' }
  );
}
