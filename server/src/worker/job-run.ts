// What every service job handler shares: load the job with its service and node, mark it
// running, record progress, and finish it — succeeded, or failed after compensation — exactly
// once. A handler that throws a retryable error leaves the job `running` for pg-boss to retry.

import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus } from '../core/bus.ts';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { setProgress } from '../core/jobs/service-jobs.ts';
import { recordEvent } from '../core/services/events.ts';
import type { DB, Job, NodeRow, Plan, Service } from '../db/tables.ts';
import { UpstreamError, type VmRef } from '../upstreams/hypervisor.ts';

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

/** A code and message for the job record, never an upstream secret or stack. */
export function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof UpstreamError) {
    if (error.kind === 'unreachable' || error.kind === 'timeout')
      return { code: 'node_unreachable', message: error.message };
    if (error.kind === 'auth') return { code: 'upstream_auth', message: 'The node refused our credentials.' };
    return { code: 'upstream_error', message: error.message };
  }
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return { code: 'internal_error', message: 'An internal error stopped the job.' };
}

/** Whether to let pg-boss try again, rather than give up now. */
export function shouldRetry(error: unknown, context: JobContext): boolean {
  if (context.lastAttempt) return false;
  if (error instanceof UpstreamError) return error.retryable;
  return !(error instanceof AppError);
}

/** Record a failed attempt that will be retried (the job stays running). */
export async function noteRetry(deps: Deps, loaded: LoadedJob, error: unknown, context: JobContext): Promise<void> {
  const failure = describeFailure(error);
  await deps.database.db
    .updateTable('jobs')
    .set({
      error_code: failure.code,
      error_message: failure.message,
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
export async function finishJob(
  db: Kysely<DB>,
  jobId: number,
  now: Date,
  failure?: { code: string; message: string },
  bus?: Bus,
): Promise<void> {
  const job = await db
    .updateTable('jobs')
    .set(
      failure
        ? { status: 'failed', finished_at: now, error_code: failure.code, error_message: failure.message }
        : { status: 'succeeded', progress: 100, step: 'done', finished_at: now, error_code: null, error_message: null },
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
