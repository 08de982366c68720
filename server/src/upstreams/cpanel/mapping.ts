// cPanel's answers → WebPanel types (upstreams.md §3.4). cPanel sends numbers and flags as
// numbers or strings ("1", "0"), sizes as "120M" / "none" / "unlimited", names and data of a
// zone as base64; these helpers read them all and give a neutral value for a missing field.

import type { WebAccountInfo, WebDatabase, WebDatabaseUser, WebDnsRecord, WebMailbox, WebUsage } from '../web-panel.ts';

type Row = Record<string, unknown>;

const MB = 1024 * 1024;

export const isRow = (value: unknown): value is Row =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A list of rows (anything that is not a row is dropped). */
export const rows = (value: unknown): Row[] => (Array.isArray(value) ? value.filter(isRow) : []);

export const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';

export const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** A number or a numeric string; `fallback` otherwise. */
export function num(value: unknown, fallback = 0): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return fallback;
}

/** cPanel's flags: 1/0, "1"/"0", true/false. */
export const flag = (value: unknown): boolean => value === true || num(value) !== 0;

/**
 * A size as WHM writes it ("120M", "1.5G", "512K", "0", a bare number of MB) in MB; `null` for
 * "unlimited" (and for nothing at all when `unlimitedWhenMissing`). "none" is 0.
 */
export function sizeMb(value: unknown, unlimitedWhenMissing = false): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const raw = text(value).trim();
  if (raw === '') return unlimitedWhenMissing ? null : 0;
  if (/^unlimited$/i.test(raw)) return null;
  if (/^none$/i.test(raw)) return 0;
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)B?$/i.exec(raw);
  if (!match) return 0;
  const scale: Record<string, number> = { '': 1, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };
  return Number(match[1]) * (scale[(match[2] ?? '').toUpperCase()] ?? 1);
}

/** A `listaccts` / `accountsummary` row (§3.4). */
export function toAccountInfo(acct: Row): WebAccountInfo {
  const suspended = flag(acct.suspended);
  const reason = text(acct.suspendreason);
  return {
    username: text(acct.user),
    domain: text(acct.domain),
    package: text(acct.plan),
    suspended,
    // WHM says "not suspended" for an active account.
    suspendReason: suspended ? reason || null : null,
    ip: text(acct.ip),
    diskUsedMb: sizeMb(acct.diskused) ?? 0,
    diskLimitMb: sizeMb(acct.disklimit, true),
    contactEmail: contactEmail(acct.email),
  };
}

/** WHM lists an account without a contact e-mail as `*unknown*`. */
function contactEmail(value: unknown): string | null {
  const email = text(value).trim();
  return email === '' || email === '*unknown*' ? null : email;
}

/** `Mysql::list_databases` row. */
export const toDatabase = (row: Row): WebDatabase => ({
  name: text(row.database),
  users: strings(row.users),
  diskBytes: num(row.disk_usage),
});

/** `Mysql::list_users` row. */
export const toDatabaseUser = (row: Row): WebDatabaseUser => ({
  name: text(row.user),
  databases: strings(row.databases),
});

/**
 * `Email::list_pops_with_disk` row: `_diskused`/`_diskquota` are bytes (the quota 0 when
 * unlimited), `diskused`/`diskquota` MB or "unlimited".
 */
export function toMailbox(row: Row): WebMailbox {
  const used = row._diskused !== undefined ? num(row._diskused) : (sizeMb(row.diskused) ?? 0) * MB;
  let quota: number | null;
  if (/^unlimited$/i.test(text(row.diskquota)) || /^unlimited$/i.test(text(row._diskquota))) quota = null;
  else if (row._diskquota !== undefined) quota = num(row._diskquota) > 0 ? num(row._diskquota) : null;
  else quota = num(row.diskquota) > 0 ? num(row.diskquota) * MB : null;
  const email = text(row.email) || (text(row.user) && text(row.domain) ? `${text(row.user)}@${text(row.domain)}` : '');
  return {
    email,
    diskUsedBytes: Math.round(used),
    quotaBytes: quota === null ? null : Math.round(quota),
    suspendedLogin: flag(row.suspended_login),
  };
}

const UNITS: Record<string, WebUsage['unit']> = { format_bytes: 'bytes', bytes: 'bytes', percent: 'percent' };

/** `ResourceUsage::get_usages` row: `maximum` null = unlimited, the unit from `formatter`. */
export const toUsage = (row: Row): WebUsage => ({
  id: text(row.id),
  description: text(row.description),
  usage: num(row.usage),
  maximum: row.maximum === null || row.maximum === undefined || text(row.maximum) === '' ? null : num(row.maximum),
  unit: UNITS[text(row.formatter)] ?? null,
});

const unbase64 = (value: unknown): string => Buffer.from(text(value), 'base64').toString('utf8');

/** `DNS::parse_zone` entries of type `record`, names and data decoded (comments and controls are left out). */
export function toDnsRecords(entries: unknown): WebDnsRecord[] {
  return rows(entries)
    .filter((entry) => entry.type === 'record')
    .map((entry) => ({
      line: num(entry.line_index),
      name: unbase64(entry.dname_b64),
      ttl: num(entry.ttl),
      type: text(entry.record_type),
      data: (Array.isArray(entry.data_b64) ? entry.data_b64 : []).map(unbase64),
    }));
}
