// The runner of every service job: load the job with its service and node, mark it running,
// open the service's product, run the job's steps (recording each), and settle it through the
// lifecycle, succeeded or failed, exactly once. A retryable failure (not the last attempt)
// leaves the job `running` and throws for pg-boss to try again with backoff; a permanent one
// undoes the steps reached, in reverse, then settles. Knows no product: what a job does is
// the product's (core/products/<type>/), what it changes is the lifecycle's.

import type { Kysely } from 'kysely';
import { planById } from '../core/catalog/catalog.service.ts';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import * as jobRepo from '../core/jobs/job.repository.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import * as nodes from '../core/nodes/node.repository.ts';
import type { JobEnv } from '../core/product-kit/jobs.ts';
import * as lifecycle from '../core/product-kit/lifecycle.ts';
import type { Product } from '../core/product-kit/product.ts';
import { type Step, stepRun } from '../core/product-kit/steps.ts';
import { recordEvent } from '../core/services/events.ts';
import { planChangeFailed } from '../core/services/plan-change.ts';
import * as services from '../core/services/service.repository.ts';
import { describeFailure, type Failure, finishJob, setProgress } from '../core/services/service-jobs.ts';
import type { DB, Job, NodeRow, Plan, Service } from '../db/tables.ts';
import { recordServiceJob, type ServiceJobOutcome } from '../metrics/metrics.ts';
import { UpstreamError } from '../upstreams/errors.ts';
import { markCleanupPending } from './cleanup.ts';
import { type CrashPoints, NO_CRASH_POINTS } from './crash-point.ts';

export interface LoadedJob {
  job: Job;
  service: Service;
  plan: Plan;
  node: NodeRow | null;
}

export async function loadJob(db: Kysely<DB>, jobId: number): Promise<LoadedJob | null> {
  const job = await jobRepo.findForWorker(db, jobId);
  if (!job || job.status === 'succeeded' || job.status === 'failed') return null; // already settled
  const service = await services.findForJob(db, job.service_id);
  const plan = await planById(db, service.plan_id);
  const node = service.node_id === null ? null : ((await nodes.findById(db, service.node_id)) ?? null);
  return { job, service, plan, node };
}

export async function markRunning(deps: Deps, job: Job): Promise<void> {
  await jobRepo.markRunning(deps.database.db, job.id, job.attempts + 1, deps.clock());
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
  context.logger.warn({ err: error, job: loaded.job.id, detail: failure.detail }, 'job attempt failed; retrying');
  await jobRepo.noteRetry(deps.database.db, loaded.job.id, failure, `retrying after: ${failure.message}`.slice(0, 200));
  await recordEvent(
    deps.database.db,
    loaded.service.id,
    `${loaded.job.type}_retry`,
    `Attempt ${context.retryCount + 1} failed (${failure.code}); retrying`,
  );
}

/**
 * How one job type runs: its steps, and how it settles. Provisioning and resizing give up by
 * undoing their steps and refunding; every other job leaves the service as it was.
 */
