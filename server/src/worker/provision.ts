// The `service.provision` queue: provisioning and reinstalls, retried for long (core/jobs/catalog.ts).

import type { Deps } from '../core/deps.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { runServiceJob } from './job-run.ts';

export const runProvisionJob = (deps: Deps, jobId: number, context: JobContext): Promise<void> =>
  runServiceJob(deps, jobId, context);
