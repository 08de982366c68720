// The `/v1` API a driver calls with HTTP Basic `key_id:key_secret`: Orders (create, fetch, list,
// the order's payments), Payments (fetch, capture, refund, the payment's refunds) and Refunds
// (fetch). Input is checked as Razorpay checks it (amount in paise ≥ 100, INR, receipt ≤ 40
// characters, ≤ 15 notes, no unknown fields) and refused with its 400 envelope.

import { timingSafeEqual } from 'node:crypto';
import { capture, type FlowCtx, orderOf, refund } from './flows.ts';
import { authFailed, badInput, noRoute, notFound, RazorpayError } from './http.ts';
import { type Notes, newOrder, type Payment } from './state.ts';

export interface Answer {
  status: number;
  body: unknown;
}

const ID = /^[A-Za-z0-9]{14}$/;

/** The route key a call is counted (and `loseNext` named) by: ids replaced by `:`. */
export function routeKey(method: string, path: string): string {
  return `${method} ${path.replace(/\/(order|pay|rfnd)_[^/]*/g, '/:')}`;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Check `Authorization: Basic base64(key_id:key_secret)`; throws the 401 Razorpay answers. */
export function checkAuth(header: string | undefined, keyId: string, keySecret: string): void {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) {
    throw new RazorpayError(401, {
      ...authFailed().fields,
      description: 'Please provide your api key for authentication purposes.',
    });
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || !same(decoded.slice(0, colon), keyId) || !same(decoded.slice(colon + 1), keySecret)) {
    throw authFailed();
  }
}

function noExtra(body: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw badInput(`${extra.join(', ')} is/are not required and should not be sent`);
}

/** A whole number of paise from JSON (a number) or a form (digits). */
function paise(value: unknown, field: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw badInput(`The ${field} must be an integer.`, field);
  return n;
}

function notesOf(value: unknown): Notes {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value) && value.length === 0) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw badInput('The notes must be an object.', 'notes');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 15) throw badInput('Number of fields in notes should be less than or equal to 15', 'notes');
  const out: Record<string, string> = {};
  for (const [key, v] of entries) {
    if (typeof v !== 'string' && typeof v !== 'number') throw badInput('The notes values must be strings.', 'notes');
    const text = String(v);
    if (text.length > 256) throw badInput('Notes value should be less than 256 characters', 'notes');
    out[key] = text;
  }
  return entries.length === 0 ? [] : out;
}

function receiptOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badInput('The receipt must be a string.', 'receipt');
  if (value.length > 40) throw badInput('The receipt may not be greater than 40 characters.', 'receipt');
  return value;
}

function createOrder(ctx: FlowCtx, body: Record<string, unknown>): Answer {
  noExtra(body, ['amount', 'currency', 'receipt', 'notes', 'payment_capture', 'partial_payment']);
  if (body.amount === undefined) throw badInput('The amount field is required.', 'amount');
  const amount = paise(body.amount, 'amount');
  if (body.currency === undefined) throw badInput('The currency field is required.', 'currency');
  if (body.currency !== 'INR') throw badInput('Currency is not supported', 'currency');
  if (amount < 100) throw badInput('The amount must be at least INR 1.00', 'amount');
  const order = newOrder(amount, 'INR', receiptOf(body.receipt), notesOf(body.notes));
  ctx.state.orders.set(order.id, order);
  return { status: 200, body: order };
}

function idOf(prefix: string, raw: string): string {
  if (!raw.startsWith(`${prefix}_`) || !ID.test(raw.slice(prefix.length + 1))) {
    throw badInput(`${raw} is not a valid id`);
  }
  return raw;
}

function paymentOf(ctx: FlowCtx, raw: string): Payment {
  const payment = ctx.state.payments.get(idOf('pay', raw));
  if (!payment) throw notFound();
  return payment;
}

const collection = (items: unknown[]) => ({ entity: 'collection', count: items.length, items });

