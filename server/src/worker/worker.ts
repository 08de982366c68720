// The job worker: binds every queue of the catalogue to its handler. Runs inside `npm start`
// (with the API) or alone under `npm run worker` (PostgreSQL only).

import type { Deps } from '../core/deps.ts';
import { sweep, vacuumEmbedded } from '../core/housekeeping.ts';
import type { AppJobs } from '../core/jobs/catalog.ts';
import type { JobHandlers } from '../core/jobs/queue.ts';
import { expireActivity, retryCleanups } from './cleanup.ts';
import { type CrashPoints, crashPoints, NO_CRASH_POINTS } from './crash-point.ts';
import { runServiceJob } from './job-run.ts';

export function jobHandlers(deps: Deps, crash: CrashPoints = NO_CRASH_POINTS): JobHandlers<AppJobs> {
  return {
    'mail.send': (payload, context) => deps.mailer.deliver(payload.outboxId, context),
    'maintenance.sweep': async (_payload, context) => {
      const started = performance.now();
      const removed = await sweep(deps.database.db, deps.clock());
      const cleanups = await retryCleanups(deps, context.logger);
      const activity = await expireActivity(deps);
      if (deps.database.engine === 'pglite') await vacuumEmbedded(deps.database.db);
      context.logger.info(
        { removed: { ...removed, activity }, cleanups, ms: Math.round(performance.now() - started) },
        'maintenance sweep',
      );
    },
    'billing.cycle': async (_payload, context) => {
      const actions = await deps.billing.run();
      if (actions.length > 0) context.logger.info({ actions: actions.length, billing: actions }, 'billing cycle');
    },
    // Both service queues run a service's job the same way (./job-run.ts); they differ in how long
    // a job is retried: provisioning and reinstalls for long, power, snapshots and staff's
    // suspensions and terminations briefly (core/jobs/catalog.ts).
    'service.provision': (payload, context) => runServiceJob(deps, payload.jobId, context, crash),
    'service.action': (payload, context) => runServiceJob(deps, payload.jobId, context, crash),
    'account.export': (payload, context) => deps.privacy.exports.build(payload.exportId, context),
    'backups.run': async (_payload, context) => {
      const actions = await deps.backups.run();
      if (actions.length > 0) context.logger.info({ backups: actions }, 'scheduled backups');
    },
    'account.deletions': async (_payload, context) => {
      const actions = await deps.privacy.runDeletions();
      if (actions.length > 0) context.logger.info({ deletions: actions }, 'account deletions');
    },
  };
}

export async function startWorker(deps: Deps): Promise<void> {
  // Failure drills only (HOSTPLANE_CRASH_AT, docs/RELIABILITY.md): an unknown product or step stops the start.
  const crash = crashPoints(deps.config.crashAt, deps.products);
  if (deps.config.crashAt.length > 0) {
    deps.logger.warn({ crashAt: deps.config.crashAt }, 'HOSTPLANE_CRASH_AT: this worker kills itself at these points');
  }
  await deps.jobs.work(jobHandlers(deps, crash));
  // Every 15 minutes, on whichever worker process pg-boss's scheduler picks.
  await deps.jobs.schedule('maintenance.sweep', '*/15 * * * *');
  await deps.jobs.schedule('billing.cycle', '*/5 * * * *');
  await deps.jobs.schedule('account.deletions', '7 * * * *');
  await deps.jobs.schedule('backups.run', '* * * * *');
  // Webhook deliveries: a pass whenever an event commits and when the next retry falls due.
  deps.webhooks.dispatcher.start(deps.bus);
}