interface JobPlan<C> {
  steps: readonly Step<C>[];
  done(trx: Parameters<typeof lifecycle.activated>[0], t: lifecycle.Transition, c: C): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: the product's own context type
function planOf(product: Product, loaded: LoadedJob): JobPlan<any> {
  const { job, plan } = loaded;
  const { jobs } = product;
  switch (job.type) {
    case 'provision':
      return { steps: jobs.provision, done: (trx, t) => lifecycle.activated(trx, t, plan) };
    case 'reinstall':
      return {
        steps: jobs.reinstall.steps,
        done: async (trx, t, c) => {
          await lifecycle.jobDone(trx, t);
          await jobs.reinstall.done(trx, c);
        },
      };
    case 'power': {
      const { signal } = job.params;
      const power = typeof signal === 'string' ? jobs.power[signal] : undefined;
      if (!power) throw new AppError('bad_signal');
      return {
        steps: [{ name: job.type, progress: 10, run: power.run }],
        done: (trx, t) => lifecycle.jobDone(trx, t, { kind: `power_${signal}`, message: power.done }),
      };
    }
    case 'snapshot': {
      const { action } = job.params;
      const change = typeof action === 'string' ? jobs.snapshot?.[action] : undefined;
      if (!change) throw new AppError('not_supported', { message: `No snapshot action "${String(action)}" here.` });
      return {
        steps: [{ name: change.step, progress: 10, run: change.run }],
        done: (trx, t) => lifecycle.jobDone(trx, t, { kind: `snapshot_${action}`, message: change.done }),
      };
    }
    case 'resize': {
      const resize = jobs.resize;
      if (!resize) throw new AppError('not_supported', { message: `A ${product.type} service cannot be resized.` });
      return {
        steps: resize.steps,
        done: (trx, t) => lifecycle.jobDone(trx, t, { kind: 'resized', message: `${resize.done} ${plan.name}` }),
      };
    }
    case 'suspend':
      return { steps: [{ name: job.type, progress: 10, run: jobs.suspend }], done: lifecycle.suspended };
    case 'unsuspend':
      return {
        steps: [{ name: job.type, progress: 10, run: jobs.unsuspend }],
        done: lifecycle.unsuspended,
      };
    case 'terminate':
      return {
        steps: [{ name: job.type, progress: 10, run: jobs.terminate }],
        done: lifecycle.terminated,
      };
  }
}

/** Run one service job (either queue): see the header. `crash`: failure drills only (./crash-point.ts). */
export async function runServiceJob(
  deps: Deps,
  jobId: number,
  context: JobContext,
  crash: CrashPoints = NO_CRASH_POINTS,
): Promise<void> {
  const db = deps.database.db;
  const started = performance.now();
  const loaded = await loadJob(db, jobId);
  if (!loaded) return;
  const settled = (outcome: ServiceJobOutcome) =>
    recordServiceJob(loaded.job.type, outcome, (performance.now() - started) / 1000);
  // A provisioning job for a service that is no longer being provisioned has nothing to do.
  if (loaded.service.status !== 'provisioning' && loaded.job.type === 'provision') {
    await finishJob(db, jobId, deps.clock(), undefined, deps.bus);
    settled('skipped');
    return;
  }
  await markRunning(deps, loaded.job);
  const product = deps.products.of(loaded.service.type);
  const env: JobEnv = { ...deps.productEnv, ...loaded };
  const transition = (): lifecycle.Transition => ({ ...loaded, now: deps.clock(), bus: deps.bus, product });
  const refunds = loaded.job.type === 'provision';
  // A resize that gives up is undone on the node and refunded too, the service kept (plan-change.ts).
  const reverts = loaded.job.type === 'resize';
  const recorder = { reached: (progress: number, step: string) => setProgress(db, jobId, progress, step) };
  // biome-ignore lint/suspicious/noExplicitAny: the product's own context type
  let run: ReturnType<typeof stepRun<any>> | null = null;
  try {
    const plan = planOf(product, loaded);
    const c = product.jobs.open(env);
    const steps = crash.steps(product.type, loaded.job, plan.steps, context.logger);
    run = stepRun(steps, c, recorder, loaded.job.progress);
    await run.run();
    await db.transaction().execute((trx) => plan.done(trx, transition(), c));
    await crash.settled(product.type, loaded.job, context.logger);
    settled('succeeded');
  } catch (error) {
    if (shouldRetry(error, context)) {
      settled('retry');
      await noteRetry(deps, loaded, error, context);
      throw error;
    }
    const failure: Failure = describeFailure(error);
    if (refunds) {
      context.logger.warn({ err: error, job: jobId }, 'service job failed for good; compensating');
      // Without the product's context (no driver for the node) there is nothing to undo with.
      let undone = true;
      await run?.undo((step, cleanup) => {
        undone = false;
        deps.logger.warn({ err: cleanup, service: loaded.service.id, step: step.name }, 'could not undo a step');
      });
      await db.transaction().execute(async (trx) => {
        await lifecycle.failedAndRefunded(trx, transition(), failure, deps.config.invoicing);
        // What is left on the node is removed later by the worker's cleanup pass (./cleanup.ts).
        if (!undone) await markCleanupPending(trx, loaded.service.id);
      });
    } else if (reverts) {
      context.logger.warn({ err: error, job: jobId, detail: failure.detail }, 'resize failed; reverting');
      await run?.undo((step, cleanup) =>
        deps.logger.warn({ err: cleanup, service: loaded.service.id, step: step.name }, 'could not undo a step'),
      );
      await db.transaction().execute((trx) => planChangeFailed(trx, transition(), failure, deps.config.invoicing));
    } else {
      context.logger.warn({ err: error, job: jobId, detail: failure.detail }, 'service job failed');
      await db.transaction().execute((trx) => lifecycle.jobFailed(trx, transition(), failure));
    }
    settled('failed');
  }
}
