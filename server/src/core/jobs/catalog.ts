// Every job the worker runs: its name, its payload, and its retry policy. Enqueue with
// `deps.jobs.enqueue(trx, name, payload)`; handlers live in server/src/worker/.

import type { QueueDefinitions } from './queue.ts';

// biome-ignore lint/complexity/noBannedTypes: job types arrive with the features that own them
export type AppJobs = {};

export const APP_QUEUES: QueueDefinitions<AppJobs> = {};
