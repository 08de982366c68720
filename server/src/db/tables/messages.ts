// What the platform tells an account: mail waiting to leave (the outbox) and notifications.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp } from './columns.ts';

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

export interface NotificationsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  title: string;
  body: string;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  read_at: NullableTimestamp;
  created_at: CreatedAt;
}

export type MailRow = Selectable<MailOutboxTable>;
export type Notification = Selectable<NotificationsTable>;
