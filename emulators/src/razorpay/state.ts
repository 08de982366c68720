// What the emulated Razorpay account holds (orders, payments, refunds) and the entities as its API
// shows them. Field names, id shapes (`order_` + 14 base62 characters) and quirks (`notes` is `[]`
// when empty, a fully refunded payment's status becomes `refunded`) follow Razorpay's published
// API reference, so a driver written against that reference reads these objects unchanged.

import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A Razorpay id: the entity's prefix, `_`, then 14 base62 characters (e.g. `order_IluGWxBm9U8zJ8`). */
export function newId(prefix: string): string {
  const bytes = randomBytes(14);
  let tail = '';
  for (const byte of bytes) tail += BASE62[byte % 62];
  return `${prefix}_${tail}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Razorpay answers an empty notes object as a JSON array (`[]`), a PHP habit kept by its API. */
export type Notes = Record<string, string> | [];

export type OrderStatus = 'created' | 'attempted' | 'paid';
export type PaymentStatus = 'created' | 'authorized' | 'captured' | 'failed' | 'refunded';
export type PaymentMethod = 'upi' | 'card' | 'netbanking' | 'wallet';

export interface Order {
  id: string;
  entity: 'order';
  amount: number;
  amount_paid: number;
  amount_due: number;
  currency: string;
  receipt: string | null;
  offer_id: null;
  status: OrderStatus;
  attempts: number;
  notes: Notes;
  created_at: number;
}

export interface Payment {
  id: string;
  entity: 'payment';
  amount: number;
  currency: string;
  status: PaymentStatus;
  order_id: string;
  invoice_id: null;
  international: boolean;
  method: PaymentMethod;
  amount_refunded: number;
  refund_status: null | 'partial' | 'full';
  captured: boolean;
  description: string | null;
  card_id: string | null;
  card?: { id: string; entity: 'card'; name: string; last4: string; network: string; type: string; issuer: null };
  bank: string | null;
  wallet: string | null;
  vpa: string | null;
  email: string;
  contact: string;
  notes: Notes;
  fee: number | null;
  tax: number | null;
  error_code: string | null;
  error_description: string | null;
  error_source: string | null;
  error_step: string | null;
  error_reason: string | null;
  acquirer_data: Record<string, string | null>;
  created_at: number;
}

export interface Refund {
  id: string;
  entity: 'refund';
  amount: number;
  currency: string;
  payment_id: string;
  notes: Notes;
  receipt: string | null;
  acquirer_data: { arn: string | null };
  created_at: number;
  batch_id: null;
  status: 'pending' | 'processed' | 'failed';
  speed_processed: 'normal' | 'instant';
  speed_requested: 'normal' | 'optimum';
}

export class RazorpayState {
  orders = new Map<string, Order>();
  payments = new Map<string, Payment>();
  refunds = new Map<string, Refund>();

  clear(): void {
    this.orders.clear();
    this.payments.clear();
    this.refunds.clear();
  }

  /** The order's payments, oldest first (as `GET /v1/orders/{id}/payments` lists them). */
  paymentsOf(orderId: string): Payment[] {
    return [...this.payments.values()].filter((p) => p.order_id === orderId);
  }

  refundsOf(paymentId: string): Refund[] {
    return [...this.refunds.values()].filter((r) => r.payment_id === paymentId);
  }
}

export function newOrder(amount: number, currency: string, receipt: string | null, notes: Notes): Order {
  return {
    id: newId('order'),
    entity: 'order',
    amount,
    amount_paid: 0,
    amount_due: amount,
    currency,
    receipt,
    offer_id: null,
    status: 'created',
    attempts: 0,
    notes,
    created_at: nowSeconds(),
  };
}

/** A payment attempt on an order, as the customer's checkout creates it (not yet authorized). */
export function newPayment(order: Order, method: PaymentMethod): Payment {
  const id = newId('pay');
  const card = method === 'card';
  const cardId = card ? newId('card') : null;
  return {
    id,
    entity: 'payment',
    amount: order.amount_due,
    currency: order.currency,
    status: 'created',
    order_id: order.id,
    invoice_id: null,
    international: false,
    method,
    amount_refunded: 0,
    refund_status: null,
    captured: false,
    description: null,
    card_id: cardId,
    ...(card
      ? {
          card: {
            id: cardId ?? '',
            entity: 'card' as const,
            name: 'Emulated Customer',
            last4: '1111',
            network: 'Visa',
            type: 'credit',
            issuer: null,
          },
        }
      : {}),
    bank: method === 'netbanking' ? 'HDFC' : null,
    wallet: method === 'wallet' ? 'paytm' : null,
    vpa: method === 'upi' ? 'customer@okhdfcbank' : null,
    email: 'customer@example.com',
    contact: '+919000090000',
    notes: [],
    fee: null,
    tax: null,
    error_code: null,
    error_description: null,
    error_source: null,
    error_step: null,
    error_reason: null,
    acquirer_data: method === 'upi' ? { rrn: null, upi_transaction_id: null } : { auth_code: null },
    created_at: nowSeconds(),
  };
}

/** Razorpay's fee on a captured payment: 2 % plus 18 % GST on the fee, in paise (fee includes tax). */
export function feeOf(amount: number): { fee: number; tax: number } {
  const base = Math.round(amount * 0.02);
  const tax = Math.round(base * 0.18);
  return { fee: base + tax, tax };
}
