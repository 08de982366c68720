// What the staff console's domain routes answer with (CONTRACT §14): accounts, services, jobs,
// ledger rows and activity rows as staff see them (an error detail a client never sees included;
// never a secret). Times with an explicit offset; money as INR strings with two decimals.

import { Type } from 'typebox';
import { accountStatus } from '../../core/accounts/account.service.ts';
import type { ActivityRow } from '../../core/activity/activity.ts';
import { formatPaise } from '../../core/money.ts';
import { inTrouble, type NodeLoad } from '../../core/staff/dashboard.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Account, Job, LedgerRow, Service, ServiceEvent } from '../../db/tables.ts';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const at = (d: Date | null) => (d ? isoWithOffset(d) : null);

export const StaffAccountSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    username: NullableString,
    name: Type.String(),
    status: Type.String({ description: 'active, unverified or suspended' }),
    email_verified_at: NullableTime,
    suspended_at: NullableTime,
    suspended_reason: NullableString,
    created_at: Time,
  },
  { additionalProperties: false },
);

export function accountView(a: Account) {
  return {
    id: a.id,
    email: a.email,
    username: a.username,
    name: a.name,
    status: accountStatus(a),
    email_verified_at: at(a.email_verified_at),
    suspended_at: at(a.suspended_at),
    suspended_reason: a.suspended_reason,
    created_at: isoWithOffset(a.created_at),
  };
}

export const StaffServiceSchema = Type.Object(
  {
    id: Type.Integer(),
    label: Type.String(),
    type: Type.String(),
    status: Type.String(),
    account: Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false }),
    node_id: Type.Union([Type.Integer(), Type.Null()]),
    price: Type.String({ description: 'INR a month, two decimals' }),
    paid_until: NullableTime,
    suspend_reason: NullableString,
    created_at: Time,
  },
  { additionalProperties: false },
);

export function serviceView(s: Service & { email: string }) {
  return {
    id: s.id,
    label: s.label,
    type: s.type,
    status: s.status,
    account: { id: s.account_id, email: s.email },
    node_id: s.node_id,
    price: formatPaise(s.price_paise),
    paid_until: at(s.period_end),
    suspend_reason: s.suspend_reason,
    created_at: isoWithOffset(s.created_at),
  };
}

export const StaffJobSchema = Type.Object(
  {
    id: Type.Integer(),
    type: Type.String(),
    service_id: Type.Integer(),
    status: Type.String(),
    progress: Type.Integer(),
    step: NullableString,
    attempts: Type.Integer(),
    error_code: NullableString,
    error_message: NullableString,
    error_detail: Type.Union([Type.String(), Type.Null()], { description: 'what the node said (staff only)' }),
    created_at: Time,
    finished_at: NullableTime,
  },
  { additionalProperties: false },
);

export function jobView(j: Job) {
  return {
    id: j.id,
    type: j.type,
    service_id: j.service_id,
    status: j.status,
    progress: j.progress,
    step: j.step,
    attempts: j.attempts,
    error_code: j.error_code,
    error_message: j.error_message,
    error_detail: typeof j.params.error_detail === 'string' ? j.params.error_detail : null,
    created_at: isoWithOffset(j.created_at),
    finished_at: at(j.finished_at),
  };
}

export const StaffEventSchema = Type.Object(
  { kind: Type.String(), message: Type.String(), at: Time },
  { additionalProperties: false },
);

export const eventView = (e: ServiceEvent) => ({ kind: e.kind, message: e.message, at: isoWithOffset(e.created_at) });

export const StaffLedgerSchema = Type.Object(
  {
    public_id: Type.String(),
    kind: Type.String(),
    amount: Type.String({ description: 'INR, negative for money out' }),
    balance_after: Type.String(),
    note: NullableString,
    at: Time,
  },
  { additionalProperties: false },
);

export const ledgerView = (r: LedgerRow) => ({
  public_id: r.public_id,
  kind: r.kind,
  amount: formatPaise(r.amount_paise),
  balance_after: formatPaise(r.balance_after_paise),
  note: r.note,
  at: isoWithOffset(r.created_at),
});

export const StaffActivitySchema = Type.Object(
  {
    type: Type.String(),
    actor: Type.String({ description: 'self, staff or system' }),
    staff_name: NullableString,
    summary: Type.String(),
    ip: NullableString,
    at: Time,
  },
  { additionalProperties: false },
);

export const activityView = (r: ActivityRow) => ({
  type: r.type,
  actor: r.actor,
  staff_name: r.staff_name,
  summary: r.summary,
  ip: r.ip,
  at: isoWithOffset(r.at),
});

// Nodes with their load (GET nodes, the dashboard's nodes in trouble).

export const NodeLoadSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    kind: Type.String(),
    location_id: Type.Integer(),
    endpoint: Type.String(),
    active: Type.Boolean({ description: 'false: drained (no new service is placed on it)' }),
    health: Type.String({ description: 'up, down or unknown (its last check)' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'what the last failed check said' }),
    checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    capacity: Type.Integer(),
    used: Type.Integer({ description: 'services on it, not terminated or failed' }),
    trouble: Type.Boolean({ description: 'down, or carrying more than its capacity' }),
  },
  { additionalProperties: false },
);

export function nodeLoadView(n: NodeLoad) {
  return {
    id: n.id,
    name: n.name,
    kind: n.kind,
    location_id: n.location_id,
    endpoint: n.endpoint,
    active: n.active,
    health: n.health,
    last_error: n.health === 'up' ? null : n.health_detail,
    checked_at: n.checked_at ? isoWithOffset(n.checked_at) : null,
    capacity: n.capacity,
    used: n.used,
    trouble: inTrouble(n),
  };
}

/** A reason the audit log keeps: required for the changes that say so. */
export const Reason = Type.Optional(Type.String({ maxLength: 500, description: 'why (kept in the audit log)' }));
