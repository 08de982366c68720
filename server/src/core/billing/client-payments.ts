// What the client pays by hand (CONTRACT §7): one of its unpaid orders (`pay`), or a service's
// renewal (`renew`), which pays what is owed first and only then buys the next month. Both lock
// as every money path does (the wallet, then the orders, then the service: see lockWallet) and
// charge through payments.ts `payOrder`.

import type { Transaction } from 'kysely';
import type { DB, Order, Service } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import { formatPaise } from '../money.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { addMonth } from '../time.ts';
import { balanceOf, lockWallet, post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { addonConfig, addonLinesOf, renewalCharge } from './addons.ts';
import * as repo from './billing.repository.ts';
import { issueInvoice } from './invoices.ts';
import {
  cancelOvertaken,
  day,
  liftOverdue,
  overtaken,
  type Payment,
  type PaymentOptions,
  payOrder,
  recordPayment,
} from './payments.ts';

/** The client pays one of its unpaid orders (POST /orders/ {action: "pay", id}). */
export async function pay(
  options: PaymentOptions,
  accountId: number,
  orderId: number,
  who: Who,
): Promise<{ order: Order; service: Service }> {
  const payment = await options.db.transaction().execute(async (trx) => {
    await lockWallet(trx, accountId);
    const order = await repo.lockOwnOrder(trx, accountId, orderId);
    if (!order) throw new AppError('not_owner');
    if (order.status !== 'unpaid') {
      throw new AppError('conflict', {
        message: `Order ${order.public_id} is ${order.status}; only unpaid orders are paid.`,
      });
    }
    return payOrder(options, trx, order, options.clock(), who);
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
export async function renew(
  options: PaymentOptions,
  accountId: number,
  serviceId: number,
  who: Who,
): Promise<{ order: Order; service: Service }> {
  return options.db.transaction().execute(async (trx) => {
    await lockWallet(trx, accountId);
    // Its unpaid orders before the service itself, the order every money path locks them in.
    const unpaid = await repo.lockOwnUnpaidRenewals(trx, accountId, serviceId);
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
    const now = options.clock();
    const owed: Order[] = [];
    for (const order of unpaid) {
      if (overtaken(order, service)) await cancelOvertaken(trx, order, service);
      else owed.push(order);
    }
    if (owed.length > 0) return payOwed(options, trx, service, owed, now, who);
    return buyNextMonth(options, trx, service, now, who);
  });
}

/** Renewing with orders owed: all of them are paid, oldest first, or nothing is charged. */
async function payOwed(
  options: PaymentOptions,
  trx: Transaction<DB>,
  service: Service,
  owed: Order[],
  now: Date,
  who: Who,
): Promise<{ order: Order; service: Service }> {
  const required = owed.reduce((sum, o) => sum + BigInt(o.amount_paise), 0n);
  const balance = BigInt(await balanceOf(trx, service.account_id));
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
  for (const order of owed) last = await payOrder(options, trx, order, now, who);
  const done = last as Payment;
  return { order: done.order, service: done.service };
}

/** Nothing owed: the month that starts at paid_until, keyed by that period like the cycle's. */
async function buyNextMonth(
  options: PaymentOptions,
  trx: Transaction<DB>,
  service: Service,
  now: Date,
  who: Who,
): Promise<{ order: Order; service: Service }> {
  const plan = await trx
    .selectFrom('plans')
    .select(['name'])
    .where('id', '=', service.plan_id)
    .executeTakeFirstOrThrow();
  const from = service.period_end ?? now;
  const charge = await renewalCharge(trx, options.invoicing, service);
  const order = await repo.insertRenewal(trx, service, charge.totalPaise, from, now, addonConfig(charge.addons));
  // The period has an order already (one this renew did not see as unpaid): never a second.
  if (!order) throw new AppError('conflict', { message: `The period from ${day(from)} is already billed.` });
  const debit = await post(trx, service.account_id, {
    kind: 'renewal',
    amountPaise: -charge.totalPaise,
    referenceType: 'order',
    referenceId: order.id,
    note: `Renewal of ${service.label}: ${plan.name} (${order.public_id})`,
    at: now,
  });
  const renewed = await services.setPeriodEnd(trx, service.id, addMonth(from));
  const paid = await repo.setTransaction(trx, order.id, debit.id);
  await emitWebhook(trx, service.account_id, ['order.created', 'order.paid'], orderData(paid), now);
  await issueInvoice(trx, options.invoicing, {
    accountId: service.account_id,
    orderId: order.id,
    amountPaise: charge.totalPaise,
    description: `Renewal of ${service.label}: ${plan.name}, ${day(from)} to ${day(renewed.period_end as Date)} (order ${order.public_id})`,
    at: now,
    addons: addonLinesOf(order),
  });
  await recordEvent(
    trx,
    service.id,
    'renewed',
    `Renewed until ${day(renewed.period_end as Date)}: ₹${formatPaise(charge.totalPaise)}`,
    { order: order.public_id },
  );
  await recordPayment(trx, {
    who,
    service,
    order,
    amountPaise: service.price_paise,
    until: renewed.period_end as Date,
    transaction: debit.public_id,
    at: now,
  });
  // Suspended as overdue for an order that turned out overtaken: nothing is owed now.
  await liftOverdue(options, trx, renewed);
  return { order: paid, service: renewed };
}
