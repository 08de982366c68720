// Staff identities, their sessions and invitation links, and the audit log (migration 0036).

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp, Timestamp } from './columns.ts';

export type StaffRoleColumn = 'support' | 'billing' | 'admin';
export type StaffSessionStage = 'enrol' | 'totp' | 'full';

export interface StaffTable {
  id: Generated<number>;
  /** Lower-case. */
  email: string;
  name: string;
  role: StaffRoleColumn;
  /** argon2id; null until the invitation is accepted. */
  password_hash: string | null;
  /** The confirmed TOTP secret, sealed with SECRET_KEY; null until enrolled. */
  totp_secret: string | null;
  /** A secret shown by the enrolment's first step, not yet confirmed by a code, sealed. */
  totp_pending_secret: string | null;
  totp_enabled_at: NullableTimestamp;
  /** The 30-second step of the last code accepted. */
  totp_last_step: number | null;
  disabled_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface StaffTokensTable {
  id: Generated<number>;
  staff_id: number;
  purpose: 'invite';
  token_hash: string;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface StaffSessionsTable {
  id_hash: string;
  staff_id: number;
  stage: StaffSessionStage;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}

export interface AuditLogTable {
  /** bigint, read as a string; never written (identity). */
  id: ColumnType<string, never, never>;
  at: CreatedAt;
  staff_id: number | null;
  /** `staff:<id>`, or `operator` (the staff CLI). */
  actor: string;
  role: StaffRoleColumn | null;
  action: string;
  target_type: string;
  target_id: string | null;
  before: ColumnType<unknown, string | null, never>;
  after: ColumnType<unknown, string | null, never>;
  reason: string | null;
  ip: string | null;
}

export type StaffRow = Selectable<StaffTable>;
export type AuditRow = Selectable<AuditLogTable>;
