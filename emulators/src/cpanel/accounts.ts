// WHM account functions: createacct (cPanel's username, domain, package and password rules and
// texts), suspendacct / unsuspendacct, removeacct, passwd, changepackage, accountsummary and
// listaccts. A new account gets its DNS zone, a self-signed certificate and a queued AutoSSL run.

import { ApiError, type Ctx, DOMAIN_RE, unixNow } from './context.ts';
import { buildZone } from './dns.ts';
import type { Params } from './http.ts';
import { applyPackage, packageFields, packageNotFound } from './packages.ts';
import { generatePassword, hashPassword, passwordStrength, tooWeakSorryText } from './password.ts';
import { queueAutossl, selfSignedCert } from './ssl.ts';
import { type Account, limitOf } from './state.ts';
import { diskUsedBytes, inodes, megs } from './usage.ts';
import type { WhmAnswer } from './whm-types.ts';

const RESERVED_USERS = new Set([
  'abrt',
  'all',
  'clamav',
  'cpses',
  'cptkt',
  'cphulkd',
  'dbus',
  'dirs',
  'dnsadmin',
  'dovecot',
  'eximstats',
  'files',
  'mailman',
  'modsec',
  'munin',
  'mydns',
  'nobody',
  'postgres',
  'postmaster',
  'proftpd',
  'root',
  'roundcube',
  'shadow',
  'spamassassin',
  'ssl',
  'sys',
  'system',
  'tmp',
  'tomcat',
  'toor',
  'virtfs',
  'virtual',
  'webmaster',
  'whmxfer',
  'mysql',
  'admin',
  'ftp',
  'mail',
  'www',
]);
const RESERVED_PREFIXES = ['test', 'cpmydns', 'cpanel', 'mydns', 'pg_toast', 'pg_temp', 'cpses', 'cptkt', 'cpbackup'];
const RESERVED_SUFFIXES = ['assword'];

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Whostmgr::Accounts::NameConflict`: the checks and texts for a new username. */
function checkUsername(ctx: Ctx, user: string): void {
  if (!/^[a-z][a-z0-9]{0,15}$/.test(user)) throw new ApiError(`“${user}” is not a valid username on this system.`);
  if (
    RESERVED_USERS.has(user) ||
    RESERVED_PREFIXES.some((p) => user.startsWith(p)) ||
    RESERVED_SUFFIXES.some((s) => user.endsWith(s))
  ) {
    throw new ApiError(`“${user}” is a reserved username on this system.`);
  }
  if (ctx.state.accounts.has(user)) throw new ApiError(`This system already has an account named “${user}”.`);
  const size = ctx.settings.prefixSize;
  if (user.length >= size && ctx.state.prefixTaken(user.slice(0, size), size)) {
    throw new ApiError(
      `The name of another account on this server has the same initial ${size} characters as the given username (${user}). Each username’s first ${size} characters must be unique.`,
    );
  }
}

/** Account passwords: strength (createacct/passwd app) and the username rule. */
export function checkAccountPassword(ctx: Ctx, user: string, password: string): void {
  if (password.toLowerCase().includes(user.toLowerCase())) {
    throw new ApiError('Sorry, the password may not contain the username for security reasons.');
  }
  const required = ctx.settings.minPasswordStrength;
  if (passwordStrength(password) < required) throw new ApiError(tooWeakSorryText(required));
}

function startdate(unix: number): string {
  const d = new Date(unix * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCFullYear() % 100)} ${MONTHS[d.getUTCMonth()]} ${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

export function createacct(ctx: Ctx, params: Params): WhmAnswer {
  const user = (params.get('username') ?? params.get('user') ?? '').trim();
  if (user === '') throw new ApiError('No user name supplied: “username” is a required argument.');
  const domain = (params.get('domain') ?? '').trim().toLowerCase().replace(/\.$/, '');
  if (domain === '') throw new ApiError('No domain supplied: “domain” is a required argument.');
  checkUsername(ctx, user);
  if (!DOMAIN_RE.test(domain) || domain.startsWith('www.')) throw new ApiError(`“${domain}” is not a valid domain.`);
  const holder = ctx.state.domainOwner(domain);
  if (holder) {
    // Cpanel::Validate::Component::Domain::HasUserDataDomainsEntry: root is told whose it is.
    throw new ApiError(
      ctx.settings.whmUser === 'root'
        ? `The domain “${domain}” already exists in the userdata for the user “${holder.user}”.`
        : `The domain “${domain}” already exists in the userdata.`,
    );
  }
  const planName = params.get('plan') ?? params.get('pkgname') ?? 'default';
  const pkg = ctx.state.packages.get(planName);
  if (!pkg) throw packageNotFound(planName);
  if (params.has('password') && params.has('pass')) {
    throw new ApiError('Specify either the “password” or the “pass” argument, not both.');
  }
  const given = params.get('password') ?? params.get('pass');
  const password = given === undefined || given === '' ? generatePassword() : given;
  if (given !== undefined && given !== '') checkAccountPassword(ctx, user, password);
  const email = (params.get('contactemail') ?? '').trim();
  if (email !== '' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) {
    throw new ApiError(`“${email}” is not a valid email address.`);
  }
  const limits: Record<string, string> = {};
  applyPackage(limits, pkg);
  // Limits given with the call override the package's (as WHM does for a custom account).
  const overrides = packageFields(params);
  for (const key of Object.keys(limits)) if (overrides[key] !== undefined) limits[key] = overrides[key];
  const now = Date.now();
  const account: Account = {
    user,
    domain,
    ip: ctx.settings.ip,
    owner: params.get('owner') ?? ctx.settings.whmUser,
    email,
    plan: planName,
    password: hashPassword(password),
    suspended: false,
    suspendReason: null,
    suspendTime: null,
    startdate: Math.floor(now / 1000),
    theme: pkg.settings.CPMOD ?? 'jupiter',
    limits,
    hasshell: /^(y|1)$/i.test(params.get('hasshell') ?? pkg.settings.HASSHELL ?? 'n'),
    cgi: /^(y|1)$/i.test(params.get('cgi') ?? pkg.settings.CGI ?? 'y'),
    databases: [],
    dbUsers: [],
    grants: [],
    mailboxes: [],
    php: { [domain]: 'inherit' },
    sslRedirects: [],
    certs: {},
    autosslDueAt: null,
    autosslProblems: [],
    zone: [],
    tokens: [],
    createdAt: now,
  };
  account.zone = buildZone(ctx, account);
  account.certs[domain] = selfSignedCert(account);
  ctx.state.accounts.set(user, account);
  queueAutossl(ctx, account);
  ctx.changed();
  const ns = ctx.settings.nameservers;
  const showpass = /^(y|1)$/i.test(params.get('showpass') ?? '');
  const quota = limitOf(limits, 'QUOTA');
  const raw = [
    'Account Creation Ok',
    '+===================================+',
    '| New Account Info                  |',
    '+===================================+',
    `| Domain: ${domain}`,
    `| Ip: ${account.ip} (n)`,
    `| HasCgi: ${account.cgi ? 'y' : 'n'}`,
    `| UserName: ${user}`,
    `| PassWord: ${showpass ? password : '(hidden)'}`,
    `| CpanelMod: ${account.theme}`,
    '| HomeRoot: /home',
    `| Quota: ${quota === null ? 'unlimited' : `${quota} MB`}`,
    ...ns.map((n, i) => `| NameServer${i + 1}: ${n}`),
    `| Contact Email: ${email}`,
    `| Package: ${planName}`,
    `| Feature List: ${pkg.settings.FEATURELIST ?? 'default'}`,
    `| Language: ${pkg.settings.LANG ?? 'en'}`,
    '+===================================+',
    '...Done',
    '',
  ].join('\n');
  return {
    reason: 'Account Creation Ok',
    raw,
    data: {
      ip: account.ip,
      nameserver: ns[0] ?? null,
      nameserver2: ns[1] ?? null,
      nameserver3: ns[2] ?? null,
      nameserver4: ns[3] ?? null,
      nameservera: null,
      nameservera2: null,
      nameservera3: null,
      nameservera4: null,
      nameserverentry: null,
      nameserverentry2: null,
      nameserverentry3: null,
      nameserverentry4: null,
      package: planName,
    },
  };
}

/** The account, or WHM's UserNotFound text. */
export function accountOf(ctx: Ctx, user: string | undefined): Account {
  const account = ctx.state.accounts.get(user ?? '');
  if (!account) throw new ApiError(`You do not have a user named “${user ?? ''}”.`);
  return account;
}

export function suspendacct(ctx: Ctx, params: Params): WhmAnswer {
  const account = accountOf(ctx, params.get('user'));
  const reason = params.get('reason') ?? '';
  account.suspended = true;
  account.suspendReason = reason === '' ? 'Unknown' : reason;
  account.suspendTime = unixNow();
  ctx.changed();
  return {
    reason: 'OK',
    raw: `Changing Shell to /bin/false...Changing shell for ${account.user}.\nShell changed.\nDone\nLocking Password...Locking password for user ${account.user}.\npasswd: Success\nDone\nSuspending mysql users\nDone\nSuspending outgoing email....Done\nUsing Quota v3 Support\nSuspended document root /home/${account.user}/public_html\n${account.user}'s account has been suspended\n`,
  };
}

