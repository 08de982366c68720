// Scheduled backups of virtual servers (migration 0034, core/backups/).

import type { ColumnType, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp, Paise } from './columns.ts';

export type BackupFrequency = 'daily' | 'weekly' | 'off';

export interface BackupSchedulesTable {
  service_id: number;
  account_id: number;
  frequency: BackupFrequency;
  /** 0-23, India Standard Time. */
  hour: number;
  /** 0 (Sunday) … 6 (Saturday), IST; what a weekly schedule runs on. */
  weekday: ColumnType<number, number | undefined, number>;
  /** How many automatic snapshots are kept (1-14). */
  keep: number;
  /** The monthly add-on price, in paise, as the plan said when it was turned on. */
  price_paise: Paise;
  /** Null exactly when off. */
  next_run_at: NullableTimestamp;
  last_run_at: NullableTimestamp;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** The scheduled snapshot job whose outcome is not recorded yet. */
  job_id: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export type BackupSchedule = Selectable<BackupSchedulesTable>;
