// Moving a service to another plan (issue 37, CONTRACT §13 resize): the money half, product-agnostic.
// The product decides which plans a service may move to (vps: larger only) and what the job does;
// this module prices the move, charges it and undoes the charge when the job gives up.
//
// Price: the monthly difference for the time already paid, pro rata (billing/proration.ts: floor
// of diff × remaining ÷ period seconds, in BigInt), then GST as on every charge (billing/charge.ts
// chargeFor). Charged in one transaction with everything it pays for: the wallet debit (an `order`
// ledger row; 402 insufficient_funds when short), an order of kind `resize` with its tax invoice,
// the service's plan, price (what renewals charge from now on) and `config.specs`, and the job.
// A difference that rounds to nothing charges nothing: no order, no invoice, the plan still moves.
//
// The job's params keep what undoing takes (from_plan_id, from_price_paise, from_specs, order_id):
// when the job gives up (`planChangeFailed`), the old plan and price come back and the charge is
// refunded — through a credit note of its invoice, the `refund` row referencing the note.

import type { Kysely, Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Invoice, Order, Plan, Service } from '../../db/tables.ts';
import { chargeFor } from '../billing/charge.ts';
import { refundOrderCharge } from '../billing/credit-notes.ts';
import { istDay } from '../billing/gst.ts';
import { issueInvoice } from '../billing/invoices.ts';
import { prorate } from '../billing/proration.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { formatPaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import type { PlanChangeQuote, PlanChanges } from '../product-kit/actions.ts';
import { jobFailed, type Transition } from '../product-kit/lifecycle.ts';
import { lockWallet, post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { recordEvent } from './events.ts';
import * as services from './service.repository.ts';
import type { Failure } from './service-jobs.ts';
import { startJob } from './service-jobs.ts';

export interface PlanChangeOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  invoicing: InvoicingConfig;
  clock: () => Date;
}

/** Refused while money is owed on the service or it has no paid period to pro-rate. */
async function refuseOwed(db: Kysely<DB>, service: Service, now: Date): Promise<Date> {
  const paidUntil = service.period_end;
  if (!paidUntil) throw new AppError('conflict', { message: `${service.label} has no paid period to resize within.` });
  const unpaid = await db
    .selectFrom('orders')
    .select('public_id')
    .where('service_id', '=', service.id)
    .where('status', '=', 'unpaid')
    .executeTakeFirst();
  if (unpaid || paidUntil <= now) {
    throw new AppError('conflict', {
      message: `The renewal of ${service.label} is unpaid${unpaid ? ` (order ${unpaid.public_id})` : ''}: renew it first, then resize.`,
    });
  }
  return paidUntil;
}

async function quoteOf(
  db: Kysely<DB>,
  options: PlanChangeOptions,
  service: Service,
  plan: Plan,
  now: Date,
): Promise<PlanChangeQuote> {
  const paidUntil = await refuseOwed(db, service, now);
  const proration = prorate(BigInt(service.price_paise), BigInt(plan.price_paise), paidUntil, now);
  if (proration.proratedPaise === 0n) return { plan, proration, totalPaise: 0n, taxPaise: 0n };
  const charge = await chargeFor(db, options.invoicing, service.account_id, proration.proratedPaise);
  return { plan, proration, totalPaise: charge.totalPaise, taxPaise: charge.taxPaise };
}

/** The debit of a quote; a wallet that cannot pay is 402 on every surface (CONTRACT §13). */
async function debit(
  trx: Transaction<DB>,
  service: Service,
  order: Order,
  amount: bigint,
  planName: string,
  now: Date,
) {
  try {
    return await post(trx, service.account_id, {
      kind: 'order',
      amountPaise: -amount,
      referenceType: 'order',
      referenceId: order.id,
      note: `Resize of ${service.label} to ${planName} (${order.public_id})`,
      at: now,
    });
  } catch (error) {
    if (error instanceof AppError && error.code === 'insufficient_funds') {
      throw new AppError('insufficient_funds', {
        status: 402,
        message: `${error.message} Top up the wallet, then resize.`,
        ...(error.details ? { details: error.details } : {}),
      });
    }
    throw error;
  }
}

