// The JSON branch of POST /api/v1/client/wallet/deposit/ (CONTRACT §12): `{method: "razorpay",
// amount}` opens an online deposit and answers what Razorpay Checkout needs; `{action:
// "razorpay_verify", …}` takes checkout's hand-back. The manual multipart flow is in
// wallet.routes.ts; both share the route, its CSRF check and its rate limits.

import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Who } from '../../core/activity/activity.ts';
import type { LoadedSession } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import { DepositSchema, depositView } from '../views/deposit.view.ts';
import { limited } from './context.ts';
import { okSchema } from './envelopes.ts';

/** The fields of the JSON forms, next to the multipart ones in the route's body schema. */
export const RAZORPAY_BODY = {
  method: Type.Optional(Type.Union([Type.Literal('manual'), Type.Literal('razorpay')])),
  action: Type.Optional(Type.Literal('razorpay_verify')),
  razorpay_order_id: Type.Optional(Type.String({ maxLength: 64 })),
  razorpay_payment_id: Type.Optional(Type.String({ maxLength: 64 })),
  razorpay_signature: Type.Optional(Type.String({ maxLength: 256 })),
};

export const CheckoutSchema = Type.Object({
  key_id: Type.String(),
  order_id: Type.String({ description: 'the Razorpay order to open Checkout with' }),
  amount_paise: Type.Integer(),
  currency: Type.Literal('INR'),
  name: Type.String({ description: 'the merchant name Checkout shows' }),
  prefill: Type.Object({ name: Type.String(), email: Type.String() }),
  url: Type.String({
    description:
      "Razorpay's Hosted Checkout page: the browser POSTs `fields` there as an HTML form to pay. It sends the " +
      'customer back to PUBLIC_URL/wallet/razorpay-return (a POST with the signed fields, or a GET with ' +
      '`cancelled=1` when they cancel); the panel then sends `razorpay_verify`.',
  }),
  fields: Type.Record(Type.String(), Type.String(), {
    description: 'the hidden fields of that form: key_id, order_id, amount, callback_url, cancel_url, prefill[…], …',
  }),
});

export const RAZORPAY_ANSWERS = {
  started: okSchema({ deposit: DepositSchema, checkout: CheckoutSchema }),
  verified: okSchema({ deposit: DepositSchema }),
};

export interface JsonDepositBody {
  method?: 'manual' | 'razorpay';
  action?: 'razorpay_verify';
  amount?: string | number;
  razorpay_order_id?: string;
  razorpay_payment_id?: string;
  razorpay_signature?: string;
}

/** Answer a JSON deposit request (the caller has checked it is not multipart). */
export async function razorpayDeposit(
  deps: Deps,
  reply: FastifyReply,
  session: LoadedSession,
  body: JsonDepositBody,
  who: Who,
) {
  if (body.action === 'razorpay_verify') {
    const out = await deps.razorpay.verifyCheckout(
      session.account.id,
      {
        orderId: body.razorpay_order_id,
        paymentId: body.razorpay_payment_id,
        signature: body.razorpay_signature,
      },
      who,
    );
    const { deposit } = out;
    const message =
      deposit.status === 'approved'
        ? `Payment received: ₹${formatPaise(deposit.amount_paise)} added to your wallet.`
        : deposit.status === 'rejected'
          ? `The payment failed: ${deposit.reason ?? 'no reason given'}.`
          : 'The payment is not captured yet; your wallet is credited as soon as it is.';
    return reply.code(200).send({ success: true as const, message, deposit: depositView(deposit) });
  }
  if (body.method !== 'razorpay') {
    throw new AppError('unsupported_media_type', {
      message:
        'Send a manual deposit as multipart/form-data with the screenshot as a file, or JSON with method "razorpay".',
    });
  }
  // An installation without a gateway takes manual deposits only: the method is not one it offers.
  if (!deps.razorpay.configured) {
    throw new AppError('not_supported', {
      message: 'Online payments are not configured; report a UPI or bank payment instead.',
    });
  }
  const key = `account:${session.account.id}`;
  const { deposit, checkout } = await limited(
    deps,
    reply,
    [
      ['deposit_account', key],
      ['deposit_daily_account', key],
    ],
    () => deps.razorpay.start(session.account, body.amount, who),
  );
  return reply.code(201).send({
    success: true as const,
    message: `Pay ₹${formatPaise(deposit.amount_paise)} through Razorpay to add it to your wallet.`,
    deposit: depositView(deposit),
    checkout,
  });
}
