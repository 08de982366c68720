// The smaller UAPI modules of one account: LangPHP (installed versions, version per vhost),
// ResourceUsage::get_usages (limits from the package), Passwd::change_password, DomainInfo
// (list_domains, domains_data and single_domain_data with the HTTPS-redirect state) and Tokens
// (API tokens the account can then use with `Authorization: cpanel USER:TOKEN`).

import { createHash } from 'node:crypto';
import { checkAccountPassword } from './accounts.ts';
import { ApiError, type Ctx, required, unixNow } from './context.ts';
import { makeToken, type Params } from './http.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { type Account, limitOf } from './state.ts';
import { bandwidthBytes, diskUsedBytes, inodes, mysqlBytes } from './usage.ts';

export const PHP_VERSIONS = ['ea-php74', 'ea-php80', 'ea-php81', 'ea-php82', 'ea-php83'];
export const PHP_DEFAULT = 'ea-php82';

// ---- LangPHP ----

export function phpInstalled(): unknown {
  return { versions: [...PHP_VERSIONS] };
}

function vhostEntry(account: Account, vhost: string): Record<string, unknown> {
  const set = account.php[vhost] ?? 'inherit';
  return {
    vhost,
    version: set === 'inherit' ? PHP_DEFAULT : set,
    account: account.user,
    account_owner: account.owner,
    documentroot: `/home/${account.user}/public_html`,
    homedir: `/home/${account.user}`,
    main_domain: vhost === account.domain ? 1 : 0,
    is_suspended: account.suspended ? 1 : 0,
    php_fpm: 0,
    php_fpm_pool_parms: {},
    phpversion_source: set === 'inherit' ? { system_default: 1 } : { domain: vhost },
  };
}

export function phpVhostVersions(account: Account, params: Params): unknown {
  const vhost = params.get('vhost');
  if (vhost) {
    if (!(vhost in account.php)) throw new ApiError(`Cannot find vhost ”${vhost}” for user.`);
    return vhostEntry(account, vhost);
  }
  return Object.keys(account.php)
    .sort()
    .map((v) => vhostEntry(account, v));
}

/** php_set_vhost_versions: `version`, `vhost` (repeatable or vhost-1 …). Unknown vhosts fail one by one. */
export function phpSetVhostVersions(account: Account, params: Params): { data: unknown; errors: string[] } {
  const [version = ''] = required({ version: params.get('version') });
  const vhosts = params.all('vhost');
  if (vhosts.length === 0) throw new ApiError('Provide the “vhost” argument.');
  if (version !== 'inherit' && !PHP_VERSIONS.includes(version)) {
    throw new ApiError(`“${version}” is not installed on the system.`);
  }
  const done: string[] = [];
  const errors: string[] = [];
  for (const vhost of vhosts.sort()) {
    if (vhost in account.php) {
      account.php[vhost] = version;
      done.push(vhost);
    } else {
      errors.push(`The user “${account.user}” does not own the vhost “${vhost}”.`);
    }
  }
  return { data: { vhosts: done }, errors };
}

// ---- ResourceUsage ----

export function getUsages(account: Account): unknown {
  const MB = 1024 * 1024;
  const lim = (key: string): number | null => limitOf(account.limits, key);
  const bytesLimit = (key: string): number | null => {
    const mb = lim(key);
    return mb === null || mb === 0 ? null : mb * MB;
  };
  const row = (
    id: string,
    description: string,
    usage: number,
    maximum: number | null,
    formatter: string | null,
    url: string | null,
  ) => ({ id, description, usage, maximum, formatter, url, error: null });
  return [
    row('disk_usage', 'Disk Usage', diskUsedBytes(account), bytesLimit('QUOTA'), 'format_bytes', 'Email/DiskUsage'),
    row('cachedmysqldiskusage', 'MySQL® Disk Usage', mysqlBytes(account), null, 'format_bytes', 'SQL/index'),
    row('filesusage', 'File Usage', inodes(account), null, null, null),
    row('bandwidth', 'Bandwidth', bandwidthBytes(account), bytesLimit('BWLIMIT'), 'format_bytes', 'Stats/bandwidth'),
    row('addon_domains', 'Addon Domains', 0, lim('MAXADDON'), null, 'Domains/addon'),
    row('subdomains', 'Subdomains', 0, lim('MAXSUB'), null, 'Domains/subdomains'),
    row('aliases', 'Aliases', 0, lim('MAXPARK'), null, 'Domains/park'),
    row('email_accounts', 'Email Accounts', account.mailboxes.length, lim('MAXPOP'), null, 'Email/accounts'),
    row('mailing_lists', 'Mailing Lists', 0, lim('MAXLST'), null, 'Mail/lists'),
    row('autoresponders', 'Autoresponders', 0, null, null, 'Email/autoresponders'),
    row('forwarders', 'Forwarders', 0, null, null, 'Email/forwarders'),
    row('email_filters', 'Email Filters', 0, null, null, 'Email/filters'),
    row('ftp_accounts', 'FTP Accounts', 0, lim('MAXFTP'), null, 'FTP/Accounts'),
    row('mysql_databases', 'MySQL® Databases', account.databases.length, lim('MAXSQL'), null, 'SQL/index'),
  ];
}