/** The order, debit and invoice of a quote that charges something, in `trx`. */
async function charge(
  trx: Transaction<DB>,
  options: PlanChangeOptions,
  service: Service,
  from: Plan,
  quote: PlanChangeQuote,
  now: Date,
): Promise<{ order: Order; invoice: Invoice }> {
  const { plan, proration } = quote;
  const order = await trx
    .insertInto('orders')
    .values({
      public_id: publicId('order'),
      account_id: service.account_id,
      plan_id: plan.id,
      service_id: service.id,
      kind: 'resize',
      status: 'paid',
      amount_paise: quote.totalPaise,
      config: JSON.stringify({
        from_plan_id: from.id,
        remaining_seconds: Number(proration.remainingSeconds),
        period_seconds: Number(proration.periodSeconds),
        difference: formatPaise(proration.diffPaise),
      }),
      domain: null,
      location_id: service.location_id,
      paid_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const row = await debit(trx, service, order, quote.totalPaise, plan.name, now);
  const paid = await trx
    .updateTable('orders')
    .set({ transaction_id: row.id })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, service.account_id, ['order.created', 'order.paid'], orderData(paid), now);
  const invoice = await issueInvoice(trx, options.invoicing, {
    accountId: service.account_id,
    orderId: order.id,
    amountPaise: quote.totalPaise,
    description:
      `${plan.name}: ${service.label}, upgrade from ${from.name} until ${istDay(proration.periodEnd)} ` +
      `(pro rata, order ${order.public_id})`,
    at: now,
  });
  return { order: paid, invoice };
}

/** Set the service's plan, price and `config.specs` (in `trx`). */
async function movePlan(db: Kysely<DB>, serviceId: number, plan: Pick<Plan, 'id' | 'price_paise' | 'specs'>) {
  await db
    .updateTable('services')
    .set({ plan_id: plan.id, price_paise: plan.price_paise })
    .where('id', '=', serviceId)
    .execute();
  await services.setConfigField(db, serviceId, 'specs', plan.specs);
}

const planOf = (db: Kysely<DB>, id: number) =>
  db.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The plan changes of one of an account's services (product-kit ActionContext.planChange). */
export function planChangesOf(options: PlanChangeOptions, accountId: number, serviceId: number): PlanChanges {
  const { db, jobs, clock } = options;
  const own = async (executor: Kysely<DB>) => {
    const service = await services.findOwn(executor, accountId, serviceId);
    if (!service) throw new AppError('not_owner');
    return service;
  };
  return {
    async quote(plan) {
      return quoteOf(db, options, await own(db), plan, clock());
    },

    apply(plan, job) {
      return db.transaction().execute(async (trx) => {
        // Wallet, then the service: the order every money path takes (wallet/ledger.ts lockWallet).
        await lockWallet(trx, accountId);
        const service = await services.lockOwn(trx, accountId, serviceId);
        if (!service) throw new AppError('not_owner');
        if (service.status !== 'active')
          throw new AppError('conflict', { message: `${service.label} is ${service.status} now.` });
        // A service busy with another job is 409 before anything is charged (startJob checks again).
        const running = await jobRepo.activeForService(trx, serviceId);
        if (running) throw new AppError(running.type === 'reinstall' ? 'reinstall_running' : 'locked');
        const now = clock();
        const quote = await quoteOf(trx, options, service, plan, now);
        const from = await planOf(trx, service.plan_id);
        const paid = quote.totalPaise > 0n ? await charge(trx, options, service, from, quote, now) : null;
        await movePlan(trx, serviceId, plan);
        const started = await startJob(trx, jobs, {
          accountId,
          serviceId,
          type: job.type,
          params: {
            ...job.params,
            plan_id: plan.id,
            from_plan_id: from.id,
            from_price_paise: String(service.price_paise),
            from_specs: from.specs,
            order_id: paid?.order.id ?? null,
          },
        });
        const amount = formatPaise(quote.totalPaise);
        await recordEvent(
          trx,
          serviceId,
          'resize_started',
          `Resizing from ${from.name} to ${plan.name}; ₹${amount} charged for the rest of the period`,
          { from_plan: from.label, plan: plan.label, ...(paid ? { order: paid.order.public_id } : {}) },
        );
        return { job: started, quote, order: paid?.order ?? null, invoice: paid?.invoice ?? null };
      });
    },
  };
}

interface UndoParams {
  plan_id?: unknown;
  from_plan_id?: unknown;
  from_price_paise?: unknown;
  from_specs?: unknown;
  order_id?: unknown;
}

/**
 * A resize job gave up (its steps already undone on the node): the old plan, price and specs come
 * back, the charge is refunded, the job fails and the client is told — in the caller's transaction.
 */
export async function planChangeFailed(
  trx: Transaction<DB>,
  t: Transition,
  failure: Failure,
  invoicing: InvoicingConfig,
): Promise<void> {
  const { service, job, now } = t;
  const params = job.params as UndoParams;
  await lockWallet(trx, service.account_id);
  const fromPlan = Number(params.from_plan_id);
  if (Number.isInteger(fromPlan) && typeof params.from_price_paise === 'string') {
    const current = await trx
      .selectFrom('services')
      .select('plan_id')
      .where('id', '=', service.id)
      .forUpdate()
      .execute();
    // Only a service still on the plan this job moved it to goes back (staff may have moved it since).
    if (current[0]?.plan_id === Number(params.plan_id)) {
      const from = await planOf(trx, fromPlan);
      await movePlan(trx, service.id, { id: fromPlan, price_paise: params.from_price_paise, specs: from.specs });
    }
  }
  let refunded = 0n;
  const orderId = Number(params.order_id);
  if (Number.isInteger(orderId) && orderId > 0) {
    const order = await trx.selectFrom('orders').selectAll().where('id', '=', orderId).forUpdate().executeTakeFirst();
    if (order?.status === 'paid') {
      const refund = await refundOrderCharge(trx, invoicing, { order, why: 'The resize failed', at: now });
      refunded = refund ? BigInt(refund.amount_paise) : 0n;
      await trx
        .updateTable('orders')
        .set({ status: 'refunded', refund_transaction_id: refund?.id ?? null })
        .where('id', '=', order.id)
        .execute();
    }
  }
  await jobFailed(trx, t, failure);
  const back = refunded > 0n ? ` The ₹${formatPaise(refunded)} charged is back in your wallet.` : '';
  await recordEvent(trx, service.id, 'resize_reverted', `Resize failed: the old plan is kept.${back}`);
  await notify(trx, service.account_id, {
    kind: 'service_resize_failed',
    title: `${service.label} could not be resized`,
    body: `We could not resize ${service.label}: ${failure.message} It keeps its old plan.${back}`,
    data: { service: service.id },
  });
}
