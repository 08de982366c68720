// Paying for a service's periods (CONTRACT §7): a renewal order charged from the wallet, and
// money coming in (a staff credit, an approved deposit) settling what is unpaid. The billing
// cycle (cycle.ts) and the client's `pay` and `renew` (client-payments.ts) charge through the
// same `payOrder`.
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
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Order, Service } from '../../db/tables.ts';
import { recordActivity, SYSTEM, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../mail/mailer.ts';
import { formatPaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { startJob } from '../services/service-jobs.ts';
import { addMonth } from '../time.ts';
import { balanceOf, lockWallet, post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { addonLinesOf } from './addons.ts';
import * as repo from './billing.repository.ts';
import { issueInvoice } from './invoices.ts';

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

export interface PaymentOptions {
  db: Kysely<DB>;
  /** The seller and series of the tax invoice each paid order gets (issue 35). */
  invoicing: InvoicingConfig;
  jobs: JobQueue<AppJobs>;
  mailer: Mailer;
  clock: () => Date;
}

/** A notification and an e-mail to the service's owner, in the caller's transaction. */
export async function tell(
  options: Pick<PaymentOptions, 'mailer'>,
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
  await options.mailer.queue(
    trx,
    account.email,
    { template: 'billing', name: account.name, subject, paragraphs },
    account.id,
  );
}

/** Cancel an overtaken unpaid order (see `overtaken`): nothing is charged for it. */
export async function cancelOvertaken(trx: Transaction<DB>, order: Order, service: Service): Promise<Order> {
  const cancelled = await repo.cancelUnpaid(trx, order.id);
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
export async function payOrder(
  options: PaymentOptions,
  trx: Transaction<DB>,
  given: Order,
  now: Date,
  who: Who = SYSTEM,
): Promise<Payment> {
  const order = await repo.lockOrder(trx, given.id);
  if (order.status !== 'unpaid') {
    throw new AppError('conflict', {
      message: `Order ${order.public_id} is ${order.status}; only unpaid orders are paid.`,
    });
  }
  const service = await services.lockOwn(trx, order.account_id, order.service_id as number);
  if (!service) throw new Error(`order ${order.public_id} renews no service of its account`);
  // A service the cycle is deleting for non-payment is gone: paying it now would buy nothing.
  const busy = await jobRepo.activeForService(trx, service.id);
  if (busy?.type === 'terminate' || service.status === 'terminated') {
    throw new AppError('conflict', {
      message: `${service.label} is being terminated; order ${order.public_id} cannot be paid.`,
    });
  }
  if (overtaken(order, service)) {
    const cancelled = await cancelOvertaken(trx, order, service);
    await liftOverdue(options, trx, service);
    return { order: cancelled, service, paid: false };
  }
  const debit = await post(trx, order.account_id, {
    kind: 'renewal',
    amountPaise: -BigInt(order.amount_paise),
    referenceType: 'order',
    referenceId: order.id,
    note: `Renewal of ${service.label} (${order.public_id})`,
    at: now,
  });
  const paid = await repo.markPaid(trx, order.id, now, debit.id);
  await emitWebhook(trx, order.account_id, 'order.paid', orderData(paid), now);
  const from = order.renews_from ?? service.period_end ?? now;
  const until = addMonth(from);
  await issueInvoice(trx, options.invoicing, {
    accountId: order.account_id,
    orderId: order.id,
    amountPaise: order.amount_paise,
    description: `Renewal of ${service.label}, ${day(from)} to ${day(until)} (order ${order.public_id})`,
    at: now,
    addons: addonLinesOf(order),
  });
  const renewed =
    service.period_end && service.period_end >= until ? service : await services.setPeriodEnd(trx, service.id, until);
  await recordEvent(trx, service.id, 'renewed', `Renewed until ${day(until)}: ₹${formatPaise(order.amount_paise)}`, {
    order: order.public_id,
  });
  await recordPayment(trx, {
    who,
    service,
    order,
    amountPaise: order.amount_paise,
    until,
    transaction: debit.public_id,
    at: now,
  });
  await tell(options, trx, service, 'service_renewed', `${service.label} renewed until ${day(until)}`, [
    `₹${formatPaise(order.amount_paise)} was taken from your wallet for ${service.label} (order ${order.public_id}).`,
    `It is paid until ${day(until)}.`,
  ]);
  await liftOverdue(options, trx, renewed);
  return { order: paid, service: renewed, paid: true };
}

/** A renewal paid from the wallet, in the activity log (the payment's transaction). */
export async function recordPayment(
  trx: Transaction<DB>,
  p: {
    who: Who;
    service: Pick<Service, 'id' | 'account_id' | 'label'>;
    order: Pick<Order, 'public_id'>;
    amountPaise: string;
    until: Date;
    transaction: string;
    at: Date;
  },
): Promise<void> {
  const amount = formatPaise(p.amountPaise);
  await recordActivity(trx, {
    accountId: p.service.account_id,
    type: 'payment',
    who: p.who,
    summary:
      `₹${amount} paid from your wallet for the renewal of ${p.service.label} until ${day(p.until)} ` +
      `(order ${p.order.public_id})${p.who.actor === 'system' ? ', automatically' : ''}`,
    details: {
      order: p.order.public_id,
      service_id: p.service.id,
      label: p.service.label,
      amount,
      paid_until: day(p.until),
      transaction: p.transaction,
    },
    at: p.at,
  });
}

/** A service suspended for being overdue, with nothing left unpaid: its suspension is lifted. */
export async function liftOverdue(
  options: Pick<PaymentOptions, 'jobs'>,
  trx: Transaction<DB>,
  service: Service,
): Promise<boolean> {
  if (service.status !== 'suspended' || service.suspend_reason !== 'overdue') return false;
  if ((await repo.unpaidRenewalsOf(trx, service.id)).length > 0) return false;
  // Another job holds the service (it may be the suspension itself): the next run lifts it.
  if (await jobRepo.activeForService(trx, service.id)) return false;
  await startJob(trx, options.jobs, { accountId: service.account_id, serviceId: service.id, type: 'unsuspend' });
  return true;
}

/**
 * Pay the account's unpaid renewal orders, oldest first. An order the wallet cannot cover is
 * passed over, not waited for: a younger, smaller one the money covers is paid (keeping that
 * service running), and the older one is still first in line for the next money.
 */
export async function settle(options: PaymentOptions, trx: Transaction<DB>, accountId: number): Promise<Order[]> {
  const now = options.clock();
  await lockWallet(trx, accountId);
  const unpaid = await repo.lockUnpaidRenewalsOfAccount(trx, accountId);
  const paid: Order[] = [];
  for (const order of unpaid) {
    if (BigInt(await balanceOf(trx, accountId)) < BigInt(order.amount_paise)) continue;
    // A service being terminated is skipped (its order is cancelled when the termination is done).
    const busy = await jobRepo.activeForService(trx, order.service_id as number);
    if (busy?.type === 'terminate') continue;
    try {
      const payment = await payOrder(options, trx, order, now);
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
