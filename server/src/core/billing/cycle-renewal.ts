// The cycle's renewal phase for one service (billing.service.ts explains the cycle): cancel the
// unpaid orders it is already paid past, bill every period that has ended (from the wallet when
// it covers it), and pay orders with money that arrived without paying them.

import type { Service } from '../../db/tables.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import { formatPaise } from '../money.ts';
import { recordEvent } from '../services/events.ts';
import { balanceOf } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { addonConfig, renewalCharge } from './addons.ts';
import * as repo from './billing.repository.ts';
import type { CycleStep } from './cycle-step.ts';
import { cancelOvertaken, day, overtaken, payOrder, tell } from './payments.ts';

/**
 * An unpaid order the service is already paid past (a renew bought that month beside it, before
 * renew paid what is owed first) is cancelled: never charged, never a reason to suspend or
 * terminate.
 */
export async function cancelOvertakenOrders(step: CycleStep, service: Service): Promise<void> {
  const { trx, dryRun, did } = step;
  for (const order of await repo.unpaidRenewalsOf(trx, service.id)) {
    if (!overtaken(order, service)) continue;
    if (dryRun) {
      did('cancelled', `would cancel order ${order.public_id}: paid until ${day(service.period_end as Date)}`);
      continue;
    }
    await cancelOvertaken(trx, order, service);
    did('cancelled', `order ${order.public_id} cancelled: paid until ${day(service.period_end as Date)}`);
  }
}

/** One order per period, as many periods as have ended (a long outage of the cycle). */
export async function billEndedPeriods(step: CycleStep, service: Service): Promise<Service> {
  const { options, trx, at, dryRun, did } = step;
  let current = service;
  while (current.period_end && current.period_end <= at) {
    const from = current.period_end;
    // The price, plus GST when prices exclude it, and the add-ons that are on (addons.ts): what the
    // order will be for and the wallet must hold.
    const charge = await renewalCharge(trx, options.invoicing, current);
    const covered = BigInt(await balanceOf(trx, current.account_id)) >= charge.totalPaise;
    if (dryRun) {
      if (!(await repo.renewalBilled(trx, current.id, from)))
        did(covered ? 'renewed' : 'unpaid', `would ${covered ? 'renew' : 'bill'} the period from ${day(from)}`);
      break;
    }
    const order = await repo.insertRenewal(
      trx,
      current,
      charge.totalPaise,
      from,
      undefined,
      addonConfig(charge.addons),
    );
    // Already billed (an earlier run, or one running now): the later phases see its unpaid order.
    if (!order) break;
    await emitWebhook(trx, current.account_id, 'order.created', orderData(order), at);
    if (covered) {
      current = (await payOrder(options, trx, order, at)).service;
      did('renewed', `renewed from the wallet until ${day(current.period_end as Date)}`);
      continue;
    }
    await recordEvent(trx, current.id, 'renewal_unpaid', `Renewal unpaid: ₹${formatPaise(order.amount_paise)} due`, {
      order: order.public_id,
    });
    await tell(options, trx, current, 'renewal_unpaid', `Renewal of ${current.label} is unpaid`, [
      `Your wallet does not cover the renewal of ${current.label} (₹${formatPaise(order.amount_paise)}, order ${order.public_id}).`,
      `Top up the wallet or pay the order: ${current.label} is suspended ${options.graceDays} days after ${day(from)} and deleted ${options.terminateDays} days after it.`,
    ]);
    did('unpaid', `order ${order.public_id} of ₹${formatPaise(order.amount_paise)} is unpaid`);
    break;
  }
  return current;
}

/** Money that arrived without paying (a credit racing the order's creation): pay now. */
export async function payWithWaitingMoney(step: CycleStep, service: Service): Promise<Service> {
  const { options, trx, at, did } = step;
  let current = service;
  for (const order of await repo.unpaidRenewalsOf(trx, current.id)) {
    if (BigInt(await balanceOf(trx, current.account_id)) < BigInt(order.amount_paise)) break;
    if (await jobRepo.activeForService(trx, current.id)) break;
    const payment = await payOrder(options, trx, order, at);
    current = payment.service;
    if (payment.paid) did('renewed', `order ${order.public_id} paid from the wallet`);
  }
  return current;
}
