// How an order looks, on every surface.

import { Type } from 'typebox';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Order } from '../../db/tables.ts';

export const OrderSchema = Type.Object({
  id: Type.Integer(),
  public_id: Type.String({ description: 'order_…' }),
  kind: Type.String({ description: 'new, renewal or resize (the pro-rata difference of a move to a larger plan)' }),
  status: Type.String({ description: 'unpaid, paid, refunded or cancelled' }),
  plan_id: Type.Integer(),
  service_id: Type.Union([Type.Integer(), Type.Null()]),
  amount: Type.String({
    description: 'what the order charges the wallet, GST included (the plan price, plus GST when prices exclude it)',
  }),
  currency: Type.Literal('INR'),
  created_at: Type.String({ format: 'date-time' }),
  paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  renews_from: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'a renewal: the paid_until it extends by a month',
  }),
});

export function orderView(o: Order) {
  return {
    id: o.id,
    public_id: o.public_id,
    kind: o.kind,
    status: o.status,
    plan_id: o.plan_id,
    service_id: o.service_id,
    amount: formatPaise(o.amount_paise),
    currency: 'INR' as const,
    created_at: isoWithOffset(o.created_at),
    paid_at: o.paid_at ? isoWithOffset(o.paid_at) : null,
    renews_from: o.renews_from ? isoWithOffset(o.renews_from) : null,
  };
}
