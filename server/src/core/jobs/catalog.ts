// Every job the worker runs: its name, its payload, and its retry policy. Enqueue with
// `deps.jobs.enqueue(trx, name, payload)`; handlers live in server/src/worker/.

import type { QueueDefinitions } from './queue.ts';

export type AppJobs = {
  /** Deliver one row of mail_outbox. */
  'mail.send': { outboxId: number };
  /** Periodic clean-up of expired sessions, tokens and codes (scheduled by the worker). */
  'maintenance.sweep': Record<string, never>;
  /** The billing cycle (CONTRACT §7), every 5 minutes: reminders, renewals, overdue suspension and termination. */
  'billing.cycle': Record<string, never>;
  /** Provision or reinstall a service: one row of `jobs`, run step by step, resumable. */
  'service.provision': { jobId: number };
  /** Power signals, snapshot changes, suspension, termination: one row of `jobs`. */
  'service.action': { jobId: number };
  /** Build one data export of an account (CONTRACT §11): one row of `account_exports`. */
  'account.export': { exportId: number };
  /** Erase the accounts whose scheduled deletion is due (CONTRACT §11), every hour. */
  'account.deletions': Record<string, never>;
  /** Scheduled backups (core/backups/scheduler.ts), every minute: start due runs, record outcomes. */
  'backups.run': Record<string, never>;
};

export const APP_QUEUES: QueueDefinitions<AppJobs> = {
  // ~10 attempts over about 17 hours: 30 s, 1 min, 2 min, … capped at 4 h.
  'mail.send': {
    retryLimit: 10,
    retryDelay: 30,
    retryBackoff: true,
    retryDelayMax: 4 * 3600,
    expireInSeconds: 120,
    concurrency: 5,
  },
  'maintenance.sweep': { retryLimit: 1, retryDelay: 60, retryBackoff: false, expireInSeconds: 600, concurrency: 1 },
  // Exactly once per service and period however often it runs (the database decides), so a
  // failed run is simply the next one's work.
  'billing.cycle': { retryLimit: 0, retryDelay: 60, retryBackoff: false, expireInSeconds: 600, concurrency: 1 },
  // Upstream trouble is retried with backoff for about half an hour (10 s … 5 min) before the
  // job gives up and compensates; a worker that dies mid-job stops its heartbeat and the job is
  // picked up again within a minute.
  'service.provision': {
    retryLimit: 8,
    retryDelay: 10,
    retryBackoff: true,
    retryDelayMax: 300,
    expireInSeconds: 900,
    heartbeatSeconds: 15,
    concurrency: 4,
  },
  'service.action': {
    retryLimit: 3,
    retryDelay: 5,
    retryBackoff: true,
    retryDelayMax: 60,
    expireInSeconds: 600,
    heartbeatSeconds: 15,
    concurrency: 4,
  },
  // A failed build is tried twice more; after the last the export is marked failed.
  'account.export': { retryLimit: 2, retryDelay: 30, retryBackoff: true, expireInSeconds: 600, concurrency: 1 },
  // Each account in its own transaction, decided by the database: a failed run is the next one's work.
  'account.deletions': { retryLimit: 0, retryDelay: 60, retryBackoff: false, expireInSeconds: 900, concurrency: 1 },
  // Each schedule in its own transaction under SKIP LOCKED: a failed pass is simply the next one's work.
  'backups.run': { retryLimit: 0, retryDelay: 60, retryBackoff: false, expireInSeconds: 300, concurrency: 1 },
};
