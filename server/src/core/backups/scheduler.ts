// The backup scheduler (CONTRACT §13, docs/backups.md), run by the worker every minute (queue
// `backups.run`) and by tests with the time they choose. One pass:
// 1. Records what the scheduled snapshot jobs it queued came to: a success clears last_error;
//    a failure (after the job's own retries) sets last_error and tells the owner (a notification
//    and an e-mail) — once, because the row's `job_id` is cleared in the same statement.
// 2. Starts the runs that are due: for each schedule whose `next_run_at` has passed, in its own
//    transaction under a lock on its row taken with SKIP LOCKED and the due condition checked
//    again under it, it queues the service's `snapshot` job (change `auto`, core/products/vps/
//    backups.ts) and moves `next_run_at` to the first slot after now. So two workers never both
//    run one slot, and a scheduler that was down for days runs each schedule once, not once per
//    missed slot. A server busy with another job is tried again on the next passes, for up to an
//    hour after the slot; then the run is skipped (last_error says why). A suspended server's
//    run is skipped too, and a terminated server's schedule is turned off.

import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { BackupSchedule, DB, Service } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../mail/mailer.ts';
import { notify } from '../notifications/notification.service.ts';
import { recordEvent } from '../services/events.ts';
import { startJob } from '../services/service-jobs.ts';
import { istTime } from '../time.ts';
import { autoSnapshotName, nextRunAt } from './schedule.ts';

/** How long after its slot a run waits for the server's other job to finish before it is skipped. */
export const BUSY_GRACE_MS = 3_600_000;
/** Schedules started per pass (the rest are the next pass's). */
const BATCH = 200;

export interface BackupSchedulerOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  mailer: Mailer;
  clock: () => Date;
  logger: Logger;
}

export interface BackupRunAction {
  service: number;
  action: 'queued' | 'waiting' | 'skipped' | 'succeeded' | 'failed' | 'turned_off';
  detail: string;
}

const clip = (text: string) => (text.length > 500 ? `${text.slice(0, 497)}...` : text);

