// ReverseDns (../dns.ts) on a PowerDNS Authoritative server's HTTP API (/api/v1, X-API-Key):
// a PTR is set with `PATCH /servers/{server}/zones/{zone}` and one rrset of changetype REPLACE,
// cleared with changetype DELETE; the server answers 204 No Content. Its refusals are
// `{"error": "..."}`: 401 for a wrong key, 404 "Could not find domain '…'" for a zone it does
// not hold, 422 for a record it will not take. The zone of an address is the configured rule's
// (RFC 2317 zones included: the record is then `<last octet>.<zone>`), else its /24's.

import { type ReverseDns, reverseName, reverseZoneFor } from '../dns.ts';
import type { DriverTiming, NodeAccess } from '../driver.ts';
import { nodeHttpClient } from '../driver-config.ts';
import { UpstreamError } from '../errors.ts';
import type { HttpResponse } from '../http.ts';
import { labelOf, type PowerDnsConfig, parsePowerDnsNode } from './config.ts';

/** PowerDNS's own zone id (apiZoneNameToId): anything but letters, digits, `.` and `-` as `=XX` (safe in a path as it is). */
export function zoneIdOf(zone: string): string {
  return [...zone]
    .map((c) => (/[A-Za-z0-9.-]/.test(c) ? c : `=${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('');
}

/** The owner name of the PTR record of `address` in `zone` (RFC 2317 zones: `<last octet>.<zone>`). */
export function ptrOwner(address: string, zone: string): string {
  const name = reverseName(address);
  if (name.endsWith(`.${zone}`) || name === zone) return name;
  return `${address.split('.')[3]}.${zone}`;
}

/** The `error` of PowerDNS's error body, or a short excerpt of whatever it sent. */
function errorText(res: HttpResponse): string | undefined {
  try {
    const body = JSON.parse(res.text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error.slice(0, 300);
  } catch {
    // not JSON: a proxy's page, or a webserver without the API
  }
  return undefined;
}

/** A non-2xx answer as the UpstreamError the contract names. */
function failure(label: string, res: HttpResponse): UpstreamError {
  const detail = errorText(res);
  const status = res.status;
  const said = detail ? `: ${detail}` : '';
  const options = { status, ...(detail ? { detail } : {}) };
  if (status === 401 || status === 403) return new UpstreamError('auth', `${label} refused the API key`, options);
  if (status === 404) return new UpstreamError('not_found', `${label} does not hold the zone${said}`, options);
  if (status === 400 || status === 422)
    return new UpstreamError('rejected', `${label} refused the change${said}`, options);
  if (status === 429) {
    const retry = Number(res.headers['retry-after']);
    return new UpstreamError('rate_limited', `${label} asked us to slow down`, {
      ...options,
      ...(Number.isFinite(retry) ? { retryAfterSeconds: retry } : {}),
    });
  }
  if (status >= 500) return new UpstreamError('unreachable', `${label} failed (${status})${said}`, options);
  return new UpstreamError('protocol', `${label} answered ${status}, which the API does not`, {
    ...options,
    retryable: false,
  });
}

export function createPowerDnsDriver(config: PowerDnsConfig, problem: UpstreamError | null = null): ReverseDns {
  const label = labelOf(config);
  const http = nodeHttpClient(config, label, { timeoutMs: config.requestTimeoutMs, maxBytes: 8 * 1024 * 1024 });
  const base = `${config.endpoint.replace(/\/+$/, '')}/api/v1/servers/${encodeURIComponent(config.serverId)}`;
  const zoneOf = (address: string) => reverseZoneFor(address, config.zones);

  async function call(method: string, path: string, body?: unknown): Promise<HttpResponse> {
    if (problem) throw problem;
    const res = await http.send({
      method,
      url: new URL(`${base}${path}`),
      headers: {
        'x-api-key': config.apiKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status < 200 || res.status > 299) throw failure(label, res);
    return res;
  }

  function json<T>(res: HttpResponse): T {
    try {
      return JSON.parse(res.text) as T;
    } catch {
      throw new UpstreamError('protocol', `${label} answered something that is not JSON`, { retryable: false });
    }
  }

  async function patch(address: string, rrset: Record<string, unknown>): Promise<void> {
    const zone = zoneOf(address);
    const name = ptrOwner(address, zone);
    await call('PATCH', `/zones/${zoneIdOf(zone)}`, {
      rrsets: [{ name, type: 'PTR', ...rrset }],
    });
  }

  return {
    async ping() {
      const server = json<{ version?: unknown }>(await call('GET', ''));
      return { version: typeof server.version === 'string' ? server.version : 'unknown' };
    },
    zoneOf,
    setPtr: (address, hostname) =>
      patch(address, {
        changetype: 'REPLACE',
        ttl: config.ttl,
        records: [{ content: `${hostname}.`, disabled: false }],
      }),
    clearPtr: (address) => patch(address, { changetype: 'DELETE' }),
    async readPtr(address) {
      const zone = zoneOf(address);
      const name = ptrOwner(address, zone);
      const query = `?rrset_name=${encodeURIComponent(name)}&rrset_type=PTR`;
      const found = json<{ rrsets?: { name?: string; type?: string; records?: { content?: string }[] }[] }>(
        await call('GET', `/zones/${zoneIdOf(zone)}${query}`),
      );
      const rrset = (found.rrsets ?? []).find((r) => r.name === name && r.type === 'PTR');
      const content = rrset?.records?.[0]?.content;
      return typeof content === 'string' ? content.replace(/\.$/, '') : null;
    },
    close: () => http.close(),
  };
}

/** The driver of a node-shaped access (the registry's entry; configuration problems fail every call). */
export function createPowerDns(node: NodeAccess, timing: DriverTiming = {}): ReverseDns {
  const { config, problem } = parsePowerDnsNode(node, timing);
  return createPowerDnsDriver(config, problem);
}
