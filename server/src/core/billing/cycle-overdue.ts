// The cycle's last phase for one service (billing.service.ts explains the cycle): with nothing
// unpaid, the reminder before the period ends and lifting an overdue suspension; with an unpaid
// order, suspending the service after the grace days and terminating it after the termination
// days, both counted from paid_until.

import type { Order, Service } from '../../db/tables.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import { formatPaise } from '../money.ts';
import { recordEvent } from '../services/events.ts';
import { startJob } from '../services/service-jobs.ts';
import { balanceOf } from '../wallet/ledger.ts';
import * as repo from './billing.repository.ts';
import { chargeFor } from './charge.ts';
import { type CycleStep, DAY_MS, REMINDER_DAYS } from './cycle-step.ts';
import { day, liftOverdue, tell } from './payments.ts';

/** Nothing is unpaid: the reminder, once per period, three days before; an overdue suspension lifted. */
export async function remindOrLift(step: CycleStep, current: Service): Promise<void> {
  const { options, trx, at, dryRun, did } = step;
  const due = current.period_end as Date;
  if (current.status === 'active' && due > at && due.getTime() - at.getTime() <= REMINDER_DAYS * DAY_MS) {
    const sent = dryRun
      ? current.reminded_for?.getTime() !== due.getTime()
      : await repo.markReminded(trx, current.id, due);
    if (sent) {
      if (!dryRun) {
        const charge = await chargeFor(trx, options.invoicing, current.account_id, current.price_paise);
        const covered = BigInt(await balanceOf(trx, current.account_id)) >= charge.totalPaise;
        await tell(options, trx, current, 'renewal_reminder', `${current.label} renews on ${day(due)}`, [
          `${current.label} renews on ${day(due)} for ₹${formatPaise(charge.totalPaise)}, taken from your wallet.`,
          covered
            ? 'Your wallet covers it.'
            : 'Your wallet does not cover it yet: top it up before then to keep the service running.',
        ]);
      }
      did('reminded', `renews on ${day(due)}`);
    }
  }
  if (!dryRun && (await liftOverdue(options, trx, current))) did('unsuspended', 'nothing is unpaid any more');
}

/**
 * Overdue: suspended after the grace days, terminated after the termination days, both counted
 * from paid_until (what the service is paid until, whatever order is open). `first` is the
 * oldest order owed.
 */
export async function enforceOverdue(step: CycleStep, current: Service, first: Order): Promise<void> {
  const { options, trx, at, dryRun, did } = step;
  const since = current.period_end as Date;
  const busy = await jobRepo.activeForService(trx, current.id);
  if (at.getTime() >= since.getTime() + options.terminateDays * DAY_MS) {
    if (busy) return void did('skipped', `termination waits for its ${busy.type} job`);
    if (dryRun) return void did('terminated', `would terminate: unpaid since ${day(since)}`);
    // The unpaid order is cancelled when the termination is done (lifecycle.terminated): a
    // termination the panel refuses leaves it, and the next run tries again.
    await startJob(trx, options.jobs, {
      accountId: current.account_id,
      serviceId: current.id,
      type: 'terminate',
      params: { reason: 'overdue' },
    });
    await recordEvent(trx, current.id, 'terminating_overdue', `Terminated: unpaid since ${day(since)}`);
    await tell(options, trx, current, 'service_terminating', `${current.label} is being deleted`, [
      `The renewal of ${current.label} has been unpaid since ${day(since)}, so it is being deleted with its data.`,
      'Its unpaid order is cancelled; nothing more is owed.',
    ]);
    did('terminated', `unpaid since ${day(since)}`);
  } else if (at.getTime() >= since.getTime() + options.graceDays * DAY_MS && current.status === 'active') {
    if (busy) return void did('skipped', `suspension waits for its ${busy.type} job`);
    if (dryRun) return void did('suspended', `would suspend: unpaid since ${day(since)}`);
    await startJob(trx, options.jobs, {
      accountId: current.account_id,
      serviceId: current.id,
      type: 'suspend',
      params: { reason: 'overdue' },
    });
    await tell(options, trx, current, 'service_suspending', `${current.label} is being suspended`, [
      `The renewal of ${current.label} (order ${first.public_id}, ₹${formatPaise(first.amount_paise)}) has been unpaid since ${day(since)}.`,
      `It is being suspended; pay the order and it comes back. It is deleted ${options.terminateDays} days after ${day(since)}.`,
    ]);
    did('suspended', `unpaid since ${day(since)}`);
  }
}
