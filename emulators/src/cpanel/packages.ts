// WHM hosting packages (`addpkg`, `editpkg`, `killpkg`, `listpkgs`, `getpkginfo`): lower-case
// parameters in, the package file's upper-case keys out, 'unlimited' where a limit is off.
// Editing a package applies it to the accounts on it, as WHM does.

import { ApiError, type Ctx } from './context.ts';
import type { Params } from './http.ts';
import { DEFAULT_PACKAGE, LIMIT_KEYS, type Package } from './state.ts';
import type { WhmAnswer } from './whm-types.ts';

/** Parameter → package key, with the kind of value it takes. */
const FIELDS: Record<string, { key: string; kind: 'limit' | 'yn' | 'text' }> = {
  quota: { key: 'QUOTA', kind: 'limit' },
  bwlimit: { key: 'BWLIMIT', kind: 'limit' },
  maxpop: { key: 'MAXPOP', kind: 'limit' },
  maxsql: { key: 'MAXSQL', kind: 'limit' },
  maxaddon: { key: 'MAXADDON', kind: 'limit' },
  maxsub: { key: 'MAXSUB', kind: 'limit' },
  maxpark: { key: 'MAXPARK', kind: 'limit' },
  maxftp: { key: 'MAXFTP', kind: 'limit' },
  maxlst: { key: 'MAXLST', kind: 'limit' },
  max_emailacct_quota: { key: 'MAX_EMAILACCT_QUOTA', kind: 'limit' },
  max_email_per_hour: { key: 'MAX_EMAIL_PER_HOUR', kind: 'limit' },
  max_defer_fail_percentage: { key: 'MAX_DEFER_FAIL_PERCENTAGE', kind: 'limit' },
  cgi: { key: 'CGI', kind: 'yn' },
  hasshell: { key: 'HASSHELL', kind: 'yn' },
  ip: { key: 'IP', kind: 'yn' },
  digestauth: { key: 'DIGESTAUTH', kind: 'yn' },
  featurelist: { key: 'FEATURELIST', kind: 'text' },
  language: { key: 'LANG', kind: 'text' },
  cpmod: { key: 'CPMOD', kind: 'text' },
};

/** Read the package fields present in the parameters; throws the WHM validation text on bad values. */
export function packageFields(params: Params): Record<string, string> {
  const out: Record<string, string> = {};
  const errors: string[] = [];
  for (const [param, { key, kind }] of Object.entries(FIELDS)) {
    const value = params.get(param);
    if (value === undefined) continue;
    if (kind === 'limit') {
      if (/^unlimited$/i.test(value)) out[key] = 'unlimited';
      else if (/^\d+$/.test(value)) out[key] = String(Number(value));
      else errors.push(`Invalid value “${value}” for the “${param}” setting.`);
    } else if (kind === 'yn') {
      out[key] = /^(y|1|yes|on)$/i.test(value) ? 'y' : 'n';
    } else {
      out[key] = value;
    }
  }
  if (errors.length > 0) throw new ApiError(`${errors.join('\n')}\n`);
  return out;
}

export function packageNotFound(name: string): ApiError {
  return new ApiError(`The package “${name}” does not exist.`);
}

function packageName(params: Params): string {
  const name = params.get('name') ?? params.get('pkgname');
  if (name === undefined || name.trim() === '') {
    throw new ApiError('No package supplied: “pkgname” or “name” is a required argument.');
  }
  if (/[/\\\n\r\0]|^\.|\s$/.test(name) || name.length > 64) {
    throw new ApiError(`“${name}” is not a valid package name.`);
  }
  return name;
}

export function addpkg(ctx: Ctx, params: Params): WhmAnswer {
  const name = packageName(params);
  if (ctx.state.packages.has(name)) {
    throw new ApiError(`The package “${name}” already exists. If you wish to make changes, please edit the package.`);
  }
  const settings = { ...DEFAULT_PACKAGE.settings, ...packageFields(params) };
  ctx.state.packages.set(name, { name, settings });
  ctx.changed();
  return { data: { pkg: name }, reason: 'OK' };
}

export function editpkg(ctx: Ctx, params: Params): WhmAnswer {
  const name = packageName(params);
  const pkg = ctx.state.packages.get(name);
  if (!pkg) throw packageNotFound(name);
  Object.assign(pkg.settings, packageFields(params));
  for (const account of ctx.state.accounts.values()) {
    if (account.plan === name) applyPackage(account.limits, pkg);
  }
  ctx.changed();
  return { data: { pkg: name }, reason: 'OK' };
}

export function killpkg(ctx: Ctx, params: Params): WhmAnswer {
  const name = params.get('pkgname') ?? params.get('name') ?? '';
  if (!ctx.state.packages.has(name)) throw packageNotFound(name);
  ctx.state.packages.delete(name);
  ctx.changed();
  return { reason: 'OK' };
}

export function listpkgs(ctx: Ctx): WhmAnswer {
  const pkg = [...ctx.state.packages.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => ({ name: p.name, ...p.settings }));
  return { data: { pkg } };
}

export function getpkginfo(ctx: Ctx, params: Params): WhmAnswer {
  const name = params.get('pkg') ?? '';
  const pkg = ctx.state.packages.get(name);
  if (!pkg) throw packageNotFound(name);
  const info: Record<string, string | number | null> = { ...pkg.settings };
  for (const key of [...LIMIT_KEYS, 'MAXTEAMUSERS']) {
    if (info[key] === undefined || /^unlimited$/i.test(String(info[key]))) info[key] = null;
  }
  for (const key of ['CGI', 'HASSHELL', 'IP']) info[key] = /[yY1]/.test(String(info[key] ?? '')) ? 1 : 0;
  info.FRONTPAGE = 0;
  return { data: { pkg: info } };
}

/** Copy a package's limits into an account's cpuser limits. */
export function applyPackage(limits: Record<string, string>, pkg: Package): void {
  for (const key of LIMIT_KEYS) limits[key] = pkg.settings[key] ?? 'unlimited';
}
