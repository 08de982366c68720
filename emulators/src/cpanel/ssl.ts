// SSL as a cPanel account sees it: a self-signed placeholder certificate on the account's vhost
// at first, then AutoSSL runs (one is queued when the account is created, more with
// SSL::start_autossl_check) that install a DV certificate after `autosslDelayMs` — or record
// DCV problems when the `autosslFails` knob is set. HTTPS redirects need a valid, CA-signed
// certificate, as SSL::toggle_ssl_redirect_for_domains documents.

import { createHash, randomBytes } from 'node:crypto';
import { ApiError, type Ctx, unixNow } from './context.ts';
import type { Params } from './http.ts';
import type { Account, Certificate } from './state.ts';

/** The names a vhost's certificate covers. */
export function vhostNames(account: Account): string[] {
  const d = account.domain;
  return [d, `mail.${d}`, `www.${d}`];
}

/** The extra service subdomains AutoSSL adds (cpanel., webmail. …). */
function autosslNames(account: Account): string[] {
  const d = account.domain;
  return [...vhostNames(account), `cpanel.${d}`, `webdisk.${d}`, `webmail.${d}`, `cpcalendars.${d}`, `cpcontacts.${d}`];
}

function makeCert(domains: string[], selfSigned: boolean, days: number): Certificate {
  const modulus = randomBytes(256).toString('hex');
  const now = unixNow();
  return {
    id: `${domains[0]?.replace(/\./g, '_')}_${modulus.slice(0, 5)}_${modulus.slice(5, 10)}_${now}_${createHash('md5').update(modulus).digest('hex')}`,
    domains,
    isSelfSigned: selfSigned,
    issuerCommonName: selfSigned ? (domains[0] ?? '') : 'cPanel, Inc. Certification Authority',
    issuerOrganizationName: selfSigned ? null : 'cPanel, Inc.',
    notBefore: now - (selfSigned ? 0 : 60),
    notAfter: now + days * 86400,
    modulus,
    validationType: selfSigned ? null : 'dv',
    autossl: !selfSigned,
  };
}

/** The placeholder installed when the account is created. */
export function selfSignedCert(account: Account): Certificate {
  return makeCert(vhostNames(account), true, 365);
}

/** Queue an AutoSSL run for the account (finishes after the delay). */
export function queueAutossl(ctx: Ctx, account: Account): void {
  account.autosslDueAt = Date.now() + ctx.settings.autosslDelayMs;
  scheduleTick(ctx, ctx.settings.autosslDelayMs);
}

/** Wake up after `ms` to finish due AutoSSL runs (they are also finished lazily on every API call). */
export function scheduleTick(ctx: Ctx, ms: number): void {
  const timer = setTimeout(() => {
    ctx.timers.delete(timer);
    if (finishDueAutossl(ctx)) ctx.changed();
  }, Math.max(0, ms) + 5);
  timer.unref();
  ctx.timers.add(timer);
}

/** Finish every AutoSSL run whose time has come; true when something changed. */
export function finishDueAutossl(ctx: Ctx): boolean {
  const now = Date.now();
  let changed = false;
  for (const account of ctx.state.accounts.values()) {
    if (account.autosslDueAt === null || account.autosslDueAt > now) continue;
    account.autosslDueAt = null;
    changed = true;
    const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    if (ctx.faults.autosslFails) {
      account.autosslProblems = vhostNames(account).map((domain) => ({
        domain,
        problem: `DNS DCV: The domain “${domain}” resolved to an IP address “203.0.113.77” that does not exist on this server.`,
        time,
      }));
      continue;
    }
    account.autosslProblems = [];
    const current = account.certs[account.domain];
    if (current && !current.isSelfSigned && current.notAfter - unixNow() > 30 * 86400) continue;
    account.certs[account.domain] = makeCert(autosslNames(account), false, 90);
  }
  return changed;
}

/** Whether the domain's vhost has a valid CA-signed certificate. */
function hasValidCert(account: Account, domain: string): boolean {
  const cert = account.certs[account.domain];
  return !!cert && !cert.isSelfSigned && cert.notAfter > unixNow() && cert.domains.includes(domain);
}

function certForApi(cert: Certificate): Record<string, unknown> {
  const subject = cert.domains[0] ?? '';
  const issuerText = cert.isSelfSigned
    ? `commonName\n${subject}`
    : `countryName\nUS\nstateOrProvinceName\nTX\nlocalityName\nHouston\norganizationName\ncPanel, Inc.\ncommonName\ncPanel, Inc. Certification Authority`;
  return {
    id: cert.id,
    domains: cert.domains,
    is_self_signed: cert.isSelfSigned ? 1 : 0,
    modulus: cert.modulus,
    modulus_length: 2048,
    not_after: cert.notAfter,
    not_before: cert.notBefore,
    signature_algorithm: 'sha256WithRSAEncryption',
    validation_type: cert.validationType,
    'issuer.commonName': cert.issuerCommonName,
    'issuer.organizationName': cert.issuerOrganizationName,
    issuer_text: issuerText,
    'subject.commonName': subject,
    subject_text: `commonName\n${subject}`,
  };
}

export function installedHosts(ctx: Ctx, account: Account): unknown {
  const out: unknown[] = [];
  for (const [servername, cert] of Object.entries(account.certs)) {
    out.push({
      servername,
      ip: ctx.settings.ip,
      port: 443,
      needs_sni: 1,
      certificate: certForApi(cert),
      certificate_text: null,
      docroot: `/home/${account.user}/public_html`,
      domains: [servername],
      fqdns: vhostNames(account).sort(),
      mail_sni_status: 1,
    });
  }
  return out;
}

export function startAutosslCheck(ctx: Ctx, account: Account): null {
  queueAutossl(ctx, account);
  return null;
}

export function isAutosslInProgress(account: Account): number {
  return account.autosslDueAt !== null && account.autosslDueAt > Date.now() ? 1 : 0;
}

export function autosslProblems(account: Account): unknown {
  return account.autosslProblems.map((p) => ({ ...p }));
}

/** SSL::toggle_ssl_redirect_for_domains: `domains` (comma list or repeated), `state` 1|0. */
export function toggleRedirect(account: Account, params: Params): string[] {
  const domains = params
    .all('domains')
    .flatMap((d) => d.split(','))
    .map((d) => d.trim().toLowerCase())
    .filter((d) => d !== '');
  if (domains.length === 0) return [];
  const on = Number.parseInt(params.get('state') ?? '0', 10) !== 0;
  const owned = new Set([account.domain, `www.${account.domain}`]);
  for (const domain of domains) {
    if (!owned.has(domain) || (on && !hasValidCert(account, domain))) {
      throw new ApiError('One or more domains passed failed to validate.', []);
    }
  }
  for (const domain of domains) {
    const has = account.sslRedirects.includes(domain);
    if (on && !has) account.sslRedirects.push(domain);
    if (!on && has) account.sslRedirects = account.sslRedirects.filter((d) => d !== domain);
  }
  return domains;
}
