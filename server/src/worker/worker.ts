// The job worker: binds every queue of the catalogue to its handler. Runs inside `npm start`
// (with the API) or alone under `npm run worker` (PostgreSQL only).

import type { Deps } from '../core/deps.ts';
import type { AppJobs } from '../core/jobs/catalog.ts';
import type { JobHandlers } from '../core/jobs/queue.ts';

export function jobHandlers(_deps: Deps): JobHandlers<AppJobs> {
  return {};
}

export async function startWorker(deps: Deps): Promise<void> {
  await deps.jobs.work(jobHandlers(deps));
}
