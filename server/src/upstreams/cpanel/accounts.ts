// The server's accounts through WHM API 1 (upstreams.md §3.4): packages, accounts found by
// username or main domain (listaccts), createacct made safe to repeat after a lost answer (an
// existing account is ours only when it carries the contact e-mail we created it with),
// suspension, removal (already gone is success), passwords, one-time cPanel sessions, the
// server's nameservers, and `version` as the health probe.

import { UpstreamError } from '../errors.ts';
import type { WebAccountInfo, WebAccountSpec, WebPackageSpec } from '../web-panel.ts';
import type { CpanelClient, Params } from './client.ts';
import { isRow, rows, strings, text, toAccountInfo } from './mapping.ts';

/** The fields `findAccount` reads (WHM sends only these when it honours `want`). */
const WANT = 'user,domain,plan,suspended,suspendreason,ip,diskused,disklimit,email';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const isRefusal = (error: unknown): error is UpstreamError =>
  error instanceof UpstreamError && error.kind === 'rejected';

export async function ping(client: CpanelClient): Promise<{ version: string }> {
  const data = await client.whm('version');
  const version = isRow(data) ? text(data.version) : '';
  if (!version) throw client.garbled('a version');
  return { version };
}

/** WHM's package settings for a spec. `0` means unlimited for mailboxes and the mailbox quota (web-panel.ts). */
function packageParams(spec: WebPackageSpec): Record<string, string> {
  const unlimitedIfZero = (n: number) => (n === 0 ? 'unlimited' : String(n));
  return {
    // WHM's own quota semantics: 0 is unlimited.
    quota: String(spec.diskMb),
    maxpop: unlimitedIfZero(spec.maxMailboxes),
    maxsql: String(spec.maxDatabases),
    maxaddon: String(spec.maxAddonDomains),
    maxsub: String(spec.maxSubdomains),
    max_emailacct_quota: unlimitedIfZero(spec.maxMailboxQuotaMb),
  };
}

/** A listpkgs row's value of a setting, whatever case WHM wrote its key in (`QUOTA`, `quota`). */
function setting(row: Record<string, unknown>, key: string): string {
  const found = Object.entries(row).find(([k]) => k.toLowerCase() === key);
  return found ? text(found[1]).toLowerCase() : '';
}

export async function ensurePackage(client: CpanelClient, spec: WebPackageSpec): Promise<void> {
  const wanted = packageParams(spec);
  const data = await client.whm('listpkgs');
  const existing = rows(isRow(data) ? data.pkg : undefined).find((p) => text(p.name) === spec.name);
  const params: Params = { name: spec.name, ...wanted };
  if (existing) {
    const differs = Object.entries(wanted).some(([key, value]) => setting(existing, key) !== value.toLowerCase());
    if (differs) await client.whm('editpkg', params, { write: true, area: 'package' });
    return;
  }
  try {
    await client.whm('addpkg', params, { write: true, area: 'package' });
  } catch (error) {
    // Created meanwhile (our own earlier call whose answer was lost): make it what we want.
    if (!(isRefusal(error) && error.reason === 'exists')) throw error;
    await client.whm('editpkg', params, { write: true, area: 'package' });
  }
}

/**
 * The accounts listaccts finds for an exact search. A server that ignores `searchmethod` reads
 * the text as a regular expression, which for a username or a domain still matches it (a dot
 * matches itself too): exact matches are picked by the callers either way.
 */
async function listAccounts(client: CpanelClient, searchtype: 'user' | 'domain', search: string) {
  const data = await client.whm('listaccts', {
    searchtype,
    search: search.toLowerCase(),
    searchmethod: 'exact',
    want: WANT,
  });
  return rows(isRow(data) ? data.acct : undefined).map(toAccountInfo);
}

export async function findAccount(client: CpanelClient, username: string): Promise<WebAccountInfo | null> {
  const found = await listAccounts(client, 'user', username);
  return found.find((a) => same(a.username, username)) ?? null;
}

export async function findAccountByDomain(client: CpanelClient, domain: string): Promise<WebAccountInfo | null> {
  const found = await listAccounts(client, 'domain', domain);
  return found.find((a) => same(a.domain, domain)) ?? null;
}

function taken(client: CpanelClient, spec: WebAccountSpec, holder: WebAccountInfo): UpstreamError {
  const said = `The username “${spec.username}” is taken by the account of ${holder.domain}.`;
  return new UpstreamError('rejected', `${client.label}: WHM createacct was refused (${said})`, {
    retryable: false,
    detail: said,
    reason: 'exists',
  });
}

