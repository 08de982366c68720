// What every service job handler shares: load the job with its service and node, mark it
// running, record progress, and finish it — succeeded, or failed after compensation — exactly
// once. A handler that throws a retryable error leaves the job `running` for pg-boss to retry.

import { randomInt } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Bus } from '../core/bus.ts';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { setProgress } from '../core/jobs/service-jobs.ts';
import { recordEvent } from '../core/services/events.ts';
import type { DB, Job, NodeRow, Plan, Service } from '../db/tables.ts';
import { UpstreamError, type UpstreamErrorKind, type VmRef } from '../upstreams/hypervisor.ts';

export interface LoadedJob {
  job: Job;
  service: Service;
  plan: Plan;
  node: NodeRow | null;
}

export async function loadJob(db: Kysely<DB>, jobId: number): Promise<LoadedJob | null> {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
  if (!job || job.status === 'succeeded' || job.status === 'failed') return null; // already settled
  const service = await db
    .selectFrom('services')
    .selectAll()
    .where('id', '=', job.service_id)
    .executeTakeFirstOrThrow();
  const plan = await db.selectFrom('plans').selectAll().where('id', '=', service.plan_id).executeTakeFirstOrThrow();
  const node =
    service.node_id === null
      ? null
      : ((await db.selectFrom('nodes').selectAll().where('id', '=', service.node_id).executeTakeFirst()) ?? null);
  return { job, service, plan, node };
}

export async function markRunning(deps: Deps, job: Job): Promise<void> {
  await deps.database.db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      attempts: job.attempts + 1,
      started_at: eb.fn.coalesce('started_at', eb.val(deps.clock())),
    }))
    .where('id', '=', job.id)
    .execute();
}

export const progress = (deps: Deps, job: Job, percent: number, step: string) =>
  setProgress(deps.database.db, job.id, percent, step);

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
  not_found: { code: 'upstream_error', message: 'The virtual machine was not found on its node.' },
  conflict: { code: 'upstream_error', message: 'The virtual machine was busy or not in a state that allows this.' },
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

/** Whether to let pg-boss try again, rather than give up now. */
export function shouldRetry(error: unknown, context: JobContext): boolean {
  if (context.lastAttempt) return false;
  if (error instanceof UpstreamError) return error.retryable;
  return !(error instanceof AppError);
}

/** `params` with the staff-only detail of the last failure set (or, with null, removed). */
const withDetail = (detail: string | null) =>
  detail === null
    ? sql<string>`params - 'error_detail'`
    : sql<string>`params || jsonb_build_object('error_detail', ${detail.slice(0, 2000)}::text)`;

/** Record a failed attempt that will be retried (the job stays running). */
export async function noteRetry(deps: Deps, loaded: LoadedJob, error: unknown, context: JobContext): Promise<void> {
  const failure = describeFailure(error);
  context.logger.warn({ err: error, job: loaded.job.id, detail: failure.detail }, 'job attempt failed; retrying');
  await deps.database.db
    .updateTable('jobs')
    .set({
      error_code: failure.code,
      error_message: failure.message,
      params: withDetail(failure.detail),
      step: `retrying after: ${failure.message}`.slice(0, 200),
    })
    .where('id', '=', loaded.job.id)
    .execute();
  await recordEvent(
    deps.database.db,
    loaded.service.id,
    `${loaded.job.type}_retry`,
    `Attempt ${context.retryCount + 1} failed (${failure.code}); retrying`,
  );
}

/** Settle a job; every process drops what it cached about the service (e.g. its power state). */
export async function finishJob(db: Kysely<DB>, jobId: number, now: Date, failure?: Failure, bus?: Bus): Promise<void> {
  const job = await db
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
    .where('id', '=', jobId)
    .returning('service_id')
    .executeTakeFirst();
  if (bus && job) await bus.publish(db, { topic: 'service', id: job.service_id });
}

export function vmRefOf(service: Service): VmRef | null {
  const external = service.external as { node?: string; vmid?: number; name?: string } | null;
  if (!external || typeof external.vmid !== 'number' || !external.node || !external.name) return null;
  return { node: external.node, vmid: external.vmid, name: external.name };
}

/** The deterministic VM name of a service: how a re-run finds what an earlier run created. */
export const vmName = (service: Pick<Service, 'id'>) => `hp-svc-${service.id}`;

/** 20 characters from an unambiguous alphabet (~110 bits), with a digit and a symbol guaranteed. */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  let out = '';
  for (let i = 0; i < 18; i++) out += alphabet[randomInt(alphabet.length)];
  return `${out.slice(0, 9)}-${out.slice(9)}${randomInt(10)}`;
}
