// A worker process of the kill drills (kill-drills.test.ts), run with runNode (./process.ts): what
// `npm run worker` runs (main.ts --role=worker: loadConfig(process.env) — HOSTPLANE_CRASH_AT
// included —, the database, createDeps, startWorker), with the upstream timing and retry policy of
// every provisioning test (./timing.ts) and `argv[2]` provisioning jobs at once (one per pg-boss
// worker of the queue, core/jobs/queue.ts), so that every job a drill holds at its crash point is
// running when the worker kills itself. `argv[3]`: provisioning's retry limit (the API's, so that the queue's policy stays
// one). SIGTERM stops it as main.ts does: the queue drains, the database closes, exit status 0.

import { loadConfig } from '../../src/config.ts';
import { closeDeps, createDeps } from '../../src/core/deps.ts';
import { openDatabase, targetFromConfig } from '../../src/db/database.ts';
import { createLogger, flushProcessLog } from '../../src/logging.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { TEST_DRIVER_TIMING, testQueues } from './timing.ts';

const batch = Number(process.argv[2] ?? 4);
const retryLimit = Number(process.argv[3] ?? 3);
const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
const database = await openDatabase(targetFromConfig(config, 'a kill-drill worker'), logger);
const queues = testQueues(retryLimit);
const deps = await createDeps(config, database, logger, {
  driverTiming: TEST_DRIVER_TIMING,
  queues: { ...queues, 'service.provision': { ...queues['service.provision'], concurrency: batch } },
});
await startWorker(deps);
logger.warn({ batch, retryLimit }, 'kill-drill worker running');

process.once('SIGTERM', () => {
  closeDeps(deps)
    .then(() => database.close())
    .then(
      async () => {
        await flushProcessLog(1000);
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'kill-drill worker: stop failed');
        process.exit(1);
      },
    );
});
