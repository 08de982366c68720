// How a monthly price looks on every surface (plans, quotes, services): the catalog price as it
// always was (`monthly`), whether it includes the 18 % GST, the GST of a month and what a month
// takes from the wallet (core/billing/charge.ts). With PRICES_INCLUDE_GST=true (the default)
// `monthly_with_gst` is `monthly` and `gst` is the part of it that is tax; with false, `monthly`
// is the taxable value and `monthly_with_gst` = `monthly` + `gst` is what is charged.

import { Type } from 'typebox';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import { chargeOfPrice } from '../../core/billing/charge.ts';
import { formatPaise } from '../../core/money.ts';

export type Pricing = Pick<InvoicingConfig, 'pricesIncludeGst' | 'sellerStateCode'>;

export const PriceSchema = Type.Object({
  monthly: Type.String({
    description:
      'the catalog price a month, INR with two decimals: GST included when includes_gst, before GST otherwise',
  }),
  currency: Type.Literal('INR'),
  includes_gst: Type.Boolean({ description: 'whether monthly includes the 18 % GST (PRICES_INCLUDE_GST)' }),
  gst: Type.String({ description: 'the GST of a month: part of monthly when includes_gst, added to it otherwise' }),
  monthly_with_gst: Type.String({
    description: 'what a month takes from the wallet: monthly when includes_gst, monthly + gst otherwise',
  }),
});

export function priceView(pricePaise: bigint | string | number, pricing: Pricing) {
  const charge = chargeOfPrice(pricing, pricePaise);
  return {
    monthly: formatPaise(pricePaise),
    currency: 'INR' as const,
    includes_gst: pricing.pricesIncludeGst,
    gst: formatPaise(charge.taxPaise),
    monthly_with_gst: formatPaise(charge.totalPaise),
  };
}