/** The owner hears that a scheduled backup failed: a notification and an e-mail, in `trx`. */
async function tellFailed(options: BackupSchedulerOptions, trx: Transaction<DB>, serviceId: number, why: string) {
  const row = await trx
    .selectFrom('services as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select(['s.label', 'a.id', 'a.name', 'a.email'])
    .where('s.id', '=', serviceId)
    .executeTakeFirstOrThrow();
  const subject = `Scheduled backup of ${row.label} failed`;
  const paragraphs = [
    `The scheduled backup of ${row.label} failed: ${why}`,
    'Your earlier automatic snapshots are kept. The next scheduled backup runs at its usual time; you can also take a snapshot by hand.',
  ];
  await notify(trx, row.id, {
    kind: 'backup_failed',
    title: subject,
    body: paragraphs.join(' '),
    data: { service: serviceId },
  });
  await options.mailer.queue(trx, row.email, { template: 'billing', name: row.name, subject, paragraphs }, row.id);
}

/** Step 1: the outcome of each finished scheduled job, recorded once. */
async function recordOutcomes(options: BackupSchedulerOptions, out: BackupRunAction[]): Promise<void> {
  const { db } = options;
  const finished = await db
    .selectFrom('backup_schedules as b')
    .innerJoin('jobs as j', 'j.id', 'b.job_id')
    .select(['b.service_id', 'j.id as job_id', 'j.status', 'j.error_message', 'j.finished_at'])
    .where('j.status', 'in', ['succeeded', 'failed'])
    .execute();
  for (const f of finished) {
    await db.transaction().execute(async (trx) => {
      const failed = f.status === 'failed';
      const why = clip(f.error_message ?? 'the node did not take the snapshot.');
      const updated = await trx
        .updateTable('backup_schedules')
        .set({ job_id: null, last_run_at: f.finished_at ?? options.clock(), last_error: failed ? why : null })
        .where('service_id', '=', f.service_id)
        .where('job_id', '=', f.job_id)
        .returning('service_id')
        .executeTakeFirst();
      // Another pass recorded it first.
      if (!updated) return;
      if (failed) await tellFailed(options, trx, f.service_id, why);
      out.push({ service: f.service_id, action: failed ? 'failed' : 'succeeded', detail: failed ? why : 'taken' });
    });
  }
}

/** Step 2 for one schedule: start its run, wait, or skip it. */
async function startRun(
  options: BackupSchedulerOptions,
  trx: Transaction<DB>,
  schedule: BackupSchedule,
  service: Service,
  at: Date,
): Promise<BackupRunAction> {
  const slot = schedule.next_run_at as Date;
  const next = nextRunAt(schedule, at);
  const skip = async (why: string): Promise<BackupRunAction> => {
    await trx
      .updateTable('backup_schedules')
      .set({ next_run_at: next, last_error: clip(why), updated_at: at })
      .where('service_id', '=', schedule.service_id)
      .execute();
    return { service: service.id, action: 'skipped', detail: why };
  };
  if (service.status === 'terminated') {
    await trx
      .updateTable('backup_schedules')
      .set({ frequency: 'off', next_run_at: null, updated_at: at })
      .where('service_id', '=', schedule.service_id)
      .execute();
    return { service: service.id, action: 'turned_off', detail: 'the server is terminated' };
  }
  if (service.status !== 'active')
    return skip(`Skipped the backup of ${istTime(slot)}: the server is ${service.status}.`);
  try {
    const job = await startJob(trx, options.jobs, {
      accountId: service.account_id,
      serviceId: service.id,
      type: 'snapshot',
      params: { action: 'auto', name: autoSnapshotName(at), keep: schedule.keep, slot: slot.toISOString() },
    });
    await trx
      .updateTable('backup_schedules')
      .set({ next_run_at: next, job_id: job.id, updated_at: at })
      .where('service_id', '=', schedule.service_id)
      .execute();
    await recordEvent(trx, service.id, 'backup_started', `Scheduled backup started (${autoSnapshotName(at)})`);
    return { service: service.id, action: 'queued', detail: autoSnapshotName(at) };
  } catch (error) {
    if (!(error instanceof AppError) || !['locked', 'reinstall_running'].includes(error.code)) throw error;
    if (at.getTime() - slot.getTime() < BUSY_GRACE_MS)
      return { service: service.id, action: 'waiting', detail: 'another job of the server is running' };
    return skip(`Skipped the backup of ${istTime(slot)}: another job of the server ran for over an hour.`);
  }
}

/** One pass of the scheduler as at `at` (default now): what it did, per schedule. */
export async function runBackups(
  options: BackupSchedulerOptions,
  input: { at?: Date } = {},
): Promise<BackupRunAction[]> {
  const { db } = options;
  const at = input.at ?? options.clock();
  const out: BackupRunAction[] = [];
  await recordOutcomes(options, out);
  const due = await db
    .selectFrom('backup_schedules')
    .select('service_id')
    .where('next_run_at', '<=', at)
    .where('job_id', 'is', null)
    .orderBy('next_run_at')
    .limit(BATCH)
    .execute();
  for (const { service_id } of due) {
    try {
      const action = await db.transaction().execute(async (trx) => {
        // Under the row's lock, and still due: another worker that got here first moved it on.
        const schedule = await trx
          .selectFrom('backup_schedules')
          .selectAll()
          .where('service_id', '=', service_id)
          .where('next_run_at', '<=', at)
          .where('job_id', 'is', null)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!schedule) return null;
        const service = await trx
          .selectFrom('services')
          .selectAll()
          .where('id', '=', service_id)
          .executeTakeFirstOrThrow();
        return startRun(options, trx, schedule, service, at);
      });
      if (action) out.push(action);
    } catch (error) {
      options.logger.warn({ err: error, service: service_id }, 'backups: a schedule could not be started');
    }
  }
  return out;
}
