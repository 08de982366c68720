// The activity log a customer reads (migration 0029): append-only, one row per event.

import type { ColumnType, Selectable } from 'kysely';
import type { CreatedAt } from './columns.ts';

export type ActivityActor = 'self' | 'staff' | 'system';

export interface AccountActivityTable {
  /** bigint, read as a string; never written (identity). */
  id: ColumnType<string, never, never>;
  account_id: number;
  type: string;
  at: CreatedAt;
  ip: string | null;
  actor: ActivityActor;
  /** Set exactly when `actor` is `staff`. */
  staff_name: string | null;
  summary: string;
  details: ColumnType<Record<string, unknown>, string | undefined, never>;
}

export type ActivityRow = Selectable<AccountActivityTable>;
