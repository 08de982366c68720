// The `service.action` queue: power signals, snapshot changes, and the suspensions and
// terminations staff approve, retried briefly (core/jobs/catalog.ts). A failure after the
// retries leaves the service as it was and the job `failed` with the reason.

import type { Deps } from '../core/deps.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { runServiceJob } from './job-run.ts';

export const runActionJob = (deps: Deps, jobId: number, context: JobContext): Promise<void> =>
  runServiceJob(deps, jobId, context);
