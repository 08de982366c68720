// Paid add-ons of a service (issue 37; today one: scheduled backups, core/backups/). An add-on has
// a monthly price, kept on its row when it was turned on (`backup_schedules.price_paise`).
// - Turning it on charges what is left of the current period, pro rata, at once: an order of kind
//   `addon`, its ledger debit and its tax invoice in the caller's transaction (`chargeAddon`).
// - While it is on, every renewal of the service (the cycle's, a client's renew, an unpaid order
//   paid later) charges its monthly price beside the plan's: the renewal order's config lists the
//   add-on lines (`addons`), and its invoice has one line per add-on ("Scheduled backups").
// - Turning it off stops the next renewals charging it; the current period is not refunded.
// Each line is charged as its own price (GST added per line when prices exclude it), so the debit
// is exactly the sum of the invoice's lines.

import type { Kysely, Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Order, Service } from '../../db/tables.ts';
import { publicId } from '../ids.ts';
import { post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { chargeFor, chargeOfPrice } from './charge.ts';
import { issueInvoice } from './invoices.ts';

/** The invoice line of the scheduled-backups add-on on a renewal. */
export const BACKUP_LINE = 'Scheduled backups';

/** An add-on line as a renewal order keeps it (its config's `addons`): what was charged for it. */
export interface AddonLine {
  kind: 'backups';
  description: string;
  amount_paise: string;
}

/** The monthly price of the scheduled-backups add-on while it is on for the service, else null. */
export async function backupAddonPrice(db: Kysely<DB>, serviceId: number): Promise<bigint | null> {
  const row = await db
    .selectFrom('backup_schedules')
    .select('price_paise')
    .where('service_id', '=', serviceId)
    .where('frequency', '<>', 'off')
    .executeTakeFirst();
  return row ? BigInt(row.price_paise) : null;
}

/**
 * What renewing the service for a month charges now: the plan's price and each add-on that is
 * on, each charged as its own price (with GST when prices exclude it); `addons` is what the
 * renewal order keeps for its invoice.
 */
export async function renewalCharge(
  db: Kysely<DB>,
  settings: Pick<InvoicingConfig, 'pricesIncludeGst' | 'sellerStateCode'>,
  service: Pick<Service, 'id' | 'account_id' | 'price_paise'>,
): Promise<{ totalPaise: bigint; addons: AddonLine[] }> {
  const plan = await chargeFor(db, settings, service.account_id, service.price_paise);
  const backups = await backupAddonPrice(db, service.id);
  const addons: AddonLine[] = [];
  if (backups !== null && backups > 0n) {
    const charge = chargeOfPrice(settings, backups, plan.placeOfSupply);
    addons.push({ kind: 'backups', description: BACKUP_LINE, amount_paise: String(charge.totalPaise) });
  }
  const totalPaise = addons.reduce((sum, a) => sum + BigInt(a.amount_paise), plan.totalPaise);
  return { totalPaise, addons };
}

/** The add-on lines of a renewal order (none for an order made before add-ons, or without any). */
export function addonLinesOf(order: Pick<Order, 'config'>): { description: string; amountPaise: bigint }[] {
  const stored = (order.config as { addons?: unknown } | null)?.addons;
  if (!Array.isArray(stored)) return [];
  return stored
    .filter((a): a is AddonLine => typeof a?.description === 'string' && /^\d+$/.test(String(a?.amount_paise)))
    .map((a) => ({ description: a.description, amountPaise: BigInt(a.amount_paise) }));
}

/** The renewal order's config for these add-on lines. */
export const addonConfig = (addons: AddonLine[]): Record<string, unknown> => (addons.length > 0 ? { addons } : {});

/**
 * One month before `end`, calendar-aware like addMonth (31 Mar − 1 month = 28/29 Feb): where the
 * period that ends at `end` began (a period that ends on 28 Feb is taken to begin on 28 Jan).
 */
export function monthBefore(end: Date): Date {
  const start = new Date(end);
  const day = start.getUTCDate();
  start.setUTCDate(1);
  start.setUTCMonth(start.getUTCMonth() - 1);
  const lastDay = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0)).getUTCDate();
  start.setUTCDate(Math.min(day, lastDay));
  return start;
}

/**
 * What is left of a monthly price for the rest of the period that ends at `periodEnd`, as at
 * `now`: price × whole seconds left ÷ seconds in the period (its month), rounded half up to the
 * paisa. Nothing when the period has ended (an overdue service: the renewal will charge it).
 */
export function proRataPaise(pricePaise: bigint, now: Date, periodEnd: Date | null): bigint {
  if (periodEnd === null || periodEnd <= now) return 0n;
  const start = monthBefore(periodEnd);
  const length = BigInt(Math.floor((periodEnd.getTime() - start.getTime()) / 1000));
  const left = BigInt(Math.floor((periodEnd.getTime() - Math.max(now.getTime(), start.getTime())) / 1000));
  if (length <= 0n || left <= 0n) return 0n;
  return (2n * pricePaise * left + length) / (2n * length);
}

/**
 * Charge an add-on in the caller's transaction (which holds the account's wallet lock): an `addon`
 * order, paid, its ledger debit (insufficient_funds, nothing written, when the wallet is short)
 * and its tax invoice. `pricePaise` is the price (GST added when prices exclude it).
 */
export async function chargeAddon(
  trx: Transaction<DB>,
  settings: InvoicingConfig,
  input: {
    service: Pick<Service, 'id' | 'account_id' | 'plan_id' | 'location_id' | 'label'>;
    pricePaise: bigint;
    description: string;
    at: Date;
  },
): Promise<{ order: Order; totalPaise: bigint }> {
  const { service, at } = input;
  const charge = await chargeFor(trx, settings, service.account_id, input.pricePaise);
  const order = await trx
    .insertInto('orders')
    .values({
      public_id: publicId('order'),
      account_id: service.account_id,
      plan_id: service.plan_id,
      service_id: service.id,
      kind: 'addon',
      status: 'paid',
      amount_paise: charge.totalPaise,
      config: JSON.stringify({ addon: 'backups' }),
      location_id: service.location_id,
      paid_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const debit = await post(trx, service.account_id, {
    kind: 'order',
    amountPaise: -charge.totalPaise,
    referenceType: 'order',
    referenceId: order.id,
    note: `${input.description} (${order.public_id})`,
    at,
  });
  const paid = await trx
    .updateTable('orders')
    .set({ transaction_id: debit.id })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, service.account_id, ['order.created', 'order.paid'], orderData(paid), at);
  await issueInvoice(trx, settings, {
    accountId: service.account_id,
    orderId: order.id,
    amountPaise: charge.totalPaise,
    description: `${input.description} (order ${order.public_id})`,
    at,
  });
  return { order: paid, totalPaise: charge.totalPaise };
}
