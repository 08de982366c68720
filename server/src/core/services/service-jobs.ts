// Jobs as clients see them (CONTRACT §3: id, type, status, progress, step, error, times,
// resource). A row here is the durable record; the pg-boss job that runs it carries only its
// id. A partial unique index allows one queued-or-running job per service, which is what
// makes a second mutation answer 409 `locked` (or `reinstall_running`).

import type { Kysely, Transaction } from 'kysely';
import type { DB, Job, JobType } from '../../db/tables.ts';
import { UpstreamError, type UpstreamErrorKind } from '../../upstreams/errors.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { ServiceScope } from './service.repository.ts';

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
  const running = await jobRepo.activeForService(trx, input.serviceId);
  if (running) throw busy(running.type);
  let job: Job;
  try {
    job = await jobRepo.insert(trx, {
      account_id: input.accountId,
      service_id: input.serviceId,
      type: input.type,
      params: JSON.stringify(input.params ?? {}),
    });
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

/**
 * A job of the account; another account's (or none) is 404 not_owner. With a scope, so is a job
 * of a service outside it (a surface that sees only some types: the same answer as a missing id).
 */
export async function getOwnJob(
  db: Kysely<DB>,
  accountId: number,
  jobId: number,
  scope: ServiceScope = {},
): Promise<Job> {
  const job = await jobRepo.findOwn(db, accountId, jobId, scope.types);
  if (!job) throw new AppError('not_owner');
  return job;
}

export async function lastJob(db: Kysely<DB>, serviceId: number): Promise<Job | undefined> {
  return jobRepo.lastForService(db, serviceId);
}

/**
 * Progress of a running job (the worker calls this at every step). The recorded progress never
 * moves back: an attempt that runs the steps again after a crash keeps the furthest one reached.
 */
export async function setProgress(db: Kysely<DB>, jobId: number, progress: number, step: string): Promise<void> {
  await jobRepo.raiseProgress(db, jobId, progress, step);
}

/**
 * Why a job failed. `code` and `message` are for the client (the job record, events,
 * notifications): a message chosen by the kind of failure, never the node's own words, which
 * name its files, storages and vmids. `detail` is what actually happened, for staff (`jobs
 * show`, kept in the job's params as `error_detail`) and the logs.
 */
export interface Failure {
  code: string;
  message: string;
  detail: string;
}

const UPSTREAM_FAILURES: Record<UpstreamErrorKind, { code: string; message: string }> = {
  unreachable: { code: 'node_unreachable', message: 'The server node did not answer.' },
  timeout: { code: 'node_unreachable', message: 'The server node did not answer in time.' },
  auth: { code: 'upstream_auth', message: "The server node refused the platform's credentials." },
  forbidden: { code: 'upstream_forbidden', message: 'The panel refused the operation for want of a permission.' },
  rate_limited: { code: 'node_unreachable', message: 'The server node asked the platform to slow down.' },
  not_found: { code: 'upstream_error', message: 'The server was not found on its node.' },
  conflict: { code: 'upstream_error', message: 'The server was busy or not in a state that allows this.' },
  rejected: { code: 'upstream_error', message: 'The server node refused the operation.' },
  protocol: { code: 'upstream_error', message: 'The server node gave an answer the platform does not understand.' },
};

export function describeFailure(error: unknown): Failure {
  if (error instanceof UpstreamError)
    return { ...UPSTREAM_FAILURES[error.kind], detail: `${error.kind}: ${error.message}` };
  // Our own refusals are written for clients already.
  if (error instanceof AppError) return { code: error.code, message: error.message, detail: error.message };
  return {
    code: 'internal_error',
    message: 'An internal error stopped the job.',
    detail: error instanceof Error ? error.message : String(error),
  };
}

/** Settle a job; every process drops what it cached about the service (e.g. its power state). */
export async function finishJob(db: Kysely<DB>, jobId: number, now: Date, failure?: Failure, bus?: Bus): Promise<void> {
  const job = await jobRepo.settle(db, jobId, now, failure);
  if (bus && job) await bus.publish(db, { topic: 'service', id: job.service_id });
}
