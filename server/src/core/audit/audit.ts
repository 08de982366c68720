// The audit trail of staff changes (CONTRACT §14; migration 0036): one row per change made from
// the staff console or the staff CLI, written with the change's own transaction — `recordAudit`
// takes a Transaction, so it cannot be called outside one, and a change that fails leaves no row.
// There is no update or delete path: nothing here changes a row, and the table's trigger refuses
// UPDATE, DELETE and TRUNCATE.
//
// Services that already take a `Who` (core/activity) write their audit row through `auditAs`,
// which does nothing unless the `Who` carries an audit actor (`byOperator`, `byStaffMember`): the
// platform's own calls (the billing cycle, a reconciliation) are not staff changes.

import type { Kysely, Transaction } from 'kysely';
import type { AuditRow, DB } from '../../db/tables.ts';
import { byStaff, STAFF_NAME, type Who } from '../activity/activity.ts';
import { type AuditActor, actorName, OPERATOR } from './actor.ts';

export { type AuditActor, actorName, OPERATOR } from './actor.ts';

/** What customers read in their activity log for a change made in the staff console. */
export const CONSOLE_STAFF_NAME = 'Hostplane staff';

/** The staff CLI, as services' `who` (activity log: `operator`; audit log: actor `operator`). */
export const byOperator = (): Who => ({ ...byStaff(STAFF_NAME), audit: OPERATOR });

/** A staff member of the console, as services' `who`. */
export const byStaffMember = (actor: AuditActor): Who => ({ ...byStaff(CONSOLE_STAFF_NAME), audit: actor });

export interface AuditEntry {
  actor: AuditActor;
  /** `<noun>.<verb>`, e.g. `deposit.approve`, `staff.role`. */
  action: string;
  /** What was changed: `deposit`, `account`, `service`, `service_request`, `staff`, … */
  targetType: string;
  targetId: string | number | null;
  /** The target's relevant fields before and after (never a secret). */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  reason?: string | null;
  at: Date;
}

/** Keys that would name a secret: refused, whatever the caller meant (as the activity log does). */
const SECRET_KEY = /pass(word|phrase)?(_hash)?$|secret|cookie|^code$|_code$|^token$|token_hash|session_id$/i;

function json(value: Record<string, unknown> | null | undefined, action: string): string | null {
  if (value === undefined || value === null) return null;
  for (const key of Object.keys(value)) {
    if (SECRET_KEY.test(key)) throw new Error(`audit ${action}: "${key}" may not be kept in the audit log`);
  }
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** Append one row, with the transaction of the change it records. */
export async function recordAudit(trx: Transaction<DB>, entry: AuditEntry): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      at: entry.at,
      staff_id: entry.actor.staffId,
      actor: actorName(entry.actor),
      role: entry.actor.role,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId === null ? null : String(entry.targetId),
      before: json(entry.before, entry.action),
      after: json(entry.after, entry.action),
      reason: entry.reason?.slice(0, 1000) ?? null,
      ip: entry.actor.ip,
    })
    .execute();
}

/** `recordAudit` when `who` carries an audit actor (a staff change); nothing otherwise. */
export async function auditAs(
  trx: Transaction<DB>,
  who: Who | undefined,
  entry: Omit<AuditEntry, 'actor'>,
): Promise<void> {
  if (who?.audit !== undefined) await recordAudit(trx, { ...entry, actor: who.audit });
}

export interface AuditFilter {
  limit: number;
  /** Rows with an id below this one (the next page: the last id of this one). */
  before?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
}

/** Newest first. */
export function listAudit(db: Kysely<DB>, filter: AuditFilter): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.before !== undefined) query = query.where('id', '<', filter.before);
  if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  return query.execute();
}
