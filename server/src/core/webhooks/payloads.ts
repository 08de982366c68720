// The `data` of each webhook event: the same public ids and fields the API shows for the thing
// (orders, services, invoices, deposits, jobs), never a secret or a credential.

import type { Deposit, Invoice, Job, Order, Service, ServiceStatus } from '../../db/tables.ts';
import { formatPaise } from '../money.ts';
import { isoWithOffset } from '../time.ts';

const iso = (d: Date | null) => (d ? isoWithOffset(d) : null);

/** order.created, order.paid: the order as GET orders/?id= shows it. */
export function orderData(o: Order): Record<string, unknown> {
  return {
    order: {
      id: o.id,
      public_id: o.public_id,
      kind: o.kind,
      status: o.status,
      plan_id: o.plan_id,
      service_id: o.service_id,
      amount: formatPaise(o.amount_paise),
      currency: 'INR',
      created_at: iso(o.created_at),
      paid_at: iso(o.paid_at),
      renews_from: iso(o.renews_from),
    },
  };
}

/** service.*: the service as it is after the change (`status` given, the row may predate it). */
export function serviceData(s: Service, status: ServiceStatus, extra: Record<string, unknown> = {}) {
  return {
    service: {
      id: s.id,
      label: s.label,
      type: s.type,
      status,
      plan_id: s.plan_id,
      order_id: s.order_id,
      ...extra,
    },
  };
}

/** invoice.issued: the summary GET invoices/ lists. */
export function invoiceData(i: Invoice): Record<string, unknown> {
  return {
    invoice: {
      id: i.id,
      number: i.number,
      kind: i.kind,
      order_id: i.order_id,
      issued_at: isoWithOffset(i.issued_at),
      taxable_value: formatPaise(i.taxable_paise),
      tax: {
        cgst: formatPaise(i.cgst_paise),
        sgst: formatPaise(i.sgst_paise),
        igst: formatPaise(i.igst_paise),
      },
      total: formatPaise(i.total_paise),
      currency: 'INR',
    },
  };
}

/** deposit.approved, deposit.rejected. */
export function depositData(d: Deposit): Record<string, unknown> {
  return {
    deposit: {
      id: d.id,
      public_id: d.public_id,
      method: d.method,
      amount: formatPaise(d.amount_paise),
      currency: 'INR',
      status: d.status,
      reason: d.reason,
      created_at: iso(d.created_at),
      reviewed_at: iso(d.reviewed_at),
    },
  };
}

/** job.failed: the job as GET jobs show it, with why it failed. */
export function jobData(job: Job, failure: { code: string; message: string }): Record<string, unknown> {
  return {
    job: {
      id: job.id,
      type: job.type,
      status: 'failed',
      error: { code: failure.code, message: failure.message },
      created_at: iso(job.created_at),
      resource: { type: 'service', id: job.service_id },
    },
  };
}

/** wallet.low_balance: the balance after the debit that crossed the threshold. */
export function lowBalanceData(balancePaise: bigint | string, thresholdPaise: bigint | string) {
  return {
    wallet: { balance: formatPaise(balancePaise), threshold: formatPaise(thresholdPaise), currency: 'INR' },
  };
}
