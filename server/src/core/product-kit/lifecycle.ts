// Every state transition of a service after it is ordered, in one place: activated, failed and
// refunded, suspended, unsuspended, terminated, and a job that failed without changing the
// service. Each runs in the caller's transaction and settles the job with it: the service
// row, the job, the event, the client's notification and the refund commit together or not at
// all. Product-agnostic: what the product reserved is given back through `product.release`.

import type { Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Job, Order, Plan, Service, SuspendReason } from '../../db/tables.ts';
import { refundOrderCharge } from '../billing/credit-notes.ts';
import type { Bus } from '../bus.ts';
import { formatPaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { type Failure, finishJob } from '../services/service-jobs.ts';
import { addMonth } from '../time.ts';
import { lockWallet } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { jobData, serviceData } from '../webhooks/payloads.ts';
import type { Product } from './product.ts';

/** What every transition is about. */
export interface Transition {
  job: Job;
  service: Service;
  now: Date;
  bus: Bus;
  /** The service's product: what it reserved is given back through it. */
  product: Pick<Product, 'release'>;
}

/** Provisioned: the service runs and its first month starts now. */
export async function activated(trx: Transaction<DB>, t: Transition, plan: Pick<Plan, 'name'>): Promise<void> {
  const { service, now } = t;
  await services.markActive(trx, service.id, now, addMonth(now));
  await finishJob(trx, t.job.id, now, undefined, t.bus);
  await recordEvent(trx, service.id, 'active', `${service.label} is up`);
  await emitWebhook(trx, service.account_id, 'service.active', serviceData(service, 'active'), now);
  await notify(trx, service.account_id, {
    kind: 'service_active',
    title: `${service.label} is ready`,
    body: `Your ${plan.name} ${service.label} is running. Its login details are on the service page.`,
    data: { service: service.id },
  });
}

/**
 * Provisioning gave up (its steps already undone): what the product reserved is released, the
 * service failed, the charge refunded as a new ledger row, and the client told. An order with a
 * tax invoice is refunded through a credit note for what is left un-credited on it (staff may have
 * credited part already), the refund row referencing the note; an order without one (paid before
 * invoicing) is refunded in full, the row referencing the order.
 */
export async function failedAndRefunded(
  trx: Transaction<DB>,
  t: Transition,
  failure: Failure,
  invoicing: InvoicingConfig,
): Promise<void> {
  const { service, now } = t;
  // Wallet, then the order, then the service: the order every money path takes (lockWallet).
  await lockWallet(trx, service.account_id);
  const order = await trx
    .selectFrom('orders')
    .selectAll()
    .where('id', '=', service.order_id as number)
    .forUpdate()
    .executeTakeFirstOrThrow();
  await t.product.release(trx, service.id);
  await services.markFailed(trx, service.id);
  await finishJob(trx, t.job.id, now, failure, t.bus);
  await recordEvent(trx, service.id, 'failed', `Provisioning failed: ${failure.message}`, { code: failure.code });
  await emitWebhook(trx, service.account_id, 'job.failed', jobData(t.job, failure), now);
  let refunded = 0n;
  if (order.status === 'paid') {
    const refund = await refundOrderCharge(trx, invoicing, { order, why: 'Provisioning failed', at: now });
    refunded = refund === null ? 0n : BigInt(refund.amount_paise);
    await trx
      .updateTable('orders')
      .set({ status: 'refunded', refund_transaction_id: refund?.id ?? null })
      .where('id', '=', order.id)
      .execute();
    if (refund) {
      await recordEvent(trx, service.id, 'refunded', `₹${formatPaise(refunded)} refunded to the wallet`, {
        transaction: refund.public_id,
      });
    }
  }
  await notify(trx, service.account_id, {
    kind: 'service_failed',
    title: `${service.label} could not be set up`,
    body:
      refunded > 0n
        ? `We could not set up ${service.label}: ${failure.message} The ₹${formatPaise(refunded)} you paid is back in your wallet.`
        : `We could not set up ${service.label}: ${failure.message}`,
    data: { service: service.id, order: order.public_id },
  });
}

const SUSPENSIONS: Record<SuspendReason, { event: string; body: (label: string) => string }> = {
  staff: { event: 'Suspended by staff', body: (label) => `${label} has been suspended.` },
  client: { event: 'Suspended at your request', body: (label) => `${label} has been suspended, as you asked.` },
  overdue: {
    event: 'Suspended: its renewal is unpaid',
    body: (label) => `${label} has been suspended because its renewal is unpaid. Pay the order and it comes back.`,
  },
};

/** Suspended on its node; the job's `reason` (staff when none) says what lifts it. */
export async function suspended(trx: Transaction<DB>, t: Transition): Promise<void> {
  const { service, now } = t;
  const given = t.job.params.reason;
  const reason: SuspendReason = given === 'client' || given === 'overdue' ? given : 'staff';
  await services.markSuspended(trx, service.id, now, reason);
  await finishJob(trx, t.job.id, now, undefined, t.bus);
  await recordEvent(trx, service.id, 'suspended', `${SUSPENSIONS[reason].event}: it is stopped and cannot be started`, {
    reason,
  });
  await emitWebhook(trx, service.account_id, 'service.suspended', serviceData(service, 'suspended', { reason }), now);
  await notify(trx, service.account_id, {
    kind: 'service_suspended',
    title: `${service.label} is suspended`,
    body: SUSPENSIONS[reason].body(service.label),
    data: { service: service.id, reason },
  });
}

export async function unsuspended(trx: Transaction<DB>, t: Transition): Promise<void> {
  const { service, now } = t;
  await services.markUnsuspended(trx, service.id);
  await finishJob(trx, t.job.id, now, undefined, t.bus);
  await recordEvent(trx, service.id, 'unsuspended', 'Suspension lifted; the server is starting');
  await emitWebhook(trx, service.account_id, 'service.unsuspended', serviceData(service, 'active'), now);
  await notify(trx, service.account_id, {
    kind: 'service_unsuspended',
    title: `${service.label} is no longer suspended`,
    body: `The suspension of ${service.label} was lifted and it has been started again.`,
    data: { service: service.id },
  });
}

/** Terminated (upstream already deleted): what the product reserved is released, the credentials deleted. */
export async function terminated(trx: Transaction<DB>, t: Transition): Promise<void> {
  const { service, now } = t;
  // Nothing is owed for a service that no longer exists (the billing cycle's unpaid renewal).
  // Wallet, then its orders, then the service — the order a client's pay takes them in
  // (lockWallet); the other way round the two deadlocked and the pay answered 500.
  await lockWallet(trx, service.account_id);
  await trx
    .updateTable('orders')
    .set({ status: 'cancelled' })
    .where('service_id', '=', service.id)
    .where('status', '=', 'unpaid')
    .execute();
  await t.product.release(trx, service.id);
  await services.markTerminated(trx, service.id, now);
  await finishJob(trx, t.job.id, now, undefined, t.bus);
  await recordEvent(
    trx,
    service.id,
    'terminated',
    'Terminated: the server and its disks were deleted and its IPv4 address released',
  );
  await emitWebhook(trx, service.account_id, 'service.terminated', serviceData(service, 'terminated'), now);
  await notify(trx, service.account_id, {
    kind: 'service_terminated',
    title: `${service.label} was terminated`,
    body: `${service.label} and its data were deleted.`,
    data: { service: service.id },
  });
}

/** A job that changes nothing about the service succeeded (power, reinstall): the event says what was done. */
export async function jobDone(
  trx: Transaction<DB>,
  t: Transition,
  event?: { kind: string; message: string },
): Promise<void> {
  await finishJob(trx, t.job.id, t.now, undefined, t.bus);
  if (event) await recordEvent(trx, t.service.id, event.kind, event.message);
}

/** A job gave up and the service stays as it was (reinstall, power, suspension, termination). */
export async function jobFailed(trx: Transaction<DB>, t: Transition, failure: Failure): Promise<void> {
  await finishJob(trx, t.job.id, t.now, failure, t.bus);
  await emitWebhook(trx, t.service.account_id, 'job.failed', jobData(t.job, failure), t.now);
  if (t.job.type === 'reinstall')
    await recordEvent(trx, t.service.id, 'reinstall_failed', `Reinstall failed: ${failure.message}`);
  else
    await recordEvent(trx, t.service.id, `${t.job.type}_failed`, `${t.job.type} failed: ${failure.message}`, {
      code: failure.code,
    });
}
