// Queries on jobs (the durable record of a service job). Functions take the executor first (the
// root db or a transaction); locking reads take a Transaction. What a client reads takes the
// owner (`findOwn(db, accountId, id)`); what only staff or the worker does by id alone says so in
// its name (`…ForStaff`, `…ForWorker`) or settles a job the worker is running.

import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { DB, Job, JobStatus, JobsTable, JobType, PlanType } from '../../db/tables.ts';

export type Executor = Kysely<DB>;

/** Why a job failed, as recorded: `code`/`message` for the client, `detail` for staff. */
export interface RecordedFailure {
  code: string;
  message: string;
  detail: string;
}

/** `params` with the staff-only detail of the last failure set (or, with null, removed). */
export const withDetail = (detail: string | null) =>
  detail === null
    ? sql<string>`params - 'error_detail'`
    : sql<string>`params || jsonb_build_object('error_detail', ${detail.slice(0, 2000)}::text)`;

// ---- owner-scoped (client-facing) ----

export function findOwn(
  db: Executor,
  accountId: number,
  id: number,
  serviceTypes?: readonly PlanType[],
): Promise<Job | undefined> {
  let query = db.selectFrom('jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId);
  // Only jobs of services of these types: any other answers as if it did not exist.
  if (serviceTypes) {
    const types = [...serviceTypes];
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('services')
          .select('services.id')
          .whereRef('services.id', '=', 'jobs.service_id')
          .where('services.type', 'in', types),
      ),
    );
  }
  return query.executeTakeFirst();
}

// ---- by service (its owner already checked by the caller) ----

/** The service's queued or running job, if any. */
export function activeForService(db: Executor, serviceId: number) {
  return db
    .selectFrom('jobs')
    .select(['id', 'type'])
    .where('service_id', '=', serviceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
}

export function lastForService(db: Executor, serviceId: number): Promise<Job | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('service_id', '=', serviceId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A new job; its owner is in the values. */
export function insert(trx: Transaction<DB>, values: Insertable<JobsTable>): Promise<Job> {
  return trx.insertInto('jobs').values(values).returningAll().executeTakeFirstOrThrow();
}

// ---- by id alone: staff and worker ----

export function findForWorker(db: Executor, id: number): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findForStaff(db: Executor, id: number): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function lockForStaff(trx: Transaction<DB>, id: number): Promise<Job | undefined> {
  return trx.selectFrom('jobs').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Jobs, newest first, optionally of one status or service. */
export function listForStaff(
  db: Executor,
  filter: { status?: JobStatus; type?: JobType; serviceId?: number; limit: number },
) {
  let query = db.selectFrom('jobs').selectAll().orderBy('id', 'desc').limit(filter.limit);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.serviceId !== undefined) query = query.where('service_id', '=', filter.serviceId);
  return query.execute();
}

/** Back to queued, its last failure cleared (staff's retry). */
export function requeueForStaff(trx: Transaction<DB>, id: number, step: string): Promise<Job> {
  return trx
    .updateTable('jobs')
    .set({ status: 'queued', error_code: null, error_message: null, finished_at: null, step })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Running: one more attempt, started at `now` unless it had started before. */
export async function markRunning(db: Executor, id: number, attempts: number, now: Date): Promise<void> {
  await db
    .updateTable('jobs')
    .set((eb) => ({ status: 'running', attempts, started_at: eb.fn.coalesce('started_at', eb.val(now)) }))
    .where('id', '=', id)
    .execute();
}

/** Progress that never moves back (greatest of the recorded and the new). */
export async function raiseProgress(db: Executor, id: number, progress: number, step: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set((eb) => ({ progress: eb.fn('greatest', [eb.ref('progress'), eb.val(progress)]), step }))
    .where('id', '=', id)
    .execute();
}

/** A failed attempt that will be retried: the job stays running, its failure and step recorded. */
export async function noteRetry(db: Executor, id: number, failure: RecordedFailure, step: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      error_code: failure.code,
      error_message: failure.message,
      params: withDetail(failure.detail),
      step,
    })
    .where('id', '=', id)
    .execute();
}

/** Settle the job, succeeded (no failure) or failed; answers its service, if the job exists. */
export function settle(
  db: Executor,
  id: number,
  now: Date,
  failure?: RecordedFailure,
): Promise<{ service_id: number } | undefined> {
  return db
    .updateTable('jobs')
    .set(
      failure
        ? {
            status: 'failed',
            finished_at: now,
            error_code: failure.code,
            error_message: failure.message,
            params: withDetail(failure.detail),
          }
        : {
            status: 'succeeded',
            progress: 100,
            step: 'done',
            finished_at: now,
            error_code: null,
            error_message: null,
            params: withDetail(null),
          },
    )
    .where('id', '=', id)
    .returning('service_id')
    .executeTakeFirst();
}
