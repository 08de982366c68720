// Queries of the billing cycle and payments on renewal orders (and the services they renew).
// Functions take the executor first (the root db or a transaction); locking reads take a
// Transaction. What a client reaches takes the owner (`…Own(trx, accountId, …)`); the rest is
// the cycle's and the payments' own work on a service whose wallet they have locked.

import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, Order, Service } from '../../db/tables.ts';
import { publicId } from '../ids.ts';

export type Executor = Kysely<DB>;

// ---- owner-scoped (client-facing) ----

/** One of the account's orders, locked (FOR UPDATE) until the transaction ends. */
export function lockOwnOrder(trx: Transaction<DB>, accountId: number, id: number): Promise<Order | undefined> {
  return trx
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
}

/** The unpaid renewal orders of one of the account's services, oldest period first, locked. */
export function lockOwnUnpaidRenewals(trx: Transaction<DB>, accountId: number, serviceId: number): Promise<Order[]> {
  return trx
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
}

/** The account's unpaid orders with the label of their service, oldest first (what it owes). */
export function ownUnpaidWithService(db: Executor, accountId: number) {
  return db
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
    .execute();
}

/** The account's next ten renewals (services still billed, soonest first). */
export function ownNextRenewals(db: Executor, accountId: number) {
  return db
    .selectFrom('services')
    .leftJoin('backup_schedules', (join) =>
      join.onRef('backup_schedules.service_id', '=', 'services.id').on('backup_schedules.frequency', '<>', 'off'),
    )
    .select([
      'services.id',
      'services.label',
      'services.period_end',
      'services.price_paise',
      'backup_schedules.price_paise as addon_paise',
    ])
    .where('services.account_id', '=', accountId)
    .where('services.status', 'in', ['active', 'suspended'])
    .where('services.period_end', 'is not', null)
    .orderBy('services.period_end')
    .limit(10)
    .execute();
}

/** The account's unpaid renewal orders, oldest first, locked (money came in: settle them). */
export function lockUnpaidRenewalsOfAccount(trx: Transaction<DB>, accountId: number): Promise<Order[]> {
  return trx
    .selectFrom('orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', '=', 'unpaid')
    .where('kind', '=', 'renewal')
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

// ---- by service or order (its wallet locked by the caller) ----

/**
 * Services the cycle has something to do for as at `horizon` (the reminder's reach): a period
 * ending by then, an overdue suspension, or an unpaid order. Of one account with `accountId`.
 */
export function dueServices(db: Executor, horizon: Date, accountId?: number) {
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
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return query.execute();
}

/** The service's unpaid renewal orders, oldest period first. */
export function unpaidRenewalsOf(db: Executor, serviceId: number): Promise<Order[]> {
  return db
    .selectFrom('orders')
    .selectAll()
    .where('service_id', '=', serviceId)
    .where('kind', '=', 'renewal')
    .where('status', '=', 'unpaid')
    .orderBy('renews_from')
    .orderBy('id')
    .execute();
}

/** Whether the period of the service starting at `from` has its renewal order already. */
export async function renewalBilled(db: Executor, serviceId: number, from: Date): Promise<boolean> {
  const row = await db
    .selectFrom('orders')
    .select('id')
    .where('service_id', '=', serviceId)
    .where('renews_from', '=', from)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The renewal order of the period starting at `from`, for `amountPaise` (what the service's price
 * charges: charge.ts chargeFor): unpaid, or paid at `paidAt`. Undefined when the period has one
 * already (the unique index on service and period).
 */
export function insertRenewal(
  trx: Transaction<DB>,
  service: Pick<Service, 'id' | 'account_id' | 'plan_id' | 'location_id'>,
  amountPaise: bigint,
  from: Date,
  paidAt?: Date,
  /** What its invoice needs besides the plan's price (add-on lines: addons.ts). */
  config: Record<string, unknown> = {},
): Promise<Order | undefined> {
  return trx
    .insertInto('orders')
    .values({
      config: JSON.stringify(config),
      public_id: publicId('order'),
      account_id: service.account_id,
      plan_id: service.plan_id,
      service_id: service.id,
      kind: 'renewal',
      status: paidAt ? 'paid' : 'unpaid',
      amount_paise: amountPaise,
      location_id: service.location_id,
      renews_from: from,
      ...(paidAt ? { paid_at: paidAt } : {}),
    })
    .onConflict((oc) => oc.columns(['service_id', 'renews_from']).where('renews_from', 'is not', null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function lockOrder(trx: Transaction<DB>, id: number): Promise<Order> {
  return trx.selectFrom('orders').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
}

export function markPaid(trx: Transaction<DB>, id: number, now: Date, transactionId: number): Promise<Order> {
  return trx
    .updateTable('orders')
    .set({ status: 'paid', paid_at: now, transaction_id: transactionId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The ledger row that paid an order inserted as paid. */
export function setTransaction(trx: Transaction<DB>, id: number, transactionId: number): Promise<Order> {
  return trx
    .updateTable('orders')
    .set({ transaction_id: transactionId })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Cancel an order that is still unpaid (throws when it is not). */
export function cancelUnpaid(trx: Transaction<DB>, id: number): Promise<Order> {
  return trx
    .updateTable('orders')
    .set({ status: 'cancelled' })
    .where('id', '=', id)
    .where('status', '=', 'unpaid')
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Record that the reminder for the period ending at `due` is sent; false when it already was. */
export async function markReminded(trx: Transaction<DB>, serviceId: number, due: Date): Promise<boolean> {
  const result = await trx
    .updateTable('services')
    .set({ reminded_for: due })
    .where('id', '=', serviceId)
    .where((eb) => eb.or([eb('reminded_for', 'is', null), eb('reminded_for', '!=', due)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
