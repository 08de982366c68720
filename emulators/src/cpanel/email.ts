// UAPI Email: mailboxes of one account (add_pop, delete_pop, passwd_pop, edit_pop_quota,
// list_pops_with_disk) with the package's MAXPOP and MAX_EMAILACCT_QUOTA, the mailbox ("virtual")
// password strength, and usage figures that grow a little over time. Texts follow cPanel's
// wording where known; Cpanel::API::Email is not in the source snapshot (upstreams.md §3.4).

import { ApiError, type Ctx, required } from './context.ts';
import type { Params } from './http.ts';
import { hashPassword, passwordStrength, tooWeakSorryText } from './password.ts';
import { type Account, limitOf, type Mailbox } from './state.ts';
import { humanBytes, mailboxBytes } from './usage.ts';

const MB = 1024 * 1024;
const DEFAULT_QUOTA_MB = 1024;

/** `email` as a local part (with `domain`) or a full address. */
function address(account: Account, params: Params): { user: string; domain: string } {
  const [email = ''] = required({ email: params.get('email') });
  let user = email.toLowerCase();
  let domain = (params.get('domain') ?? '').toLowerCase();
  const at = user.indexOf('@');
  if (at >= 0) {
    domain ||= user.slice(at + 1);
    user = user.slice(0, at);
  }
  if (domain === '') domain = account.domain;
  if (domain !== account.domain) throw new ApiError(`You do not control the domain “${domain}”.`);
  if (!/^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/.test(user) || user.length > 64) {
    throw new ApiError(`“${user}@${domain}” is not a valid email address.`);
  }
  return { user, domain };
}

function find(account: Account, user: string, domain: string): Mailbox {
  const box = account.mailboxes.find((m) => m.user === user && m.domain === domain);
  if (!box) throw new ApiError(`The account ${user}@${domain} does not exist.`);
  return box;
}

function checkMailPassword(ctx: Ctx, password: string): void {
  const min = ctx.settings.minPasswordStrength;
  if (passwordStrength(password) < min) throw new ApiError(tooWeakSorryText(min));
}

/** `quota` in MB: 0 or "unlimited" for no quota, capped by the package's MAX_EMAILACCT_QUOTA. */
function quotaMb(account: Account, given: string | undefined): number {
  const max = limitOf(account.limits, 'MAX_EMAILACCT_QUOTA');
  if (given === undefined || given === '') return max === null ? DEFAULT_QUOTA_MB : Math.min(DEFAULT_QUOTA_MB, max);
  const unlimited = /^unlimited$/i.test(given) || given === '0';
  if (!unlimited && !/^\d+(\.\d+)?$/.test(given)) throw new ApiError(`The quota “${given}” is not valid.`);
  const mb = unlimited ? 0 : Math.ceil(Number(given));
  if (max !== null && (mb === 0 || mb > max)) {
    throw new ApiError(`The quota cannot exceed the maximum allowed quota of ${max} MB for this account.`);
  }
  return mb;
}

export function addPop(ctx: Ctx, account: Account, params: Params): string {
  const { user, domain } = address(account, params);
  const [password = ''] = required({ password: params.get('password') });
  if (account.mailboxes.some((m) => m.user === user && m.domain === domain)) {
    throw new ApiError(`The account ${user}@${domain} already exists!`);
  }
  const max = limitOf(account.limits, 'MAXPOP');
  if (max !== null && account.mailboxes.length >= max) {
    throw new ApiError(`You cannot create more than ${max} email ${max === 1 ? 'account' : 'accounts'}.`);
  }
  const quota = quotaMb(account, params.get('quota'));
  checkMailPassword(ctx, password);
  account.mailboxes.push({
    email: `${user}@${domain}`,
    user,
    domain,
    quotaMb: quota,
    password: hashPassword(password),
    createdAt: Date.now(),
    baseBytes: 4096 + Math.floor(Math.random() * 8192),
  });
  return `${user}+${domain}`;
}

export function deletePop(account: Account, params: Params): null {
  const { user, domain } = address(account, params);
  find(account, user, domain);
  account.mailboxes = account.mailboxes.filter((m) => !(m.user === user && m.domain === domain));
  return null;
}

export function passwdPop(ctx: Ctx, account: Account, params: Params): null {
  const { user, domain } = address(account, params);
  const [password = ''] = required({ password: params.get('password') });
  const box = find(account, user, domain);
  checkMailPassword(ctx, password);
  box.password = hashPassword(password);
  return null;
}

export function editPopQuota(account: Account, params: Params): null {
  const { user, domain } = address(account, params);
  const [given = ''] = required({ quota: params.get('quota') });
  const box = find(account, user, domain);
  box.quotaMb = quotaMb(account, given);
  return null;
}

function entry(box: Mailbox, now: number): Record<string, unknown> {
  const used = mailboxBytes(box, now);
  const quotaBytes = box.quotaMb * MB;
  const percent = quotaBytes > 0 ? (100 * used) / quotaBytes : 0;
  return {
    email: box.email,
    login: box.email,
    user: box.user,
    domain: box.domain,
    diskused: Number((used / MB).toFixed(2)),
    diskquota: box.quotaMb > 0 ? box.quotaMb : 'unlimited',
    txtdiskquota: box.quotaMb > 0 ? box.quotaMb : 'unlimited',
    diskusedpercent: Math.round(percent),
    diskusedpercent20: Math.round(percent / 5) * 5,
    diskusedpercent_float: Number(percent.toFixed(2)),
    humandiskused: humanBytes(used),
    humandiskquota: box.quotaMb > 0 ? humanBytes(quotaBytes) : 'None',
    _diskused: used,
    _diskquota: quotaBytes,
    mtime: Math.floor(now / 1000),
    suspended_login: 0,
    suspended_incoming: 0,
    suspended_outgoing: 0,
    hold_outgoing: 0,
    has_suspended: 0,
  };
}

export function listPopsWithDisk(account: Account, params: Params): unknown {
  const domain = params.get('domain')?.toLowerCase();
  const email = params.get('email')?.toLowerCase();
  const regex = params.get('regex');
  let re: RegExp | null = null;
  if (regex) {
    try {
      re = new RegExp(regex, 'i');
    } catch {
      throw new ApiError(`“${regex}” is not a valid regular expression.`);
    }
  }
  const now = Date.now();
  return account.mailboxes
    .filter((m) => !domain || m.domain === domain)
    .filter((m) => !email || m.email === email || m.user === email)
    .filter((m) => !re || re.test(m.email))
    .sort((a, b) => a.email.localeCompare(b.email))
    .map((m) => entry(m, now));
}