// ---- Passwd ----

export function changePassword(ctx: Ctx, account: Account, params: Params): null {
  const [oldpass = '', newpass = ''] = required({ oldpass: params.get('oldpass'), newpass: params.get('newpass') });
  if (!verifyPassword(account.password, oldpass)) {
    throw new ApiError('The system could not verify the current password.');
  }
  checkAccountPassword(ctx, account.user, newpass);
  account.password = hashPassword(newpass);
  return null;
}

// ---- DomainInfo ----

export function listDomains(account: Account): unknown {
  return { main_domain: account.domain, addon_domains: [], sub_domains: [], parked_domains: [] };
}

function domainData(ctx: Ctx, account: Account, withRedirect: boolean): Record<string, unknown> {
  const d = account.domain;
  const redirecting = account.sslRedirects.includes(d);
  const cert = account.certs[d];
  return {
    domain: d,
    servername: d,
    serveralias: `mail.${d} www.${d}`,
    documentroot: `/home/${account.user}/public_html`,
    homedir: `/home/${account.user}`,
    user: account.user,
    group: account.user,
    owner: account.owner,
    ip: ctx.settings.ip,
    port: '80',
    hascgi: account.cgi ? '1' : '0',
    usecanonicalname: 'Off',
    phpversion: account.php[d] === 'inherit' ? undefined : account.php[d],
    ...(redirecting ? { ssl_redirect: d } : {}),
    type: 'main_domain',
    status: 'not redirected',
    ...(withRedirect
      ? {
          is_https_redirecting: redirecting ? 1 : 0,
          can_https_redirect: cert && !cert.isSelfSigned && cert.notAfter > unixNow() ? 1 : 0,
          all_aliases_valid: cert && !cert.isSelfSigned ? 1 : 0,
        }
      : {}),
  };
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0';
}

export function domainsData(ctx: Ctx, account: Account, params: Params): unknown {
  const main = domainData(ctx, account, truthy(params.get('return_https_redirect_status')));
  if ((params.get('format') ?? 'hash') === 'list') return [main];
  return {
    main_domain: main,
    addon_domains: [],
    sub_domains: [],
    parked_domains: [],
    ...(truthy(params.get('return_https_redirect_status'))
      ? { parked_with_https_redirects: [], parked_capable_of_https_redirects: [] }
      : {}),
  };
}

export function singleDomainData(ctx: Ctx, account: Account, params: Params): unknown {
  const domain = params.get('domain');
  if (domain === undefined) throw new ApiError('Domain must be passed as a parameter.');
  if (domain.toLowerCase() !== account.domain) throw new ApiError(`Unable to locate the domain: ${domain}`);
  return domainData(ctx, account, truthy(params.get('return_https_redirect_status')));
}

// ---- Tokens ----

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

export function createToken(account: Account, params: Params): unknown {
  const [name = ''] = required({ name: params.get('name') });
  if (!/^[A-Za-z0-9_-]{1,50}$/.test(name)) {
    throw new ApiError('The name may only contain letters, digits, hyphens, and underscores (at most 50).');
  }
  if (account.tokens.some((t) => t.name === name)) throw new ApiError(`An API token named “${name}” already exists.`);
  const token = makeToken();
  const createTime = unixNow();
  account.tokens.push({ name, hash: tokenHash(token), createTime });
  return { name, token, create_time: createTime, expires_at: null, has_full_access: 1 };
}

export function listTokens(account: Account): unknown {
  return account.tokens.map((t) => ({ name: t.name, create_time: t.createTime, expires_at: null, has_full_access: 1 }));
}

export function revokeToken(account: Account, params: Params): number {
  const names = params.all('name');
  if (names.length === 0) throw new ApiError('Provide the “name” argument.');
  const before = account.tokens.length;
  account.tokens = account.tokens.filter((t) => !names.includes(t.name));
  return before - account.tokens.length > 0 ? 1 : 0;
}
