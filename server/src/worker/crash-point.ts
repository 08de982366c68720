// Failure drills (issue 39, docs/RELIABILITY.md): HOSTPLANE_CRASH_AT names points of provisioning
// (config-crash.ts) at which this worker kills itself with SIGKILL, as a power cut or an OOM kill
// would. Only the step runner (./job-run.ts) calls in here; without the variable nothing is
// wrapped and nothing waits.
//
// A point is `before` a step (the job shows the step, nothing of it has run), `after` it (it
// returned: its upstream call made and its own rows written, the next step not yet recorded) or
// `settled` (the settling transaction committed, the queue not yet told). Each point catches one
// job, one this process began (a job an earlier, killed worker began runs through, so a restarted
// worker with the same setting does not die on the job it interrupted): the job that reaches it
// first is held there. Once every point has caught its job, the process kills itself: several jobs,
// running at once, each die at a point of their own, which is how a drill covers every step of
// every product with one kill.

import type { Logger } from 'pino';
import { ConfigError } from '../config.ts';
import { type CrashPoint, crashPointName } from '../config-crash.ts';
import type { ProductRegistry } from '../core/product-kit/registry.ts';
import type { Step } from '../core/product-kit/steps.ts';
import type { Job } from '../db/tables.ts';
import { flushProcessLog } from '../logging.ts';

/** How long the log may take to reach its reader before the kill (the drill reads which job stopped where). */
const FLUSH_MS = 1_000;

export interface CrashPoints {
  /** The job's steps, each wrapped to stop at its points (the steps themselves when none applies). */
  steps<C>(product: string, job: Job, steps: readonly Step<C>[], logger: Logger): readonly Step<C>[];
  /** After the settling transaction of a provisioning job. */
  settled(product: string, job: Job, logger: Logger): Promise<void>;
}

export const NO_CRASH_POINTS: CrashPoints = {
  steps: (_product, _job, steps) => steps,
  settled: async () => {},
};

/** The points of HOSTPLANE_CRASH_AT, each checked against the products' provisioning steps. */
export function crashPoints(points: readonly CrashPoint[], products: ProductRegistry): CrashPoints {
  if (points.length === 0) return NO_CRASH_POINTS;
  for (const point of points) {
    const product = products.all.find((p) => p.type === point.product);
    if (!product) throw new ConfigError(`HOSTPLANE_CRASH_AT: no product ${point.product}`);
    if (point.step !== null && !product.jobs.provision.some((step) => step.name === point.step)) {
      throw new ConfigError(`HOSTPLANE_CRASH_AT: ${point.product} provisioning has no step "${point.step}"`);
    }
  }
  const waiting = new Set(points.map(crashPointName));
  // Jobs this process began: their later attempts (a retry after a failed call) may still stop at a
  // point; a job another process began (the one killed) runs through.
  const begun = new Set<number>();
  const armed = (job: Job) => {
    if (job.type !== 'provision' || (job.attempts > 0 && !begun.has(job.id))) return false;
    begun.add(job.id);
    return true;
  };

  async function reach(name: string, job: Job, logger: Logger): Promise<void> {
    if (!waiting.delete(name)) return;
    logger.warn({ crashPoint: name, serviceJob: job.id, serviceId: job.service_id }, `crash point ${name}: job held`);
    if (waiting.size === 0) {
      logger.warn('every crash point has its job: SIGKILL');
      await flushProcessLog(FLUSH_MS);
      process.kill(process.pid, 'SIGKILL');
    }
    await new Promise<never>(() => {}); // held until the kill
  }

  return {
    steps(product, job, steps, logger) {
      if (!armed(job)) return steps;
      return steps.map((step) => ({
        ...step,
        run: async (c) => {
          await reach(`${product}:${step.name}:before`, job, logger);
          await step.run(c);
          await reach(`${product}:${step.name}:after`, job, logger);
        },
      }));
    },
    async settled(product, job, logger) {
      if (armed(job)) await reach(`${product}:settled`, job, logger);
    },
  };
}