export function unsuspendacct(ctx: Ctx, params: Params): WhmAnswer {
  const account = accountOf(ctx, params.get('user'));
  account.suspended = false;
  account.suspendReason = null;
  account.suspendTime = null;
  ctx.changed();
  return {
    reason: 'OK',
    raw: `Changing shell for ${account.user}.\nShell changed.\nUnlocking password for user ${account.user}.\npasswd: Success\nUnsuspending mysql users\nUnsuspending outgoing email....Done\n${account.user}'s account is now active\n`,
  };
}

export function removeacct(ctx: Ctx, params: Params): WhmAnswer {
  const user = params.get('user') || params.get('username');
  if (!user) throw new ApiError('No user name supplied: "user" is a required argument.');
  const account = accountOf(ctx, user);
  ctx.state.accounts.delete(account.user);
  for (const [id, session] of ctx.state.sessions) if (session.user === account.user) ctx.state.sessions.delete(id);
  ctx.changed();
  return {
    reason: `${account.user} account removed`,
    raw: `Running pre removal script (/usr/local/cpanel/scripts/prekillacct)......Done\nKilling all processes owned by user......Done\nRemoving Databases......Done\nRemoving User & Group......Done\nRemoving DNS Entries......Done\nRemoving Web Logs......Done\nRemoving Mail and Service Configs......Done\nAccount Removal Complete!!!\n${account.user} account removed\n`,
  };
}