/** Newest first, `count` (default 10, at most 100) from `skip`, as Razorpay's list endpoints page. */
function page<T extends { created_at: number }>(items: T[], query: URLSearchParams): T[] {
  const count = Math.min(100, Math.max(1, Number(query.get('count') ?? 10) || 10));
  const skip = Math.max(0, Number(query.get('skip') ?? 0) || 0);
  return [...items].reverse().slice(skip, skip + count);
}

function capturePayment(ctx: FlowCtx, payment: Payment, body: Record<string, unknown>): Answer {
  noExtra(body, ['amount', 'currency']);
  if (body.amount === undefined) throw badInput('The amount field is required.', 'amount');
  if (paise(body.amount, 'amount') !== payment.amount) {
    throw badInput('Capture amount must be equal to the amount authorized', 'amount');
  }
  if (body.currency !== undefined && body.currency !== payment.currency) {
    throw badInput('The currency should be same as the payment currency', 'currency');
  }
  if (payment.status === 'captured' || payment.status === 'refunded') {
    throw badInput('This payment has already been captured');
  }
  if (payment.status !== 'authorized') throw badInput('Only payments which have been authorized can be captured');
  capture(ctx, payment);
  return { status: 200, body: payment };
}

function refundPayment(ctx: FlowCtx, payment: Payment, body: Record<string, unknown>): Answer {
  noExtra(body, ['amount', 'speed', 'notes', 'receipt']);
  const speed = body.speed ?? 'normal';
  if (speed !== 'normal' && speed !== 'optimum') throw badInput('The selected speed is invalid.', 'speed');
  const made = refund(ctx, payment, {
    ...(body.amount === undefined ? {} : { amount: paise(body.amount, 'amount') }),
    notes: notesOf(body.notes),
    receipt: receiptOf(body.receipt),
    speed,
  });
  return { status: 200, body: made };
}

/** Answer one `/v1/...` call (already authenticated). */
export function route(
  ctx: FlowCtx,
  method: string,
  path: string,
  query: URLSearchParams,
  body: Record<string, unknown>,
): Answer {
  const parts = path.split('/').filter(Boolean).slice(1);
  const [kind, id, sub, subId] = parts;
  if (kind === 'orders') {
    if (parts.length === 1 && method === 'POST') return createOrder(ctx, body);
    if (parts.length === 1 && method === 'GET') {
      return { status: 200, body: collection(page([...ctx.state.orders.values()], query)) };
    }
    if (id && parts.length === 2 && method === 'GET') return { status: 200, body: orderOf(ctx, idOf('order', id)) };
    if (id && sub === 'payments' && parts.length === 3 && method === 'GET') {
      const order = orderOf(ctx, idOf('order', id));
      return { status: 200, body: collection(ctx.state.paymentsOf(order.id)) };
    }
  }
  if (kind === 'payments' && id) {
    if (parts.length === 2 && method === 'GET') return { status: 200, body: paymentOf(ctx, id) };
    if (sub === 'capture' && parts.length === 3 && method === 'POST')
      return capturePayment(ctx, paymentOf(ctx, id), body);
    if (sub === 'refund' && parts.length === 3 && method === 'POST')
      return refundPayment(ctx, paymentOf(ctx, id), body);
    if (sub === 'refunds' && parts.length === 3 && method === 'GET') {
      return { status: 200, body: collection(ctx.state.refundsOf(paymentOf(ctx, id).id)) };
    }
    if (sub === 'refunds' && subId && parts.length === 4 && method === 'GET') {
      const made = ctx.state.refunds.get(idOf('rfnd', subId));
      if (!made || made.payment_id !== paymentOf(ctx, id).id) throw notFound();
      return { status: 200, body: made };
    }
  }
  if (kind === 'refunds' && id && parts.length === 2 && method === 'GET') {
    const made = ctx.state.refunds.get(idOf('rfnd', id));
    if (!made) throw notFound();
    return { status: 200, body: made };
  }
  throw noRoute();
}
