// What happens to services once they exist: jobs, their events, clients' requests for staff,
// console tickets and sessions; and the platform's own rows (idempotency keys, the installation).

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp, Timestamp } from './columns.ts';

/**
 * Every job type (CONTRACT §3; the jobs.type check, migrations 0014 and 0033): `snapshot` changes a
 * VPS's snapshots, `resize` moves it to a larger plan.
 */
export const JOB_TYPES = [
  'provision',
  'power',
  'reinstall',
  'suspend',
  'unsuspend',
  'terminate',
  'snapshot',
  'resize',
] as const;
export type JobType = (typeof JOB_TYPES)[number];
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobsTable {
  id: Generated<number>;
  account_id: number;
  service_id: number;
  type: JobType;
  params: ColumnType<Record<string, unknown>, string | undefined, string>;
  status: ColumnType<JobStatus, JobStatus | undefined, JobStatus>;
  progress: ColumnType<number, number | undefined, number>;
  step: string | null;
  error_code: string | null;
  error_message: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface ServiceEventsTable {
  id: Generated<number>;
  service_id: number;
  kind: string;
  message: string;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
}

export interface ServiceRequestsTable {
  id: Generated<number>;
  service_id: number;
  account_id: number;
  kind: 'suspend' | 'terminate';
  status: ColumnType<'pending' | 'approved' | 'rejected', 'pending' | 'approved' | 'rejected' | undefined>;
  note: string | null;
  reason: string | null;
  reviewed_by: string | null;
  job_id: number | null;
  created_at: CreatedAt;
  decided_at: NullableTimestamp;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  scope: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: CreatedAt;
}

export interface ConsoleTicketsTable {
  id: Generated<number>;
  ticket_hash: string;
  account_id: number;
  service_id: number;
  kind: 'vnc' | 'serial' | 'game';
  upstream_sealed: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface ConsoleSessionsTable {
  id: Generated<number>;
  account_id: number;
  service_id: number;
  node_id: number;
  expires_at: Timestamp;
  created_at: CreatedAt;
}

/** The one row naming this installation (core/system/installation.ts). */
export interface InstallationTable {
  singleton: Generated<boolean>;
  id: string;
  created_at: CreatedAt;
  rotated_at: NullableTimestamp;
}

export type Job = Selectable<JobsTable>;
export type ServiceEvent = Selectable<ServiceEventsTable>;
export type ServiceRequest = Selectable<ServiceRequestsTable>;
