// What an account's site looks like from the outside, through UAPI as that account
// (upstreams.md §3.4): resource usage against the package, the DNS zone (base64 decoded), and
// HTTPS: the certificate covering a domain (SSL::installed_hosts), AutoSSL's state and problems,
// and whether HTTP is redirected (DomainInfo::single_domain_data with
// return_https_redirect_status, the field cPanel's Domains page reads), toggled by
// SSL::toggle_ssl_redirect_for_domains.

import type { WebDnsRecord, WebHttpsStatus, WebUsage } from '../web-panel.ts';
import type { CpanelClient } from './client.ts';
import { flag, isRow, num, rows, strings, text, toDnsRecords, toUsage } from './mapping.ts';

const other = { area: 'other' } as const;

export async function usage(client: CpanelClient, username: string): Promise<WebUsage[]> {
  const data = await client.uapi(username, 'ResourceUsage', 'get_usages', {}, other);
  if (!Array.isArray(data)) throw client.garbled('a resource usage list');
  return rows(data).map(toUsage);
}

export async function dnsZone(client: CpanelClient, username: string, zone: string): Promise<WebDnsRecord[]> {
  const data = await client.uapi(username, 'DNS', 'parse_zone', { zone }, other);
  if (!Array.isArray(data)) throw client.garbled('a parsed zone');
  return toDnsRecords(data);
}

/** A certificate's field, nested (`issuer: {organizationName}`) or flattened (`issuer.organizationName`). */
function field(cert: Record<string, unknown>, group: string, key: string): string {
  const nested = cert[group];
  if (isRow(nested) && text(nested[key])) return text(nested[key]);
  return text(cert[`${group}.${key}`]);
}

/** `not_after` is Unix seconds in cPanel; a date text is read as well. */
function isoDate(value: unknown): string {
  const seconds = num(value, Number.NaN);
  if (Number.isFinite(seconds)) return new Date(seconds * 1000).toISOString();
  const at = Date.parse(text(value));
  return Number.isNaN(at) ? '' : new Date(at).toISOString();
}

/** Does a certificate name (maybe `*.example.in`) cover the domain? */
function covers(name: string, domain: string): boolean {
  const n = name.toLowerCase();
  const d = domain.toLowerCase();
  if (n === d) return true;
  return n.startsWith('*.') && d.endsWith(n.slice(1)) && !d.slice(0, -(n.length - 1)).includes('.');
}

function certificateFor(hosts: unknown, domain: string): WebHttpsStatus['certificate'] {
  for (const host of rows(hosts)) {
    const names = [text(host.servername), ...strings(host.domains), ...strings(host.fqdns)];
    if (!names.some((n) => n.toLowerCase() === domain.toLowerCase())) continue;
    const cert = host.certificate;
    if (!isRow(cert)) continue;
    const domains = strings(cert.domains);
    if (domains.length > 0 && !domains.some((n) => covers(n, domain))) continue;
    return {
      issuer:
        field(cert, 'issuer', 'organizationName') || field(cert, 'issuer', 'commonName') || text(cert.issuer_text),
      notAfter: isoDate(cert.not_after),
      domains,
      selfSigned: flag(cert.is_self_signed),
    };
  }
  return null;
}

export async function httpsStatus(client: CpanelClient, username: string, domain: string): Promise<WebHttpsStatus> {
  const [hosts, inProgress, problems, info] = await Promise.all([
    client.uapi(username, 'SSL', 'installed_hosts', {}, other),
    client.uapi(username, 'SSL', 'is_autossl_check_in_progress', {}, other),
    client.uapi(username, 'SSL', 'get_autossl_problems', {}, other),
    client.uapi(username, 'DomainInfo', 'single_domain_data', { domain, return_https_redirect_status: 1 }, other),
  ]);
  const d = domain.toLowerCase();
  const running = isRow(inProgress) ? Object.values(inProgress).some(flag) : flag(inProgress);
  return {
    certificate: certificateFor(hosts, domain),
    autosslInProgress: running,
    problems: rows(problems)
      .filter((p) => {
        const name = text(p.domain).toLowerCase();
        return name === d || name.endsWith(`.${d}`);
      })
      .map((p) => ({ domain: text(p.domain), problem: text(p.problem) })),
    forced: isRow(info) && flag(info.is_https_redirecting),
  };
}

export async function setHttpsRedirect(
  client: CpanelClient,
  username: string,
  domain: string,
  on: boolean,
): Promise<void> {
  await client.uapi(
    username,
    'SSL',
    'toggle_ssl_redirect_for_domains',
    { domains: domain, state: on ? 1 : 0 },
    { ...other, write: true },
  );
}
