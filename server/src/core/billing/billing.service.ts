// The billing cycle (CONTRACT §7, issue 14): every service is paid until `period_end`
// (paid_until). Three days before it the client is reminded; at it the service renews from the
// wallet (a `renewal` ledger row and a paid renewal order) or, when the wallet cannot cover it,
// an unpaid renewal order is made and the service is overdue. GRACE_DAYS after paid_until an
// overdue service is suspended on its panel (reason `overdue`), TERMINATE_DAYS after it is
// terminated and its unpaid order cancelled. Paying (the client's `pay`, or automatically,
// oldest first, when a deposit is approved or staff credit the wallet) renews it and lifts an
// overdue suspension — never a suspension staff made or the client asked for. The grace and
// termination days count from paid_until; a client's renew pays what is owed first, and an
// unpaid order the service is already paid past is cancelled (payments.ts).
//
// Exactly once: a renewal order names the period it pays for (`renews_from`), and the unique
// index on (service, renews_from) decides — two runs at once, or a run after a crash, insert
// nothing the second time. The reminder is one conditional update of `reminded_for`. Each
// service is handled in its own transaction under a lock on its row, so a run killed midway
// leaves every service either done or untouched, and suspensions and terminations are queued
// as the service's one job (a service with a job running is left for the next run).
//
// This file composes `deps.billing`: the run (cycle.ts and its phases, cycle-*.ts), the
// payments (payments.ts, client-payments.ts) and the account's summary. Its queries on orders
// are in billing.repository.ts.

import type { Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { byClient, type Who } from '../activity/activity.ts';
import * as repo from './billing.repository.ts';
import { chargeOfPrice, monthlyCharge } from './charge.ts';
import { pay, renew } from './client-payments.ts';
import { runCycle } from './cycle.ts';
import type { BillingAction, BillingOptions } from './cycle-step.ts';
import { settle } from './payments.ts';

export type { BillingAction, BillingActionKind, BillingOptions } from './cycle-step.ts';
export { REMINDER_DAYS } from './cycle-step.ts';

export function createBilling(options: BillingOptions) {
  const { db } = options;
  return {
    /** Money came in (a staff credit, an approved deposit): pay unpaid renewal orders, oldest first. */
    settle: (trx: Transaction<DB>, accountId: number) => settle(options, trx, accountId),

    /**
     * Run the cycle as at `at` (default now) for every service it concerns (of one account with
     * `accountId`). Returns what it did, per service; a service that fails is reported skipped.
     */
    run: (input: { at?: Date; dryRun?: boolean; accountId?: number } = {}): Promise<BillingAction[]> =>
      runCycle(options, input),

    /** The client pays one of its unpaid orders (POST /orders/ {action: "pay", id}). */
    pay: (accountId: number, orderId: number, who: Who = byClient(null)) => pay(options, accountId, orderId, who),

    /** The client renews a service (POST /services/ {action: "renew"}): what is owed first. */
    renew: (accountId: number, serviceId: number, who: Who = byClient(null)) =>
      renew(options, accountId, serviceId, who),

    /**
     * What the account pays and owes: the monthly run-rate, unpaid orders with their total, the
     * next renewals with what each will charge. Amounts are what the wallet is charged (with GST
     * when prices exclude it, charge.ts).
     */
    async summary(accountId: number) {
      const [rate, unpaid, renewals] = await Promise.all([
        monthlyCharge(db, options.invoicing, accountId),
        repo.ownUnpaidWithService(db, accountId),
        repo.ownNextRenewals(db, accountId),
      ]);
      const unpaidTotal = unpaid.reduce((sum, o) => sum + BigInt(o.amount_paise), 0n);
      const next = renewals.map((s) => ({
        ...s,
        // The plan and each add-on that is on, each charged as its own line (addons.ts renewalCharge).
        chargePaise:
          chargeOfPrice(options.invoicing, s.price_paise).totalPaise +
          (s.addon_paise !== null && BigInt(s.addon_paise) > 0n
            ? chargeOfPrice(options.invoicing, s.addon_paise).totalPaise
            : 0n),
      }));
      return { monthlyRunRatePaise: rate, unpaid, unpaidTotalPaise: unpaidTotal, next };
    },
  };
}

export type Billing = ReturnType<typeof createBilling>;
