// What an account pays and owes (CONTRACT §7), on both surfaces: the monthly run-rate, the
// unpaid renewal orders with their total, and the next renewals.

import { Type } from 'typebox';
import type { Billing } from '../../core/billing/billing.service.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';

const Money = Type.Object({ amount: Type.String(), currency: Type.Literal('INR') });

export const BillingSchema = Type.Object({
  monthly_run_rate: Type.Object(
    { ...Money.properties },
    { description: 'what the renewing services take from the wallet a month, GST included' },
  ),
  unpaid: Type.Object({
    total: Money,
    orders: Type.Array(
      Type.Object({
        id: Type.Integer(),
        public_id: Type.String(),
        service: Type.Object({ id: Type.Integer(), label: Type.String() }),
        amount: Type.String(),
        renews_from: Type.Union([Type.String(), Type.Null()]),
        created_at: Type.String(),
      }),
    ),
  }),
  next_renewals: Type.Array(
    Type.Object({
      service: Type.Object({ id: Type.Integer(), label: Type.String() }),
      paid_until: Type.String(),
      amount: Type.String({ description: 'what the renewal takes from the wallet (GST included)' }),
    }),
  ),
});

export function billingView(summary: Awaited<ReturnType<Billing['summary']>>) {
  const money = (paise: bigint | string) => ({ amount: formatPaise(paise), currency: 'INR' as const });
  return {
    monthly_run_rate: money(summary.monthlyRunRatePaise),
    unpaid: {
      total: money(summary.unpaidTotalPaise),
      orders: summary.unpaid.map((o) => ({
        id: o.id,
        public_id: o.public_id,
        service: { id: o.service_id, label: o.label },
        amount: formatPaise(o.amount_paise),
        renews_from: o.renews_from ? isoWithOffset(o.renews_from) : null,
        created_at: isoWithOffset(o.created_at),
      })),
    },
    next_renewals: summary.next.map((s) => ({
      service: { id: s.id, label: s.label },
      paid_until: isoWithOffset(s.period_end as Date),
      amount: formatPaise(s.chargePaise),
    })),
  };
}
