// The billing cycle's run (billing.service.ts explains the cycle): pick the services it
// concerns, then give each its turn in its own transaction under a lock on its row, so a run
// killed midway leaves every service either done or untouched. A turn goes through the phases
// in order: renewal (cycle-renewal.ts), then reminder or overdue (cycle-overdue.ts).

import type { Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import * as services from '../services/service.repository.ts';
import { lockWallet } from '../wallet/ledger.ts';
import * as repo from './billing.repository.ts';
import { enforceOverdue, remindOrLift } from './cycle-overdue.ts';
import { billEndedPeriods, cancelOvertakenOrders, payWithWaitingMoney } from './cycle-renewal.ts';
import { type BillingAction, type BillingOptions, type CycleStep, DAY_MS, REMINDER_DAYS } from './cycle-step.ts';
import { overtaken } from './payments.ts';

/**
 * Run the cycle as at `at` (default now) for every service it concerns (of one account with
 * `accountId`). Returns what it did, per service; a service that fails is reported skipped.
 */
export async function runCycle(
  options: BillingOptions,
  input: { at?: Date; dryRun?: boolean; accountId?: number } = {},
): Promise<BillingAction[]> {
  const at = input.at ?? options.clock();
  const horizon = new Date(at.getTime() + REMINDER_DAYS * DAY_MS);
  const candidates = await repo.dueServices(options.db, horizon, input.accountId);
  const actions: BillingAction[] = [];
  for (const candidate of candidates) {
    try {
      actions.push(...(await turn(options, candidate.id, at, input.dryRun === true)));
    } catch (error) {
      options.logger.warn({ err: error, service: candidate.id }, 'billing: a service could not be handled');
      actions.push({
        service: candidate.id,
        label: candidate.label,
        account: candidate.account_id,
        action: 'skipped',
        detail: error instanceof AppError ? error.message : 'failed; retried on the next run',
      });
    }
  }
  return actions;
}

/** One service at `at`: what the cycle does to it, in one transaction (nothing written on a dry run). */
async function turn(options: BillingOptions, serviceId: number, at: Date, dryRun: boolean): Promise<BillingAction[]> {
  const out: BillingAction[] = [];
  const work = (trx: Transaction<DB>) => phases(options, trx, serviceId, at, dryRun, out);
  if (dryRun) {
    // Read-only: run in a transaction that is always rolled back.
    await options.db
      .transaction()
      .execute(async (trx) => {
        await work(trx);
        throw new DryRun();
      })
      .catch((error: unknown) => {
        if (!(error instanceof DryRun)) throw error;
      });
  } else {
    await options.db.transaction().execute(work);
  }
  return out;
}

async function phases(
  options: BillingOptions,
  trx: Transaction<DB>,
  serviceId: number,
  at: Date,
  dryRun: boolean,
  out: BillingAction[],
): Promise<void> {
  // The account's wallet first, as every money path does (see lockWallet).
  const accountId = await services.ownerOf(trx, serviceId);
  if (accountId === undefined) return;
  if (!dryRun) await lockWallet(trx, accountId);
  const service = await services.lockOwn(trx, accountId, serviceId);
  if (!service || (service.status !== 'active' && service.status !== 'suspended') || !service.period_end) return;
  const step: CycleStep = {
    options,
    trx,
    at,
    dryRun,
    did: (action, detail) =>
      out.push({ service: service.id, label: service.label, account: service.account_id, action, detail }),
  };

  await cancelOvertakenOrders(step, service);
  let current = await billEndedPeriods(step, service);
  if (!dryRun) current = await payWithWaitingMoney(step, current);
  // (On a dry run the overtaken orders are still there: they are not owed.)
  const unpaid = (await repo.unpaidRenewalsOf(trx, current.id)).filter((o) => !overtaken(o, current));
  const first = unpaid[0];
  if (!first) await remindOrLift(step, current);
  else await enforceOverdue(step, current, first);
}

class DryRun extends Error {}
