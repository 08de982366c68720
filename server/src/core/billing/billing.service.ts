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

import { type Kysely, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { startJob } from '../jobs/service-jobs.ts';
import type { Mailer } from '../mail/mailer.ts';
import { formatPaise } from '../money.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { balanceOf, lockWallet } from '../wallet/ledger.ts';
import { createPayments, day, overtaken } from './payments.ts';

export const REMINDER_DAYS = 3;
const DAY_MS = 86_400_000;

export type BillingActionKind =
  | 'reminded'
  | 'renewed'
  | 'unpaid'
  | 'suspended'
  | 'unsuspended'
  | 'terminated'
  | 'cancelled'
  | 'skipped';

export interface BillingAction {
  service: number;
  label: string;
  account: number;
  action: BillingActionKind;
  detail: string;
}

export interface BillingOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  mailer: Mailer;
  clock: () => Date;
  graceDays: number;
  terminateDays: number;
  logger: Logger;
}

export function createBilling(options: BillingOptions) {
  const { db, jobs, mailer, clock, graceDays, terminateDays } = options;

  const payments = createPayments({ db, jobs, mailer, clock });
  const { tell, unpaidOf, payOrder, liftOverdue } = payments;

  /** One service at `at`: what the cycle does to it, in one transaction (nothing written on a dry run). */
  async function step(serviceId: number, at: Date, dryRun: boolean): Promise<BillingAction[]> {
    const out: BillingAction[] = [];
    const work = async (trx: Transaction<DB>) => {
      // The account's wallet first, as every money path does (see lockWallet).
      const owner = await trx
        .selectFrom('services')
        .select('account_id')
        .where('id', '=', serviceId)
        .executeTakeFirst();
      if (!owner) return;
      if (!dryRun) await lockWallet(trx, owner.account_id);
      const service = await trx
        .selectFrom('services')
        .selectAll()
        .where('id', '=', serviceId)
        .forUpdate()
        .executeTakeFirst();
      if (!service || (service.status !== 'active' && service.status !== 'suspended') || !service.period_end) return;
      const did = (action: BillingActionKind, detail: string) =>
        out.push({ service: service.id, label: service.label, account: service.account_id, action, detail });
      let current = service;

      // An unpaid order the service is already paid past (a renew bought that month beside it,
      // before renew paid what is owed first) is cancelled: never charged, never a reason to
      // suspend or terminate.
      for (const order of await unpaidOf(trx, current.id)) {
        if (!overtaken(order, current)) continue;
        if (dryRun) {
          did('cancelled', `would cancel order ${order.public_id}: paid until ${day(current.period_end as Date)}`);
          continue;
        }
        await payments.cancelOvertaken(trx, order, current);
        did('cancelled', `order ${order.public_id} cancelled: paid until ${day(current.period_end as Date)}`);
      }

      // Renewals: one order per period, as many periods as have ended (a long outage of the cycle).
      while (current.period_end && current.period_end <= at) {
        const from = current.period_end;
        const covered = BigInt(await balanceOf(trx, current.account_id)) >= BigInt(current.price_paise);
        if (dryRun) {
          const existing = await trx
            .selectFrom('orders')
            .select('id')
            .where('service_id', '=', current.id)
            .where('renews_from', '=', from)
            .executeTakeFirst();
          if (!existing)
            did(covered ? 'renewed' : 'unpaid', `would ${covered ? 'renew' : 'bill'} the period from ${day(from)}`);
          break;
        }
        const order = await trx
          .insertInto('orders')
          .values({
            public_id: publicId('order'),
            account_id: current.account_id,
            plan_id: current.plan_id,
            service_id: current.id,
            kind: 'renewal',
            status: 'unpaid',
            amount_paise: current.price_paise,
            location_id: current.location_id,
            renews_from: from,
          })
          .onConflict((oc) =>
            oc.columns(['service_id', 'renews_from']).where('renews_from', 'is not', null).doNothing(),
          )
          .returningAll()
          .executeTakeFirst();
        // Already billed (an earlier run, or one running now): its unpaid order is below.
        if (!order) break;
        if (covered) {
          current = (await payOrder(trx, order, at)).service;
          did('renewed', `renewed from the wallet until ${day(current.period_end as Date)}`);
          continue;
        }
        await recordEvent(
          trx,
          current.id,
          'renewal_unpaid',
          `Renewal unpaid: ₹${formatPaise(order.amount_paise)} due`,
          {
            order: order.public_id,
          },
        );
        await tell(trx, current, 'renewal_unpaid', `Renewal of ${current.label} is unpaid`, [
          `Your wallet does not cover the renewal of ${current.label} (₹${formatPaise(order.amount_paise)}, order ${order.public_id}).`,
          `Top up the wallet or pay the order: ${current.label} is suspended ${graceDays} days after ${day(from)} and deleted ${terminateDays} days after it.`,
        ]);
        did('unpaid', `order ${order.public_id} of ₹${formatPaise(order.amount_paise)} is unpaid`);
        break;
      }

      // Money that arrived without paying (a credit racing the order's creation): pay now.
      if (!dryRun) {
        for (const order of await unpaidOf(trx, current.id)) {
          if (BigInt(await balanceOf(trx, current.account_id)) < BigInt(order.amount_paise)) break;
          if (await jobRepo.activeForService(trx, current.id)) break;
          const payment = await payOrder(trx, order, at);
          current = payment.service;
          if (payment.paid) did('renewed', `order ${order.public_id} paid from the wallet`);
        }
      }
      // (On a dry run the overtaken orders are still there: they are not owed.)
      const unpaid = (await unpaidOf(trx, current.id)).filter((o) => !overtaken(o, current));
      const first = unpaid[0];
      if (!first) {
        // The reminder, once per period, three days before.
        const due = current.period_end as Date;
        if (current.status === 'active' && due > at && due.getTime() - at.getTime() <= REMINDER_DAYS * DAY_MS) {
          const sent = dryRun
            ? current.reminded_for?.getTime() !== due.getTime()
            : (await trx
                .updateTable('services')
                .set({ reminded_for: due })
                .where('id', '=', current.id)
                .where((eb) => eb.or([eb('reminded_for', 'is', null), eb('reminded_for', '!=', due)]))
                .executeTakeFirst()
                .then((r) => Number(r.numUpdatedRows))) > 0;
          if (sent) {
            if (!dryRun) {
              const covered = BigInt(await balanceOf(trx, current.account_id)) >= BigInt(current.price_paise);
              await tell(trx, current, 'renewal_reminder', `${current.label} renews on ${day(due)}`, [
                `${current.label} renews on ${day(due)} for ₹${formatPaise(current.price_paise)}, taken from your wallet.`,
                covered
                  ? 'Your wallet covers it.'
                  : 'Your wallet does not cover it yet: top it up before then to keep the service running.',
              ]);
            }
            did('reminded', `renews on ${day(due)}`);
          }
        }
        if (!dryRun && (await liftOverdue(trx, current))) did('unsuspended', 'nothing is unpaid any more');
        return;
      }

      // Overdue: suspended after the grace days, terminated after the termination days, both
      // counted from paid_until (what the service is paid until, whatever order is open).
      const since = current.period_end as Date;
      const busy = await jobRepo.activeForService(trx, current.id);
      if (at.getTime() >= since.getTime() + terminateDays * DAY_MS) {
        if (busy) return void did('skipped', `termination waits for its ${busy.type} job`);
        if (dryRun) return void did('terminated', `would terminate: unpaid since ${day(since)}`);
        // The unpaid order is cancelled when the termination is done (lifecycle.terminated): a
        // termination the panel refuses leaves it, and the next run tries again.
        await startJob(trx, jobs, {
          accountId: current.account_id,
          serviceId: current.id,
          type: 'terminate',
          params: { reason: 'overdue' },
        });
        await recordEvent(trx, current.id, 'terminating_overdue', `Terminated: unpaid since ${day(since)}`);
        await tell(trx, current, 'service_terminating', `${current.label} is being deleted`, [
          `The renewal of ${current.label} has been unpaid since ${day(since)}, so it is being deleted with its data.`,
          'Its unpaid order is cancelled; nothing more is owed.',
        ]);
        did('terminated', `unpaid since ${day(since)}`);
      } else if (at.getTime() >= since.getTime() + graceDays * DAY_MS && current.status === 'active') {
        if (busy) return void did('skipped', `suspension waits for its ${busy.type} job`);
        if (dryRun) return void did('suspended', `would suspend: unpaid since ${day(since)}`);
        await startJob(trx, jobs, {
          accountId: current.account_id,
          serviceId: current.id,
          type: 'suspend',
          params: { reason: 'overdue' },
        });
        await tell(trx, current, 'service_suspending', `${current.label} is being suspended`, [
          `The renewal of ${current.label} (order ${first.public_id}, ₹${formatPaise(first.amount_paise)}) has been unpaid since ${day(since)}.`,
          `It is being suspended; pay the order and it comes back. It is deleted ${terminateDays} days after ${day(since)}.`,
        ]);
        did('suspended', `unpaid since ${day(since)}`);
      }
    };
    if (dryRun) {
      // Read-only: run in a transaction that is always rolled back.
      await db
        .transaction()
        .execute(async (trx) => {
          await work(trx);
          throw new DryRun();
        })
        .catch((error: unknown) => {
          if (!(error instanceof DryRun)) throw error;
        });
    } else {
      await db.transaction().execute(work);
    }
    return out;
  }

  return {
    /** Money came in (a staff credit, an approved deposit): pay unpaid renewal orders, oldest first. */
    settle: payments.settle,

    /**
     * Run the cycle as at `at` (default now) for every service it concerns (of one account with
     * `accountId`). Returns what it did, per service; a service that fails is reported skipped.
     */
    async run(input: { at?: Date; dryRun?: boolean; accountId?: number } = {}): Promise<BillingAction[]> {
      const at = input.at ?? clock();
      const horizon = new Date(at.getTime() + REMINDER_DAYS * DAY_MS);
      let query = db
        .selectFrom('services')
        .select(['id', 'label', 'account_id'])
        .where('status', 'in', ['active', 'suspended'])
        .where((eb) =>
          eb.or([
            eb('period_end', '<=', horizon),
            eb('suspend_reason', '=', 'overdue'),
            eb.exists(
              eb
                .selectFrom('orders')
                .select(sql`1`.as('one'))
                .whereRef('orders.service_id', '=', 'services.id')
                .where('orders.status', '=', 'unpaid'),
            ),
          ]),
        )
        .orderBy('id');
      if (input.accountId !== undefined) query = query.where('account_id', '=', input.accountId);
      const candidates = await query.execute();
      const actions: BillingAction[] = [];
      for (const candidate of candidates) {
        try {
          actions.push(...(await step(candidate.id, at, input.dryRun === true)));
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
    },

    /** The client pays one of its unpaid orders (POST /orders/ {action: "pay", id}). */
    pay: payments.pay,

    /** The client renews a service (POST /services/ {action: "renew"}): what is owed first. */
    renew: payments.renew,

    /** What the account pays and owes: the monthly run-rate, unpaid orders with their total, the next renewals. */
    async summary(accountId: number) {
      const [rate, unpaid, next] = await Promise.all([
        services.ownMonthlyRunRate(db, accountId),
        db
          .selectFrom('orders')
          .innerJoin('services', 'services.id', 'orders.service_id')
          .select([
            'orders.id',
            'orders.public_id',
            'orders.amount_paise',
            'orders.created_at',
            'orders.renews_from',
            'services.id as service_id',
            'services.label',
          ])
          .where('orders.account_id', '=', accountId)
          .where('orders.status', '=', 'unpaid')
          .orderBy('orders.created_at')
          .execute(),
        db
          .selectFrom('services')
          .select(['id', 'label', 'period_end', 'price_paise'])
          .where('account_id', '=', accountId)
          .where('status', 'in', ['active', 'suspended'])
          .where('period_end', 'is not', null)
          .orderBy('period_end')
          .limit(10)
          .execute(),
      ]);
      const unpaidTotal = unpaid.reduce((sum, o) => sum + BigInt(o.amount_paise), 0n);
      return { monthlyRunRatePaise: rate, unpaid, unpaidTotalPaise: unpaidTotal, next };
    },
  };
}

class DryRun extends Error {}

export type Billing = ReturnType<typeof createBilling>;
