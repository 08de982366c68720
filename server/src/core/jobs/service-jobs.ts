// Jobs as clients see them (CONTRACT §3: id, type, status, progress, step, error, times,
// resource). A row here is the durable record; the pg-boss job that runs it carries only its
// id. A partial unique index allows one queued-or-running job per service, which is what
// makes a second mutation answer 409 `locked` (or `reinstall_running`).

import type { Kysely, Transaction } from 'kysely';
import type { DB, Job, JobType } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from './catalog.ts';
import type { JobQueue } from './queue.ts';

/** Which queue runs a job type: provisioning-like work retries for long, actions briefly. */
export function queueFor(type: JobType): 'service.provision' | 'service.action' {
  return type === 'provision' || type === 'reinstall' ? 'service.provision' : 'service.action';
}

/**
 * Record a job and queue it, in the caller's transaction. Throws 409 when the service already
 * has a job queued or running.
 */
export async function startJob(
  trx: Transaction<DB>,
  jobs: JobQueue<AppJobs>,
  input: { accountId: number; serviceId: number; type: JobType; params?: Record<string, unknown> },
): Promise<Job> {
  const running = await trx
    .selectFrom('jobs')
    .select(['id', 'type'])
    .where('service_id', '=', input.serviceId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  if (running) throw busy(running.type);
  let job: Job;
  try {
    job = await trx
      .insertInto('jobs')
      .values({
        account_id: input.accountId,
        service_id: input.serviceId,
        type: input.type,
        params: JSON.stringify(input.params ?? {}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    // Two requests raced past the check above; the index decided.
    if ((error as { code?: string }).code === '23505') throw busy(input.type);
    throw error;
  }
  await jobs.enqueue(trx, queueFor(input.type), { jobId: job.id });
  return job;
}

function busy(type: JobType): AppError {
  return type === 'reinstall' ? new AppError('reinstall_running') : new AppError('locked');
}

/** A job of the account; another account's (or none) is 404 not_owner. */
export async function getOwnJob(db: Kysely<DB>, accountId: number, jobId: number): Promise<Job> {
  const job = await db
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', jobId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!job) throw new AppError('not_owner');
  return job;
}

export async function lastJob(db: Kysely<DB>, serviceId: number): Promise<Job | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('service_id', '=', serviceId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Progress of a running job (the worker calls this at every step). */
export async function setProgress(db: Kysely<DB>, jobId: number, progress: number, step: string): Promise<void> {
  await db.updateTable('jobs').set({ progress, step }).where('id', '=', jobId).execute();
}