export function passwd(ctx: Ctx, params: Params): WhmAnswer {
  const account = accountOf(ctx, params.get('user'));
  const password = params.get('password') ?? params.get('pass');
  if (password === undefined || password === '') {
    throw new ApiError('No password supplied: “password” is a required argument.');
  }
  checkAccountPassword(ctx, account.user, password);
  account.password = hashPassword(password);
  ctx.changed();
  const dbToo = (params.get('db_pass_update') ?? '1') !== '0';
  return {
    reason: `Password changed for user ${account.user}`,
    raw: `Password for ${account.user} has been changed.\n`,
    data: { app: ['system', 'ftp', 'mail', ...(dbToo ? ['MySQL'] : [])] },
  };
}

export function changepackage(ctx: Ctx, params: Params): WhmAnswer {
  const user = params.get('user');
  const pkgName = params.get('pkg');
  if (!user) throw new ApiError('Provide the “user” parameter.');
  if (!pkgName) throw new ApiError('Provide the “pkg” parameter.');
  const account = accountOf(ctx, user);
  const pkg = ctx.state.packages.get(pkgName);
  if (!pkg) throw packageNotFound(pkgName);
  const before = { ...account.limits };
  applyPackage(account.limits, pkg);
  account.plan = pkgName;
  ctx.changed();
  const lines = Object.keys(account.limits)
    .filter((k) => before[k] !== account.limits[k])
    .map((k) => `Changing ${k} from ${before[k]} to ${account.limits[k]}`);
  return { reason: 'OK', raw: `${lines.join('\n')}\nAccount Upgrade/Downgrade Complete for ${account.user}\n` };
}

