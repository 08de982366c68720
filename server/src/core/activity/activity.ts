// The activity log a customer reads (issue 36, CONTRACT §11; migration 0029). Every source of an
// event calls `recordActivity` with the executor it changes the account with: inside the event's
// own transaction when the event is one (an order, a deposit decision, a token, a 2FA change, a
// password change), so an event is in the log exactly when it happened; right after a sign-in
// attempt (core/auth/sign-in-activity.ts). Rows are never updated (the table refuses it); the
// maintenance sweep deletes those older than ACTIVITY_RETENTION_DAYS.
//
// What a row may hold: ids, public ids, amounts, names the customer chose and hints (the first
// characters of a token, as its list shows them). Never a password, a code, a token, a cookie or a
// secret: `details` keys that name one are refused here, whatever the caller meant.

import type { Kysely } from 'kysely';
import { pageOf } from '../../db/page.ts';
import type { ActivityActor, ActivityRow, DB } from '../../db/tables.ts';
import type { AuditActor } from '../audit/actor.ts';

/**
 * Every type of event, the one list the route's filter and the OpenAPI document read. Types of
 * features built elsewhere are named here so the filter knows them: passkey_* (passkeys),
 * email_changed (an e-mail change), export_* and deletion_* (the account's export and deletion).
 */
export const ACTIVITY_TYPES = [
  'sign_in',
  'sign_in_failed',
  'two_factor_enabled',
  'two_factor_disabled',
  'two_factor_recovery_regenerated',
  'two_factor_reset',
  'passkey_added',
  'passkey_removed',
  'password_changed',
  'email_changed',
  'token_created',
  'token_revoked',
  'order_placed',
  'payment',
  'deposit_created',
  'deposit_approved',
  'deposit_rejected',
  'deposit_refunded',
  'sso',
  'console',
  'session_revoked',
  'export_requested',
  'export_ready',
  'export_downloaded',
  'deletion_scheduled',
  'deletion_cancelled',
  'staff_account_suspended',
  'staff_account_unsuspended',
  'staff_email_verified',
  'staff_wallet_credited',
  'staff_wallet_refunded',
  'staff_wallet_debited',
  'staff_invoice_credited',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** A year: older rows are deleted by the maintenance sweep. */
export const ACTIVITY_RETENTION_DAYS = 365;

/** The name a customer sees for an action taken with the staff CLI (never the operator's login). */
export const STAFF_NAME = 'operator';

/** Who did it, and from where (the client's address; none for staff and the platform). */
export interface Who {
  actor: ActivityActor;
  ip: string | null;
  staffName: string | null;
  /**
   * A staff change to record in the audit log too (core/audit/audit.ts `auditAs`): set by the
   * staff CLI (`byOperator`) and the staff console (`byStaffMember`); services that take a `Who`
   * write the audit row in the change's transaction when it is there.
   */
  audit?: AuditActor;
}

/** The platform on its own: the billing cycle, a gateway's webhook, a statement reconciliation. */
export const SYSTEM: Who = Object.freeze({ actor: 'system', ip: null, staffName: null });

/** The customer, from `ip` (as the app reads it behind its trusted proxies). */
export const byClient = (ip: string | null): Who => ({ actor: 'self', ip, staffName: null });

/** Hostplane staff (the staff CLI). */
export const byStaff = (name: string = STAFF_NAME): Who => ({ actor: 'staff', ip: null, staffName: name });

/**
 * Who a deposit's reviewer string names: `razorpay` (the gateway's confirmation) and
 * `reconciliation:…` (a bank statement's import) are the platform; anything else a staff member.
 */
export function whoOfReviewer(reviewer: string): Who {
  return reviewer === 'razorpay' || reviewer.startsWith('reconciliation') ? SYSTEM : byStaff();
}

type DetailValue = string | number | boolean | null | string[] | number[];

export interface ActivityEntry {
  accountId: number;
  type: ActivityType;
  who: Who;
  /** One sentence a customer reads. */
  summary: string;
  details?: Record<string, DetailValue>;
  at: Date;
}

/** Keys that would name a secret (a `token_id` or `recovery_codes_left` is fine; `token` or `code` is not). */
const SECRET_KEY = /pass(word|phrase)?$|secret|cookie|^code$|_code$|^token$|^otp|session_id$|signature/i;

/** Append one event to the account's log, with `db` (the event's own transaction when it has one). */
export async function recordActivity(db: Kysely<DB>, entry: ActivityEntry): Promise<void> {
  const details = entry.details ?? {};
  for (const key of Object.keys(details)) {
    if (SECRET_KEY.test(key)) throw new Error(`activity ${entry.type}: "${key}" may not be kept in the log`);
  }
  await db
    .insertInto('account_activity')
    .values({
      account_id: entry.accountId,
      type: entry.type,
      at: entry.at,
      ip: entry.who.ip,
      actor: entry.who.actor,
      staff_name: entry.who.actor === 'staff' ? (entry.who.staffName ?? STAFF_NAME) : null,
      summary: entry.summary.slice(0, 500),
      details: JSON.stringify(details),
    })
    .execute();
}

/**
 * The types a `?type=` names: itself when it is a type, else every type it is the prefix of
 * (`two_factor` → two_factor_enabled, …; `deposit` → deposit_*); null when it names none.
 */
export function typesNamed(raw: string): ActivityType[] | null {
  const wanted = raw.trim().toLowerCase();
  if ((ACTIVITY_TYPES as readonly string[]).includes(wanted)) return [wanted as ActivityType];
  const prefixed = ACTIVITY_TYPES.filter((t) => wanted !== '' && t.startsWith(`${wanted}_`));
  return prefixed.length > 0 ? prefixed : null;
}

/** The prefixes a filter accepts besides the types themselves (`two_factor`, `deposit`, …). */
export function typePrefixes(): string[] {
  const prefixes = new Set<string>();
  for (const type of ACTIVITY_TYPES) {
    const parts = type.split('_');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('_');
      if (!(ACTIVITY_TYPES as readonly string[]).includes(prefix)) prefixes.add(prefix);
    }
  }
  return [...prefixes];
}

/** A page of the account's log, newest first, of `types` only when given. */
export function listActivity(
  db: Kysely<DB>,
  accountId: number,
  filter: { page: number; perPage: number; types: readonly string[] | null },
) {
  let own = db.selectFrom('account_activity').where('account_id', '=', accountId);
  if (filter.types !== null) own = own.where('type', 'in', filter.types);
  return pageOf(own, (q) => q.selectAll().orderBy('id', 'desc'), filter.page, filter.perPage);
}

export type { ActivityRow };

/** Delete what is older than the retention (every account); how many rows went. */
export async function pruneActivity(db: Kysely<DB>, now: Date): Promise<number> {
  const before = new Date(now.getTime() - ACTIVITY_RETENTION_DAYS * 86_400_000);
  const result = await db.deleteFrom('account_activity').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
