// Online deposits through Razorpay (issue 35, CONTRACT §12). `start` makes a gateway order for
// the amount (receipt: the deposit's public id) and only then the pending deposit row, so a
// gateway failure leaves nothing half made (an order nobody pays is harmless at Razorpay).
// Checkout's hand-back (signature checked) and the webhooks (payment.captured, order.paid) both
// end in `confirm`: under a lock on the deposit it asks the gateway about the payment and credits
// the wallet through the staff approval's own path, so however many of them arrive, in whatever
// order, the money is credited exactly once. payment.failed rejects the deposit (nothing is
// credited); a checkout the customer abandons leaves it pending.

import type { Logger } from 'pino';
import type { RazorpaySettings } from '../../config-razorpay.ts';
import type { Deposit } from '../../db/tables.ts';
import { UpstreamError } from '../../upstreams/errors.ts';
import {
  RazorpayClient,
  type RazorpayPayment,
  type RazorpayRefund,
  verifyCheckoutSignature,
  verifyWebhookSignature,
} from '../../upstreams/razorpay/index.ts';
import { byClient, SYSTEM, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import { formatPaise, parsePaise } from '../money.ts';
import {
  approve,
  type DepositServiceOptions,
  depositCreated,
  MAX_DEPOSIT_PAISE,
  type Owner,
  reject,
} from './deposit.service.ts';
import { type DepositRefund, refundDeposit, refundEvent } from './refund.ts';

/** Razorpay takes orders of ₹1.00 or more. */
const MIN_ONLINE_PAISE = 100n;

/**
 * Where Hosted Checkout sends the customer back: the panel's page, which asks the session surface
 * to verify (the gateway POSTs there; server/src/http/razorpay-return.ts turns it into a GET).
 */
export const RAZORPAY_RETURN_PATH = '/wallet/razorpay-return';

export interface RazorpayDepositsOptions extends DepositServiceOptions {
  settings: RazorpaySettings | null;
  /** The merchant name checkout shows. */
  merchantName: string;
  /** PUBLIC_URL: checkout's callback and cancel URLs are on it. */
  publicUrl: string;
  logger: Logger;
}

export interface Checkout {
  key_id: string;
  order_id: string;
  amount_paise: number;
  currency: 'INR';
  name: string;
  prefill: { name: string; email: string };
  /** Hosted Checkout: POST `fields` to `url` as an HTML form (the browser goes there to pay). */
  url: string;
  fields: Record<string, string>;
}

/** Razorpay's Hosted Checkout page for the gateway at `apiUrl` (the emulator serves it too). */
function hostedCheckoutUrl(settings: RazorpaySettings): string {
  return `${settings.apiUrl}/v1/checkout/embedded`;
}

export interface CheckoutReturn {
  orderId: unknown;
  paymentId: unknown;
  signature: unknown;
}

interface Gateway {
  settings: RazorpaySettings;
  client: RazorpayClient;
}

const notConfigured = () =>
  new AppError('not_supported', {
    message: 'Online payments are not configured; report a UPI or bank payment instead.',
  });

function gatewayDown(error: unknown): AppError {
  const detail = error instanceof UpstreamError && error.kind === 'rejected' ? ` (${error.detail ?? 'refused'})` : '';
  return new AppError('service_unavailable', {
    message: `Razorpay could not be reached${detail}; try again in a few minutes.`,
    retryAfter: 30,
  });
}

function amountOf(input: unknown): bigint {
  const amount = parsePaise(input);
  if (input === undefined || input === '') throw AppError.fields({ amount: 'is required' });
  if (!amount.ok) throw AppError.fields({ amount: amount.reason });
  if (amount.paise < MIN_ONLINE_PAISE) throw AppError.fields({ amount: 'must be at least 1.00' });
  if (amount.paise > MAX_DEPOSIT_PAISE)
    throw AppError.fields({ amount: `must be at most ${formatPaise(MAX_DEPOSIT_PAISE)}` });
  return amount.paise;
}

/** What the gateway said, as the reason a deposit was not approved. */
function failureReason(payment: Partial<RazorpayPayment>): string {
  const words = [payment.error_description, payment.error_reason ? `(${payment.error_reason})` : null].filter(Boolean);
  return words.length > 0 ? `Razorpay: ${words.join(' ')}` : 'Razorpay: the payment failed';
}

/** What the steps below share: the options, and the gateway (or the refusal when there is none). */
interface Ctx {
  options: RazorpayDepositsOptions;
  need(): Gateway;
}

/** The payment as the gateway has it now; a payment of another order or amount is refused. */
async function paymentFor(ctx: Ctx, g: Gateway, deposit: Deposit, paymentId: string): Promise<RazorpayPayment> {
  let payment: RazorpayPayment;
  try {
    payment = await g.client.fetchPayment(paymentId);
  } catch (error) {
    if (error instanceof UpstreamError && (error.kind === 'not_found' || error.status === 400)) {
      throw AppError.fields({ razorpay_payment_id: 'is not a payment of this account' });
    }
    throw gatewayDown(error);
  }
  if (payment.order_id !== deposit.gateway_order_id || BigInt(payment.amount) !== BigInt(deposit.amount_paise)) {
    ctx.options.logger.warn(
      { deposit: deposit.public_id, payment: paymentId },
      'razorpay: payment does not match its deposit',
    );
    throw new AppError('conflict', { message: 'This payment does not belong to that deposit.' });
  }
  return payment;
}

/**
 * Settle the deposit of `orderId` from payment `paymentId`: credited once when captured,
 * rejected when failed, left pending otherwise. Idempotent; safe against any concurrency. `who`:
 * the customer back from checkout, or the platform (a webhook), as the activity log names it.
 */
async function confirm(
  ctx: Ctx,
  paymentId: string,
  orderId: string,
  who: Who,
): Promise<{ deposit: Deposit; credited: boolean }> {
  const g = ctx.need();
  return ctx.options.db.transaction().execute(async (trx) => {
    const deposit = await trx
      .selectFrom('deposits')
      .selectAll()
      .where('gateway_order_id', '=', orderId)
      .where('method', '=', 'razorpay')
      .forUpdate()
      .executeTakeFirst();
    if (!deposit) throw new AppError('not_found', { message: 'No deposit has this Razorpay order.' });
    if (deposit.status === 'approved') return { deposit, credited: false };
    const payment = await paymentFor(ctx, g, deposit, paymentId);
    const account = await ownerOf(trx, deposit.account_id);
    if (payment.status === 'failed' && deposit.status === 'pending') {
      const out = await reject(ctx.options, trx, deposit, account, 'razorpay', failureReason(payment), who);
      return { deposit: out.deposit, credited: false };
    }
    // Captured money is credited even after an earlier attempt on the order failed.
    if (payment.status !== 'captured' && payment.status !== 'refunded') return { deposit, credited: false };
    const paid = await trx
      .updateTable('deposits')
      .set({ gateway_payment_id: paymentId, reason: null })
      .where('id', '=', deposit.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const out = await approve(ctx.options, trx, paid, account, 'razorpay', who);
    ctx.options.logger.info({ deposit: deposit.public_id, payment: paymentId }, 'razorpay: deposit credited');
    return { deposit: out.deposit, credited: true };
  });
}

/** payment.failed: the deposit is rejected with the gateway's reason, unless already settled. */
async function failed(ctx: Ctx, payment: Partial<RazorpayPayment>): Promise<void> {
  if (typeof payment.order_id !== 'string') return;
  await ctx.options.db.transaction().execute(async (trx) => {
    const deposit = await trx
      .selectFrom('deposits')
      .selectAll()
      .where('gateway_order_id', '=', payment.order_id as string)
      .where('method', '=', 'razorpay')
      .forUpdate()
      .executeTakeFirst();
    if (deposit?.status !== 'pending') return;
    await reject(ctx.options, trx, deposit, await ownerOf(trx, deposit.account_id), 'razorpay', failureReason(payment));
  });
}

/** A pending deposit and its gateway order; what checkout needs to take the payment. */
async function start(
  ctx: Ctx,
  account: Owner,
  amountInput: unknown,
  who: Who,
): Promise<{ deposit: Deposit; checkout: Checkout }> {
  const g = ctx.need();
  const amount = amountOf(amountInput);
  const id = publicId('pay');
  let orderId: string;
  try {
    const order = await g.client.createOrder({ amountPaise: Number(amount), receipt: id, notes: { deposit: id } });
    orderId = order.id;
  } catch (error) {
    ctx.options.logger.warn({ err: error, deposit: id }, 'razorpay: order not created');
    throw gatewayDown(error);
  }
  const deposit = await ctx.options.db.transaction().execute(async (trx) => {
    const made = await trx
      .insertInto('deposits')
      .values({
        public_id: id,
        account_id: account.id,
        amount_paise: amount,
        method: 'razorpay',
        gateway_order_id: orderId,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await depositCreated(trx, made, who, ctx.options.clock());
    return made;
  });
  const back = `${ctx.options.publicUrl.replace(/\/+$/, '')}${RAZORPAY_RETURN_PATH}`;
  const checkout: Checkout = {
    key_id: g.settings.keyId,
    order_id: orderId,
    amount_paise: Number(amount),
    currency: 'INR',
    name: ctx.options.merchantName,
    prefill: { name: account.name, email: account.email },
    url: hostedCheckoutUrl(g.settings),
    fields: {
      key_id: g.settings.keyId,
      order_id: orderId,
      amount: String(amount),
      currency: 'INR',
      name: ctx.options.merchantName,
      description: `Wallet deposit ${id}`,
      'prefill[name]': account.name,
      'prefill[email]': account.email,
      callback_url: back,
      cancel_url: `${back}?${new URLSearchParams({ cancelled: '1', razorpay_order_id: orderId })}`,
    },
  };
  return { deposit, checkout };
}

/** Checkout's hand-back: the signature must be Razorpay's, the order one of the account's. */
async function verifyCheckout(ctx: Ctx, accountId: number, input: CheckoutReturn, who: Who) {
  const g = ctx.need();
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries({
    razorpay_order_id: input.orderId,
    razorpay_payment_id: input.paymentId,
    razorpay_signature: input.signature,
  })) {
    if (typeof value !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(value)) fields[name] = 'is required';
  }
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  const orderId = input.orderId as string;
  const paymentId = input.paymentId as string;
  if (!verifyCheckoutSignature(orderId, paymentId, input.signature, g.settings.keySecret)) {
    throw new AppError('bad_signature', { message: 'The payment signature does not match; nothing was credited.' });
  }
  const own = await ctx.options.db
    .selectFrom('deposits')
    .select('id')
    .where('gateway_order_id', '=', orderId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!own) throw new AppError('not_owner');
  return confirm(ctx, paymentId, orderId, who);
}

/** A webhook, by its raw bytes: false when the signature is wrong (nothing is done). */
async function webhook(ctx: Ctx, raw: Buffer, signature: unknown): Promise<{ verified: boolean; handled: string }> {
  const g = ctx.need();
  if (!verifyWebhookSignature(raw, signature, g.settings.webhookSecret)) return { verified: false, handled: 'none' };
  let event: {
    event?: unknown;
    payload?: { payment?: { entity?: Partial<RazorpayPayment> }; refund?: { entity?: Partial<RazorpayRefund> } };
  };
  try {
    event = JSON.parse(raw.toString('utf8'));
  } catch {
    return { verified: true, handled: 'unparsable' };
  }
  const payment = event.payload?.payment?.entity;
  const name = typeof event.event === 'string' ? event.event : 'unknown';
  if ((name === 'payment.captured' || name === 'order.paid') && payment?.id && payment.order_id) {
    const known = await ctx.options.db
      .selectFrom('deposits')
      .select('id')
      .where('gateway_order_id', '=', payment.order_id)
      .executeTakeFirst();
    if (!known) return { verified: true, handled: 'unknown_order' };
    await confirm(ctx, payment.id, payment.order_id, SYSTEM);
    return { verified: true, handled: name };
  }
  if (name === 'payment.failed' && payment) {
    await failed(ctx, payment);
    return { verified: true, handled: name };
  }
  // Never moves money: a refund's debit is made by the staff command that asked for it.
  if (name === 'refund.processed' || name === 'refund.created') {
    return { verified: true, handled: await refundEvent(ctx.options, event.payload?.refund?.entity) };
  }
  return { verified: true, handled: 'ignored' };
}

export function createRazorpayDeposits(options: RazorpayDepositsOptions) {
  let gateway: Gateway | null = null;
  const configure = (settings: RazorpaySettings | null): void => {
    gateway?.client.close();
    gateway = settings === null ? null : { settings, client: new RazorpayClient(settings) };
  };
  configure(options.settings);
  const ctx: Ctx = {
    options,
    need() {
      if (gateway === null) throw notConfigured();
      return gateway;
    },
  };
  return {
    /** Point at another account (demo mode: the emulator it started), or none. */
    configure,
    get configured(): boolean {
      return gateway !== null;
    },
    /** The origin the panel sends customers to pay on (its CSP allows forms to it), or null. */
    get checkoutOrigin(): string | null {
      return gateway === null ? null : new URL(hostedCheckoutUrl(gateway.settings)).origin;
    },
    /** A pending deposit and its gateway order; what checkout needs to take the payment. */
    start: (account: Owner, amount: unknown, who: Who = byClient(null)) => start(ctx, account, amount, who),
    /** Checkout's hand-back: the signature must be Razorpay's, the order one of the account's. */
    verifyCheckout: (accountId: number, input: CheckoutReturn, who: Who = byClient(null)) =>
      verifyCheckout(ctx, accountId, input, who),
    /** A webhook, by its raw bytes: `verified` false when the signature is wrong (nothing is done). */
    webhook: (raw: Buffer, signature: unknown) => webhook(ctx, raw, signature),
    confirm: (paymentId: string, orderId: string, who: Who = SYSTEM) => confirm(ctx, paymentId, orderId, who),
    /** Staff refund an approved online deposit back through the gateway (./refund.ts). */
    refund: (input: DepositRefund) => refundDeposit(ctx.options, ctx.need().client, input),
    close(): void {
      gateway?.client.close();
    },
  };
}

async function ownerOf(trx: Parameters<typeof approve>[1], accountId: number): Promise<Owner> {
  return trx
    .selectFrom('accounts')
    .select(['id', 'name', 'email'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
}

export type RazorpayDeposits = ReturnType<typeof createRazorpayDeposits>;
