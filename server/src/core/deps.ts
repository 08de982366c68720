// The composition root's factory: everything a request handler, a job or a staff command
// needs, wired once. The HTTP surfaces, the worker and the admin CLI all take a Deps.

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { resolveSecretKey } from './crypto/secret-key.ts';
import { APP_QUEUES, type AppJobs } from './jobs/catalog.ts';
import { JobQueue } from './jobs/queue.ts';
import { type Clock, systemClock } from './time.ts';

export interface Deps {
  config: Config;
  logger: Logger;
  database: Database;
  jobs: JobQueue<AppJobs>;
  secretKey: Buffer;
  clock: Clock;
}

export interface DepsOverrides {
  clock?: Clock;
  secretKey?: Buffer;
}

/** Wire the core over an open, migrated database and start the job queue (not its workers). */
export async function createDeps(
  config: Config,
  database: Database,
  logger: Logger,
  overrides: DepsOverrides = {},
): Promise<Deps> {
  const jobs = new JobQueue(database, APP_QUEUES, logger.child({ component: 'jobs' }));
  await jobs.start();
  return {
    config,
    logger,
    database,
    jobs,
    secretKey: overrides.secretKey ?? resolveSecretKey(config),
    clock: overrides.clock ?? systemClock,
  };
}

/** Stop what createDeps started. The database is closed by whoever opened it. */
export async function closeDeps(deps: Deps): Promise<void> {
  await deps.jobs.stop();
}
