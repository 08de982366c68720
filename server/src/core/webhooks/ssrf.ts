// Where a webhook may go (issue 37's SSRF guard). An endpoint's URL must be https:// (http:// only
// to this machine's loopback, and only in demo mode); an address given literally must be a public
// unicast one. At delivery time the host is resolved here, every address it resolves to must be
// public, and the connection is made to the address that was checked (the lookup the HTTP client
// uses is this one), then the connected socket's peer address is checked again — so a DNS answer
// that changes between a check and the connection (rebinding) cannot reach a private address.
//
// Refused: private (10/8, 172.16/12, 192.168/16), loopback (127/8, ::1), link-local (169.254/16,
// fe80::/10, so 169.254.169.254), carrier-grade NAT (100.64/10), unique-local (fc00::/7, so
// fd00:ec2::254), unspecified (0/8, ::), multicast, broadcast, reserved and documentation ranges,
// and IPv6 transition prefixes that embed an IPv4 address (6to4, Teredo, NAT64) — everything
// ipaddr.js does not call plain `unicast`. IPv4-mapped IPv6 addresses are judged as IPv4.

import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolve a host name to its addresses (tests pass their own: a hosts file in code). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface UrlPolicy {
  /** Demo mode: http:// and loopback addresses are allowed (a receiver on this machine). */
  allowLoopback: boolean;
}

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKED';
}

/** Whether a webhook may be sent to this address (any spelling; not an address: no). */
export function addressAllowed(raw: string, policy: UrlPolicy): boolean {
  const text = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (!ipaddr.isValid(text)) return false;
  const range = ipaddr.process(text).range();
  return range === 'unicast' || (policy.allowLoopback && range === 'loopback');
}

const LOOPBACK_NAMES = /^(localhost|[a-z0-9-]+\.localhost)$/i;

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function isLoopbackHost(host: string): boolean {
  if (LOOPBACK_NAMES.test(host)) return true;
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}

/** Why a URL cannot be an endpoint, or null when it can (checked when it is saved). */
export function urlProblem(raw: string, policy: UrlPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https:// URL';
  }
  if (raw.length > 2048) return 'must be at most 2048 characters';
  const host = bareHost(url);
  const loopback = isLoopbackHost(host);
  if (url.protocol === 'http:') {
    if (!(policy.allowLoopback && loopback))
      return policy.allowLoopback
        ? 'must use https:// (http:// only to this machine: localhost or 127.0.0.1)'
        : 'must use https://';
  } else if (url.protocol !== 'https:') {
    return 'must be an absolute https:// URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (host === '') return 'must name a host';
  if (loopback && !policy.allowLoopback) return 'must not point at this machine (localhost, 127.0.0.0/8, ::1)';
  if (ipaddr.isValid(host) && !addressAllowed(host, policy))
    return 'must not point at a private, loopback, link-local or other reserved address';
  return null;
}

/**
 * A `lookup` for http(s).request: resolves with `resolver`, refuses the whole name when any
 * address it resolves to is not allowed, and hands the HTTP client the first (checked) address.
 */
export function guardedLookup(resolver: Resolver, policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname)
      .then((addresses) => {
        const blocked = addresses.find((a) => !addressAllowed(a.address, policy));
        if (blocked)
          throw new BlockedAddressError(
            `${hostname} resolves to ${blocked.address}, an address webhooks may not reach`,
          );
        const first = addresses[0];
        if (!first) throw Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, [{ address: first.address, family: first.family }]);
        else callback(null, first.address, first.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
