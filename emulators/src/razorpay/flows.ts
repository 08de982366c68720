// What happens to orders, payments and refunds, whichever way it is asked for: the checkout
// page's buttons, the API (capture, refund) and the programmatic `pay` / `fail` / `cancel` the
// tests call all go through these, so each raises the same webhooks and leaves the same state.
// A successful checkout authorizes the payment and (auto-capture, Razorpay's default) captures it.

import { createHmac } from 'node:crypto';
import { badInput, notFound } from './http.ts';
import {
  feeOf,
  type Notes,
  newId,
  newPayment,
  nowSeconds,
  type Order,
  type Payment,
  type PaymentMethod,
  type RazorpayState,
  type Refund,
} from './state.ts';
import type { WebhookSender } from './webhooks.ts';

export interface FlowCtx {
  state: RazorpayState;
  keySecret: string;
  /** Capture at once after authorization (default true); false: the driver calls /capture. */
  autoCapture: boolean;
  webhooks: WebhookSender;
}

/** What checkout hands back to the merchant's callback after a successful payment. */
export interface CheckoutSuccess {
  razorpay_payment_id: string;
  razorpay_order_id: string;
  razorpay_signature: string;
}

/** What checkout hands back after a failure or a cancel (`error[...]` fields of the callback form). */
export interface CheckoutFailure {
  code: string;
  description: string;
  source: string;
  step: string;
  reason: string;
  metadata: { payment_id?: string; order_id: string };
}

/** The signature checkout returns: hex HMAC-SHA256 of `order_id|payment_id` under the key secret. */
export function paymentSignature(orderId: string, paymentId: string, keySecret: string): string {
  return createHmac('sha256', keySecret).update(`${orderId}|${paymentId}`).digest('hex');
}

export function orderOf(ctx: FlowCtx, orderId: string): Order {
  const order = ctx.state.orders.get(orderId);
  if (!order) throw notFound();
  return order;
}

function payable(ctx: FlowCtx, orderId: string): Order {
  const order = orderOf(ctx, orderId);
  if (order.status === 'paid') throw badInput('Order has already been paid');
  return order;
}

const paymentEvent = (event: 'payment.authorized' | 'payment.captured' | 'payment.failed', payment: Payment) => ({
  event,
  contains: ['payment'],
  payload: { payment: { entity: payment } },
});

/** Capture an authorized payment: the order is paid and payment.captured + order.paid are raised. */
export function capture(ctx: FlowCtx, payment: Payment): void {
  const order = orderOf(ctx, payment.order_id);
  const { fee, tax } = feeOf(payment.amount);
  Object.assign(payment, { status: 'captured', captured: true, fee, tax });
  order.amount_paid += payment.amount;
  order.amount_due = Math.max(0, order.amount - order.amount_paid);
  if (order.amount_due === 0) order.status = 'paid';
  ctx.webhooks.raise([
    paymentEvent('payment.captured', payment),
    {
      event: 'order.paid',
      contains: ['payment', 'order'],
      payload: { payment: { entity: payment }, order: { entity: order } },
    },
  ]);
}

/** The customer pays: a payment is created, authorized and (auto-capture) captured. */
export function pay(
  ctx: FlowCtx,
  orderId: string,
  method: PaymentMethod = 'upi',
): { payment: Payment } & CheckoutSuccess {
  const order = payable(ctx, orderId);
  const payment = newPayment(order, method);
  ctx.state.payments.set(payment.id, payment);
  order.attempts++;
  order.status = 'attempted';
  payment.status = 'authorized';
  ctx.webhooks.raise([paymentEvent('payment.authorized', payment)]);
  if (ctx.autoCapture) capture(ctx, payment);
  return {
    payment,
    razorpay_payment_id: payment.id,
    razorpay_order_id: order.id,
    razorpay_signature: paymentSignature(order.id, payment.id, ctx.keySecret),
  };
}

export interface FailOptions {
  method?: PaymentMethod;
  description?: string;
  reason?: string;
}

/** The customer's payment fails (the bank declines it): a failed payment, payment.failed raised. */
export function fail(
  ctx: FlowCtx,
  orderId: string,
  options: FailOptions = {},
): { payment: Payment; error: CheckoutFailure } {
  const order = payable(ctx, orderId);
  const payment = newPayment(order, options.method ?? 'upi');
  ctx.state.payments.set(payment.id, payment);
  order.attempts++;
  order.status = 'attempted';
  const error: CheckoutFailure = {
    code: 'BAD_REQUEST_ERROR',
    description: options.description ?? 'Your payment could not be completed as it was declined by your bank.',
    source: 'bank',
    step: 'payment_authorization',
    reason: options.reason ?? 'payment_failed',
    metadata: { payment_id: payment.id, order_id: order.id },
  };
  Object.assign(payment, {
    status: 'failed',
    error_code: error.code,
    error_description: error.description,
    error_source: error.source,
    error_step: error.step,
    error_reason: error.reason,
  });
  ctx.webhooks.raise([paymentEvent('payment.failed', payment)]);
  return { payment, error };
}

/** The customer closes checkout: nothing is created and nothing is raised. */
export function cancel(ctx: FlowCtx, orderId: string): { error: CheckoutFailure } {
  const order = orderOf(ctx, orderId);
  return {
    error: {
      code: 'BAD_REQUEST_ERROR',
      description: 'Payment processing cancelled by user',
      source: 'customer',
      step: 'payment_authentication',
      reason: 'payment_cancelled',
      metadata: { order_id: order.id },
    },
  };
}

export interface RefundRequest {
  amount?: number;
  notes: Notes;
  receipt: string | null;
  speed: 'normal' | 'optimum';
}

/** Refund (part of) a captured payment; processed at once, refund.processed raised. */
export function refund(ctx: FlowCtx, payment: Payment, request: RefundRequest): Refund {
  if (payment.status === 'refunded') throw badInput('The payment has been fully refunded already');
  if (payment.status !== 'captured') throw badInput('Only payments which have been captured can be refunded');
  const left = payment.amount - payment.amount_refunded;
  const amount = request.amount ?? left;
  if (amount < 100) throw badInput(`The amount must be at least ${payment.currency} 1.00`, 'amount');
  if (amount > left) throw badInput('The refund amount provided is greater than amount captured', 'amount');
  const made: Refund = {
    id: newId('rfnd'),
    entity: 'refund',
    amount,
    currency: payment.currency,
    payment_id: payment.id,
    notes: request.notes,
    receipt: request.receipt,
    acquirer_data: { arn: null },
    created_at: nowSeconds(),
    batch_id: null,
    status: 'processed',
    speed_processed: 'normal',
    speed_requested: request.speed,
  };
  ctx.state.refunds.set(made.id, made);
  payment.amount_refunded += amount;
  const full = payment.amount_refunded === payment.amount;
  payment.refund_status = full ? 'full' : 'partial';
  if (full) payment.status = 'refunded';
  const payload = { refund: { entity: made }, payment: { entity: payment } };
  ctx.webhooks.raise([{ event: 'refund.created', contains: ['refund', 'payment'], payload }]);
  ctx.webhooks.raise([{ event: 'refund.processed', contains: ['refund', 'payment'], payload }]);
  return made;
}