/** The domain is on the server under another account; `said` is the panel's words when it refused. */
function domainTaken(client: CpanelClient, spec: WebAccountSpec, said?: string): UpstreamError {
  const detail = said ?? `The domain “${spec.domain}” is already the domain of another account on the server.`;
  return new UpstreamError('rejected', `${client.label}: WHM createacct was refused (${detail})`, {
    retryable: false,
    detail,
    reason: 'domain_taken',
  });
}

/**
 * Whether `account` is the one `spec` describes: its username, its domain and the contact e-mail
 * the platform gave it. The domain alone proves nothing (staff, a migration or another billing
 * system may have made an account for it), and neither does a username derived from the domain.
 */
function isOurs(account: WebAccountInfo, spec: WebAccountSpec): boolean {
  return (
    same(account.username, spec.username) &&
    same(account.domain, spec.domain) &&
    spec.contactEmail !== '' &&
    account.contactEmail !== null &&
    same(account.contactEmail, spec.contactEmail)
  );
}

/**
 * Whether a createacct refusal is about the domain: WHM names the domain when it refuses it
 * ("The domain “x” already exists in the userdata…", "A DNS entry for “x” already exists…"), and a
 * username never contains a dot, so a refusal naming the domain is not about the username. This
 * also covers a domain another account holds as an addon or parked domain, which listaccts does
 * not find by domain, and accounts of other resellers, which a reseller's token does not list.
 */
const namesDomain = (error: UpstreamError, domain: string) =>
  error.reason === 'exists' && (error.detail ?? '').toLowerCase().includes(domain.toLowerCase());

export async function createAccount(client: CpanelClient, spec: WebAccountSpec): Promise<WebAccountInfo> {
  const existing = await findAccount(client, spec.username);
  if (existing) {
    if (isOurs(existing, spec)) return existing;
    throw taken(client, spec, existing);
  }
  if (await findAccountByDomain(client, spec.domain)) throw domainTaken(client, spec);
  try {
    await client.whm(
      'createacct',
      {
        username: spec.username,
        domain: spec.domain,
        plan: spec.package,
        password: spec.password,
        contactemail: spec.contactEmail,
      },
      { write: true, slow: true, area: 'account' },
    );
  } catch (error) {
    // An earlier attempt may have finished meanwhile (its answer lost): that account is ours
    // when it carries our marker; otherwise the refusal says whether the name or the domain is taken.
    if (!isRefusal(error)) throw error;
    const again = await findAccount(client, spec.username).catch(() => null);
    if (again && isOurs(again, spec)) return again;
    if (namesDomain(error, spec.domain)) throw domainTaken(client, spec, error.detail);
    throw error;
  }
  const created = await findAccount(client, spec.username);
  if (!created) throw client.garbled(`a listing of the account ${spec.username} it just created`);
  return created;
}

export async function suspend(client: CpanelClient, username: string, reason: string): Promise<void> {
  await client.whm('suspendacct', { user: username, reason }, { write: true, slow: true, area: 'account' });
}

export async function unsuspend(client: CpanelClient, username: string): Promise<void> {
  await client.whm('unsuspendacct', { user: username }, { write: true, slow: true, area: 'account' });
}

export async function removeAccount(client: CpanelClient, username: string): Promise<void> {
  if (!(await findAccount(client, username))) return;
  try {
    await client.whm('removeacct', { user: username }, { write: true, slow: true, area: 'account' });
  } catch (error) {
    // Removed meanwhile (an earlier attempt whose answer was lost): gone is what was asked.
    if (isRefusal(error) && !(await findAccount(client, username))) return;
    throw error;
  }
}

export async function setPassword(client: CpanelClient, username: string, password: string): Promise<void> {
  await client.whm('passwd', { user: username, password }, { write: true, slow: true, area: 'account' });
}

export async function ssoUrl(client: CpanelClient, username: string): Promise<string> {
  const data = await client.whm(
    'create_user_session',
    { user: username, service: 'cpaneld' },
    { write: true, area: 'account' },
  );
  const url = isRow(data) ? text(data.url) : '';
  if (!/^https?:\/\//.test(url)) throw client.garbled('a session URL');
  return url;
}

export async function nameservers(client: CpanelClient): Promise<string[]> {
  const data = await client.whm('get_nameserver_config');
  if (!isRow(data) || !Array.isArray(data.nameservers)) throw client.garbled('a nameserver list');
  return strings(data.nameservers).filter((ns) => ns.trim() !== '');
}
