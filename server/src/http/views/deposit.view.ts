// A deposit as the session surface shows it: manual ones with their reference and proof file,
// Razorpay ones with the gateway's order and payment ids (and neither reference nor proof).

import { Type } from 'typebox';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Deposit } from '../../db/tables.ts';

const Money = Type.String({ description: 'INR amount, two decimals' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const DepositSchema = Type.Object({
  id: Type.Integer(),
  public_id: Type.String({ description: 'pay_…' }),
  method: Type.String({ description: '`manual` (reported, reviewed by staff) or `razorpay` (paid online)' }),
  amount: Money,
  currency: Type.Literal('INR'),
  txn_ref: Nullable(Type.String({ description: 'the UPI or bank reference (manual deposits)' })),
  status: Type.String({ description: 'pending, approved or rejected' }),
  reason: Nullable(Type.String()),
  screenshot: Nullable(Type.Object({ type: Type.String(), bytes: Type.Integer(), url: Type.String() })),
  gateway_order_id: Nullable(Type.String({ description: 'the Razorpay order (razorpay deposits)' })),
  gateway_payment_id: Nullable(Type.String({ description: 'the Razorpay payment, once paid' })),
  created_at: Type.String({ format: 'date-time' }),
  reviewed_at: Nullable(Type.String({ format: 'date-time' })),
});

export function depositView(d: Deposit) {
  return {
    id: d.id,
    public_id: d.public_id,
    method: d.method,
    amount: formatPaise(d.amount_paise),
    currency: 'INR' as const,
    txn_ref: d.txn_ref,
    status: d.status,
    reason: d.reason,
    screenshot:
      d.screenshot_type === null || d.screenshot_bytes === null
        ? null
        : {
            type: d.screenshot_type,
            bytes: d.screenshot_bytes,
            url: `/api/v1/client/wallet/deposit/?id=${d.id}&action=screenshot`,
          },
    gateway_order_id: d.gateway_order_id,
    gateway_payment_id: d.gateway_payment_id,
    created_at: isoWithOffset(d.created_at),
    reviewed_at: d.reviewed_at ? isoWithOffset(d.reviewed_at) : null,
  };
}
