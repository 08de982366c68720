// Row types of every table, as Kysely sees them. Keep in step with migrations/.
// Conventions: ids are `integer generated always as identity` (JS number); money is bigint
// paise (JS string from pg, converted with BigInt in the core); times are timestamptz (Date).

import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** A timestamptz the database fills in by default. */
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  email: string;
  username: string;
  password_hash: string;
  email_verified_at: NullableTimestamp;
  suspended_at: NullableTimestamp;
  suspended_reason: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SessionsTable {
  id_hash: string;
  account_id: number;
  remember: boolean;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
}

export interface AccountTokensTable {
  id: Generated<number>;
  account_id: number;
  purpose: 'verify_email' | 'reset_password';
  token_hash: string;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface LoginCodesTable {
  id: Generated<number>;
  account_id: number;
  code_hash: string;
  attempts: Generated<number>;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export type MailStatus = 'queued' | 'sent' | 'stored' | 'failed';

export interface MailOutboxTable {
  id: Generated<number>;
  account_id: number | null;
  to_address: string;
  template: string;
  subject: string;
  body_sealed: string | null;
  status: ColumnType<MailStatus, MailStatus | undefined, MailStatus>;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: CreatedAt;
  sent_at: NullableTimestamp;
}

export interface DB {
  accounts: AccountsTable;
  sessions: SessionsTable;
  account_tokens: AccountTokensTable;
  login_codes: LoginCodesTable;
  mail_outbox: MailOutboxTable;
}

export type Account = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type Session = Selectable<SessionsTable>;
export type MailRow = Selectable<MailOutboxTable>;