/** One `acct` entry of listaccts / accountsummary. */
export function acctEntry(ctx: Ctx, account: Account): Record<string, unknown> {
  const quota = limitOf(account.limits, 'QUOTA');
  const used = diskUsedBytes(account);
  const lim = (key: string) => account.limits[key] ?? 'unlimited';
  return {
    user: account.user,
    domain: account.domain,
    ip: account.ip,
    ipv6: [],
    plan: account.plan,
    owner: account.owner,
    email: account.email === '' ? '*unknown*' : account.email,
    suspended: account.suspended ? 1 : 0,
    suspendreason: account.suspended ? (account.suspendReason ?? 'Unknown') : 'not suspended',
    suspendtime: account.suspendTime,
    is_locked: 0,
    diskused: used > 0 ? megs(used) : 'none',
    disklimit: quota === null ? 'unlimited' : `${quota}M`,
    inodesused: inodes(account),
    inodeslimit: 'unlimited',
    startdate: startdate(account.startdate),
    unix_startdate: account.startdate,
    theme: account.theme,
    shell: account.hasshell ? '/bin/bash' : '/usr/local/cpanel/bin/noshell',
    partition: 'home',
    maxpop: lim('MAXPOP'),
    maxsql: lim('MAXSQL'),
    maxaddons: lim('MAXADDON'),
    maxparked: lim('MAXPARK'),
    maxsub: lim('MAXSUB'),
    maxftp: lim('MAXFTP'),
    maxlst: lim('MAXLST'),
    max_emailacct_quota: lim('MAX_EMAILACCT_QUOTA'),
    max_email_per_hour: 'unlimited',
    max_defer_fail_percentage: 'unlimited',
    outgoing_mail_suspended: 0,
    outgoing_mail_hold: 0,
    mailbox_format: 'maildir',
    backup: 0,
    legacy_backup: 0,
    temporary: 0,
    has_backup: 0,
    child_nodes: [],
    uid: 1000 + [...ctx.state.accounts.keys()].indexOf(account.user) + 1,
  };
}

export function accountsummary(ctx: Ctx, params: Params): WhmAnswer {
  const user = params.get('user');
  const domain = params.get('domain');
  if (user === undefined && domain === undefined) {
    throw new ApiError('You must specify a user or domain to get a summary of.\n');
  }
  const account = user !== undefined ? ctx.state.accounts.get(user) : ctx.state.domainOwner(domain ?? '');
  if (!account) throw new ApiError('Account does not exist.', { acct: [] });
  return { data: { acct: [acctEntry(ctx, account)] } };
}

export function listaccts(ctx: Ctx, params: Params): WhmAnswer {
  const searchtype = params.get('searchtype');
  if (searchtype !== undefined && !/^(domain|ip|user|package|owner|domain_and_user)$/.test(searchtype)) {
    throw new ApiError('Unknown search type.');
  }
  const search = params.get('search');
  const exact = params.get('searchmethod') === 'exact';
  let matcher: (value: string) => boolean = () => true;
  if (search !== undefined && search !== '') {
    if (exact) matcher = (value) => value === search;
    else {
      let re: RegExp;
      try {
        re = new RegExp(search, 'i');
      } catch {
        re = new RegExp(search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
      }
      matcher = (value) => re.test(value);
    }
  }
  const fields = (a: Account): string[] => {
    switch (searchtype) {
      case 'domain':
        return [a.domain];
      case 'ip':
        return [a.ip];
      case 'package':
        return [a.plan];
      case 'owner':
        return [a.owner];
      case 'domain_and_user':
        return [a.domain, a.user];
      default:
        return [a.user];
    }
  };
  const want = params
    .get('want')
    ?.split(',')
    .filter((w) => w !== '');
  const list = [...ctx.state.accounts.values()]
    .filter((a) => fields(a).some(matcher))
    .sort((a, b) => a.user.localeCompare(b.user))
    .map((a) => {
      const entry = acctEntry(ctx, a);
      return want ? Object.fromEntries(want.map((w) => [w, entry[w] ?? null])) : entry;
    });
  // Real WHM answers no `data` at all when nothing matches.
  return list.length === 0 ? {} : { data: { acct: list } };
}
