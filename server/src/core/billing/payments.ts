// Paying for a service's periods (CONTRACT §7): a renewal order charged from the wallet, the
// client's `pay` and `renew`, and money coming in (a staff credit, an approved deposit) settling
// what is unpaid. The billing cycle (billing.service.ts) charges through the same `payOrder`.
//
// A period is charged once. Every renewal order names the period it pays for (`renews_from`, the
// paid_until it extends) and the unique index on (service, renews_from) allows one order per
// period; paid_until only moves by paying the order of the period that starts at it. So a renew
// pays the service's unpaid renewal orders first (oldest first) instead of buying a month beside
// them, and an unpaid order the service is already paid past (left by a renew before this rule)
// is cancelled, never charged.
//
// Locks, always in this order: the account's wallet, then its orders, then the service
// (lockWallet), so a pay, a renew, a credit, the cycle and a termination never deadlock.

import type { Kysely, Transaction } from 'kysely';
import type { DB, Order, Service } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { startJob } from '../jobs/service-jobs.ts';
import type { Mailer } from '../mail/mailer.ts';
import { formatPaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { addMonth } from '../time.ts';
import { balanceOf, lockWallet, post } from '../wallet/ledger.ts';

export const day = (d: Date) => d.toISOString().slice(0, 10);

/** What paying an unpaid order came to: charged, or cancelled because its period was already paid. */
export interface Payment {
  order: Order;
  service: Service;
  paid: boolean;
}

/**
 * The service is paid past the start of the period this unpaid order bills: the order was
 * overtaken (by a renew that bought a month beside it) and nothing is owed for it.
 */
export const overtaken = (order: Pick<Order, 'renews_from'>, service: Pick<Service, 'period_end'>): boolean =>
  order.renews_from !== null && service.period_end !== null && order.renews_from < service.period_end;

export function createPayments(options: {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  mailer: Mailer;
  clock: () => Date;
}) {
  const { db, jobs, mailer, clock } = options;

  /** A notification and an e-mail to the service's owner, in the caller's transaction. */
  async function tell(
    trx: Kysely<DB>,
    service: Pick<Service, 'id' | 'account_id'>,
    kind: string,
    subject: string,
    paragraphs: string[],
  ): Promise<void> {
    const account = await trx
      .selectFrom('accounts')
      .select(['id', 'name', 'email'])
      .where('id', '=', service.account_id)
      .executeTakeFirstOrThrow();
    await notify(trx, account.id, { kind, title: subject, body: paragraphs.join(' '), data: { service: service.id } });
    await mailer.queue(
      trx,
      account.email,
      { template: 'billing', name: account.name, subject, paragraphs },
      account.id,
    );
  }

  const unpaidOf = (trx: Kysely<DB>, serviceId: number) =>
    trx
      .selectFrom('orders')
      .selectAll()
      .where('service_id', '=', serviceId)
      .where('kind', '=', 'renewal')
      .where('status', '=', 'unpaid')
      .orderBy('renews_from')
      .orderBy('id')
      .execute();

  /** Cancel an overtaken unpaid order (see `overtaken`): nothing is charged for it. */
  async function cancelOvertaken(trx: Transaction<DB>, order: Order, service: Service): Promise<Order> {
    const cancelled = await trx
      .updateTable('orders')
      .set({ status: 'cancelled' })
      .where('id', '=', order.id)
      .where('status', '=', 'unpaid')
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordEvent(
      trx,
      service.id,
      'renewal_cancelled',
      `Order ${order.public_id} cancelled: ${service.label} is already paid until ${day(service.period_end as Date)}`,
      { order: order.public_id },
    );
    return cancelled;
  }

  /**
   * Charge an unpaid renewal order and renew its service; an overtaken order is cancelled instead
   * (`paid: false`). Throws `conflict` (nothing written) when the order is no longer unpaid or its
   * service is being terminated, `insufficient_funds` when the wallet is short.
   */
  async function payOrder(trx: Transaction<DB>, given: Order, now: Date): Promise<Payment> {
    const order = await trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', given.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (order.status !== 'unpaid') {
      throw new AppError('conflict', {
        message: `Order ${order.public_id} is ${order.status}; only unpaid orders are paid.`,
      });
    }
    const service = await trx
      .selectFrom('services')
      .selectAll()
      .where('id', '=', order.service_id as number)
      .forUpdate()
      .executeTakeFirstOrThrow();
    // A service the cycle is deleting for non-payment is gone: paying it now would buy nothing.
    const busy = await jobRepo.activeForService(trx, service.id);
    if (busy?.type === 'terminate' || service.status === 'terminated') {
      throw new AppError('conflict', {
        message: `${service.label} is being terminated; order ${order.public_id} cannot be paid.`,
      });
    }
    if (overtaken(order, service)) {
      const cancelled = await cancelOvertaken(trx, order, service);
      await liftOverdue(trx, service);
      return { order: cancelled, service, paid: false };
    }
    const debit = await post(trx, order.account_id, {
      kind: 'renewal',
      amountPaise: -BigInt(order.amount_paise),
      referenceType: 'order',
      referenceId: order.id,
      note: `Renewal of ${service.label} (${order.public_id})`,
    });
    const paid = await trx
      .updateTable('orders')
      .set({ status: 'paid', paid_at: now, transaction_id: debit.id })
      .where('id', '=', order.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const from = order.renews_from ?? service.period_end ?? now;
    const until = addMonth(from);
    const renewed =
      service.period_end && service.period_end >= until ? service : await services.setPeriodEnd(trx, service.id, until);
    await recordEvent(trx, service.id, 'renewed', `Renewed until ${day(until)}: ₹${formatPaise(order.amount_paise)}`, {
      order: order.public_id,
    });
    await tell(trx, service, 'service_renewed', `${service.label} renewed until ${day(until)}`, [
      `₹${formatPaise(order.amount_paise)} was taken from your wallet for ${service.label} (order ${order.public_id}).`,
      `It is paid until ${day(until)}.`,
    ]);
    await liftOverdue(trx, renewed);
    return { order: paid, service: renewed, paid: true };
  }

  /** A service suspended for being overdue, with nothing left unpaid: its suspension is lifted. */
  async function liftOverdue(trx: Transaction<DB>, service: Service): Promise<boolean> {
    if (service.status !== 'suspended' || service.suspend_reason !== 'overdue') return false;
    if ((await unpaidOf(trx, service.id)).length > 0) return false;
    // Another job holds the service (it may be the suspension itself): the next run lifts it.
    if (await jobRepo.activeForService(trx, service.id)) return false;
    await startJob(trx, jobs, { accountId: service.account_id, serviceId: service.id, type: 'unsuspend' });
    return true;
  }

  /**
   * Pay the account's unpaid renewal orders, oldest first. An order the wallet cannot cover is
   * passed over, not waited for: a younger, smaller one the money covers is paid (keeping that
   * service running), and the older one is still first in line for the next money.
   */
  async function settle(trx: Transaction<DB>, accountId: number): Promise<Order[]> {
    const now = clock();
    await lockWallet(trx, accountId);
    const unpaid = await trx
      .selectFrom('orders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status', '=', 'unpaid')
      .where('kind', '=', 'renewal')
      .orderBy('created_at')
      .orderBy('id')
      .forUpdate()
      .execute();
    const paid: Order[] = [];
    for (const order of unpaid) {
      if (BigInt(await balanceOf(trx, accountId)) < BigInt(order.amount_paise)) continue;
      // A service being terminated is skipped (its order is cancelled when the termination is done).
      const busy = await jobRepo.activeForService(trx, order.service_id as number);
      if (busy?.type === 'terminate') continue;
      try {
        const payment = await payOrder(trx, order, now);
        if (payment.paid) paid.push(payment.order);
      } catch (error) {
        // Refused before anything was written (the order was settled meanwhile, or its service is
        // now being terminated): the credit stands, only this order is left.
        if (error instanceof AppError && error.code === 'conflict') continue;
        throw error;
      }
    }
    return paid;
  }

  /** The client pays one of its unpaid orders (POST /orders/ {action: "pay", id}). */
  async function pay(accountId: number, orderId: number): Promise<{ order: Order; service: Service }> {
    const payment = await db.transaction().execute(async (trx) => {
      await lockWallet(trx, accountId);
      const order = await trx
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', orderId)
        .where('account_id', '=', accountId)
        .forUpdate()
        .executeTakeFirst();
      if (!order) throw new AppError('not_owner');
      if (order.status !== 'unpaid') {
        throw new AppError('conflict', {
          message: `Order ${order.public_id} is ${order.status}; only unpaid orders are paid.`,
        });
      }
      return payOrder(trx, order, clock());
    });
    // The cancellation is committed; the client is told nothing was charged.
    if (!payment.paid) {
      throw new AppError('conflict', {
        message: `Order ${payment.order.public_id} was for a period already paid (${payment.service.label} is paid until ${day(payment.service.period_end as Date)}): it is cancelled and nothing was charged.`,
      });
    }
    return payment;
  }

  /**
   * The client renews a service (POST /services/ {action: "renew"}). What is owed comes first: the
   * service's unpaid renewal orders are paid, oldest first, and that is the renewal (each moves
   * paid_until a month); the wallet must cover all of them, or nothing is charged (422
   * insufficient_funds naming the orders). With nothing owed, one more month from paid_until,
   * as its own renewal order for that period. 409 not_renewable while the service is being
   * terminated (its terminate job queued or running), as `pay` refuses then too.
   */
  async function renew(accountId: number, serviceId: number): Promise<{ order: Order; service: Service }> {
    return db.transaction().execute(async (trx) => {
      await lockWallet(trx, accountId);
      // Its unpaid orders before the service itself, the order every money path locks them in.
      const unpaid = await trx
        .selectFrom('orders')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('service_id', '=', serviceId)
        .where('kind', '=', 'renewal')
        .where('status', '=', 'unpaid')
        .orderBy('renews_from')
        .orderBy('id')
        .forUpdate()
        .execute();
      const service = await services.lockOwn(trx, accountId, serviceId);
      if (!service) throw new AppError('not_owner');
      if (service.status !== 'active' && service.status !== 'suspended') {
        throw new AppError('not_renewable', { message: `A ${service.status} service cannot be renewed.` });
      }
      const busy = await jobRepo.activeForService(trx, service.id);
      if (busy?.type === 'terminate') {
        throw new AppError('not_renewable', {
          message: `${service.label} is being terminated; it cannot be renewed.`,
        });
      }
      const now = clock();
      const owed: Order[] = [];
      for (const order of unpaid) {
        if (overtaken(order, service)) await cancelOvertaken(trx, order, service);
        else owed.push(order);
      }

      if (owed.length > 0) {
        const required = owed.reduce((sum, o) => sum + BigInt(o.amount_paise), 0n);
        const balance = BigInt(await balanceOf(trx, accountId));
        if (balance < required) {
          const names = owed.map((o) => `${o.public_id} (₹${formatPaise(o.amount_paise)})`).join(', ');
          throw new AppError('insufficient_funds', {
            message: `${service.label} has an unpaid renewal: order ${names}. Renewing pays it first, and the wallet holds ₹${formatPaise(balance)}: top it up and the order is paid automatically.`,
            details: {
              balance: formatPaise(balance),
              required: formatPaise(required),
              shortfall: formatPaise(required - balance),
              currency: 'INR',
              unpaid_orders: owed.map((o) => ({
                id: o.id,
                public_id: o.public_id,
                amount: formatPaise(o.amount_paise),
              })),
            },
          });
        }
        let last: Payment | null = null;
        for (const order of owed) last = await payOrder(trx, order, now);
        const done = last as Payment;
        return { order: done.order, service: done.service };
      }

      // Nothing owed: the month that starts at paid_until, keyed by that period like the cycle's.
      const plan = await trx
        .selectFrom('plans')
        .select(['name'])
        .where('id', '=', service.plan_id)
        .executeTakeFirstOrThrow();
      const from = service.period_end ?? now;
      const order = await trx
        .insertInto('orders')
        .values({
          public_id: publicId('order'),
          account_id: accountId,
          plan_id: service.plan_id,
          service_id: service.id,
          kind: 'renewal',
          status: 'paid',
          amount_paise: service.price_paise,
          location_id: service.location_id,
          renews_from: from,
          paid_at: now,
        })
        .onConflict((oc) => oc.columns(['service_id', 'renews_from']).where('renews_from', 'is not', null).doNothing())
        .returningAll()
        .executeTakeFirst();
      // The period has an order already (one this renew did not see as unpaid): never a second.
      if (!order) throw new AppError('conflict', { message: `The period from ${day(from)} is already billed.` });
      const debit = await post(trx, accountId, {
        kind: 'renewal',
        amountPaise: -BigInt(service.price_paise),
        referenceType: 'order',
        referenceId: order.id,
        note: `Renewal of ${service.label}: ${plan.name} (${order.public_id})`,
      });
      const renewed = await services.setPeriodEnd(trx, service.id, addMonth(from));
      const paid = await trx
        .updateTable('orders')
        .set({ transaction_id: debit.id })
        .where('id', '=', order.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordEvent(
        trx,
        service.id,
        'renewed',
        `Renewed until ${day(renewed.period_end as Date)}: ₹${formatPaise(service.price_paise)}`,
        { order: order.public_id },
      );
      // Suspended as overdue for an order that turned out overtaken: nothing is owed now.
      await liftOverdue(trx, renewed);
      return { order: paid, service: renewed };
    });
  }

  return { tell, unpaidOf, cancelOvertaken, payOrder, liftOverdue, settle, pay, renew };
}

export type Payments = ReturnType<typeof createPayments>;
