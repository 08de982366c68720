// When scheduled backups run (CONTRACT §13, docs/backups.md): at `hour` o'clock India Standard
// Time (UTC+05:30 all year, no daylight saving), every day, or once a week on `weekday` (0 =
// Sunday … 6 = Saturday). Pure functions of the schedule and a time; the scheduler
// (./scheduler.ts) and the action that sets a schedule (./backup-schedule.ts) share them.

import { Type } from 'typebox';
import type { BackupFrequency, BackupSchedule } from '../../db/tables.ts';
import { isoWithOffset } from '../time.ts';

export const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

export const FREQUENCIES: readonly BackupFrequency[] = ['daily', 'weekly', 'off'];
export const KEEP_MIN = 1;
export const KEEP_MAX = 14;
/** A weekly schedule set without a weekday runs on Sundays. */
export const DEFAULT_WEEKDAY = 0;
/** The prefix of every automatic snapshot's name; manual snapshots may not take it. */
export const AUTO_PREFIX = 'auto-';
/** The description every automatic snapshot carries (with the prefix, what marks one as ours). */
export const AUTO_DESCRIPTION = 'Scheduled backup';

export interface ScheduleTimes {
  frequency: BackupFrequency;
  hour: number;
  weekday: number;
}

/**
 * The first run strictly after `after`: today's (IST) `hour` o'clock, or the next day's (daily);
 * the next `weekday` at `hour` (weekly); null when off. A scheduler that was down for days asks
 * this with the time it woke up, so it runs once, not once per missed day.
 */
export function nextRunAt(s: ScheduleTimes, after: Date): Date | null {
  if (s.frequency === 'off') return null;
  const local = new Date(after.getTime() + IST_OFFSET_MS);
  let at = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), s.hour, 0, 0, 0) - IST_OFFSET_MS;
  const step = s.frequency === 'daily' ? DAY_MS : 7 * DAY_MS;
  if (s.frequency === 'weekly') at += ((s.weekday - local.getUTCDay() + 7) % 7) * DAY_MS;
  while (at <= after.getTime()) at += step;
  return new Date(at);
}

/** `auto-YYYYMMDD-HHmm` of a time, as read in IST: the name of the snapshot a run takes then. */
export function autoSnapshotName(at: Date): string {
  const local = new Date(at.getTime() + IST_OFFSET_MS).toISOString();
  return `${AUTO_PREFIX}${local.slice(0, 10).replaceAll('-', '')}-${local.slice(11, 13)}${local.slice(14, 16)}`;
}

/** Whether a snapshot is one the scheduler took (and so one it may delete). */
export function isAutomatic(s: { name: string; description: string }): boolean {
  return s.name.startsWith(AUTO_PREFIX) && s.description.trim() === AUTO_DESCRIPTION;
}

/** A schedule row as `to_jsonb` gave it (a service's list and detail read it so), with its times as dates. */
export function scheduleFromJson(row: Record<string, unknown>): BackupSchedule {
  const time = (v: unknown) => (typeof v === 'string' ? new Date(v) : null);
  const r = row as Omit<BackupSchedule, 'next_run_at' | 'last_run_at' | 'created_at' | 'updated_at' | 'price_paise'>;
  return {
    ...r,
    price_paise: String(row.price_paise),
    next_run_at: time(row.next_run_at),
    last_run_at: time(row.last_run_at),
    created_at: time(row.created_at) ?? new Date(0),
    updated_at: time(row.updated_at) ?? new Date(0),
  };
}

export const BackupScheduleSchema = Type.Object(
  {
    frequency: Type.String({ description: 'daily, weekly or off' }),
    hour: Type.Integer({ description: 'the hour it runs, 0-23, India Standard Time' }),
    keep: Type.Integer({ description: 'how many automatic snapshots are kept (1-14)' }),
    weekday: Type.Integer({ description: 'weekly: 0 (Sunday) to 6 (Saturday), IST' }),
    next_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when the last scheduled backup finished',
    }),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description: 'why the last scheduled backup failed or was skipped; null after one that succeeded',
    }),
  },
  { description: 'scheduled backups (a paid add-on; POST /api/v1/client/services/ {action: "backup_schedule"})' },
);

/** How a schedule looks on every surface (a service's `backup_schedule`). */
export function scheduleView(s: BackupSchedule) {
  return {
    frequency: s.frequency,
    hour: s.hour,
    keep: s.keep,
    weekday: s.weekday,
    next_run_at: s.next_run_at ? isoWithOffset(s.next_run_at) : null,
    last_run_at: s.last_run_at ? isoWithOffset(s.last_run_at) : null,
    last_error: s.last_error,
  };
}

export type ScheduleView = ReturnType<typeof scheduleView>;

/** What the `backup_schedule` action answers besides the envelope (both surfaces). */
export const ScheduleAnswer = {
  backup_schedule: Type.Union([BackupScheduleSchema, Type.Null()]),
  price_per_month: Type.Union([Type.String(), Type.Null()], {
    description:
      'what the add-on adds to each renewal (rupees, two decimals, with GST when prices exclude it); null: the plan does not offer it',
  }),
  charged: Type.String({ description: 'charged now, pro rata for the rest of the period ("0.00": nothing)' }),
  currency: Type.Literal('INR'),
  order_id: Type.Union([Type.String(), Type.Null()], { description: 'the order of the pro-rata charge' }),
  dry_run: Type.Boolean(),
};
