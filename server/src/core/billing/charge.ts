// What a plan's price takes from the wallet (issue 35, CONTRACT §12): the one place that decides
// it, so every charge — a new order, a renewal bought, billed by the cycle or paid later — debits
// exactly what its tax invoice totals.
//
// PRICES_INCLUDE_GST=true (the default): the catalog price is what is charged and the invoice
// carves the 18 % out of it. PRICES_INCLUDE_GST=false: the catalog price is the taxable value and
// the charge is the price plus GST, the tax rounded to the paisa half up (gst.ts taxSplit). The
// total does not depend on the place of supply — CGST 9 % + SGST 9 % and IGST 18 % are the same
// 18 % of the same value, rounded once — which only decides how the invoice names the tax; the
// account's place of supply (its billing profile, else the seller's state) is reported all the
// same, for the views that show the split.
//
// What an order charges is decided once, when the order is made, and kept as the order's
// `amount_paise`; paying an unpaid order later takes that amount, whatever the configuration has
// become since, and its invoice splits that amount (invoices.ts invoiceSplit).

import type { Kysely } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB } from '../../db/tables.ts';
import * as services from '../services/service.repository.ts';
import { placeOfSupply, type TaxSplit, taxSplit } from './gst.ts';

export interface Charge {
  /** The catalog price the charge is for, in paise. */
  pricePaise: bigint;
  /** What the wallet is debited and the invoice totals: the price, or the price plus GST. */
  totalPaise: bigint;
  /** The GST in the total: carved out of the price (inclusive) or added to it (exclusive). */
  taxPaise: bigint;
  /** The invoice's heads for this place of supply. */
  split: TaxSplit;
  placeOfSupply: string;
  /** Whether the catalog price already includes the GST (PRICES_INCLUDE_GST). */
  pricesIncludeGst: boolean;
}

/** The charge of a price for a buyer supplied in `supply` (default: the seller's state). Pure. */
export function chargeOfPrice(
  settings: Pick<InvoicingConfig, 'pricesIncludeGst' | 'sellerStateCode'>,
  pricePaise: bigint | number | string,
  supply: string = settings.sellerStateCode,
): Charge {
  const price = BigInt(pricePaise);
  const split = taxSplit({
    amountPaise: price,
    pricesIncludeGst: settings.pricesIncludeGst,
    sellerState: settings.sellerStateCode,
    placeOfSupply: supply,
  });
  return {
    pricePaise: price,
    totalPaise: split.totalPaise,
    taxPaise: split.totalPaise - split.taxablePaise,
    split,
    placeOfSupply: supply,
    pricesIncludeGst: settings.pricesIncludeGst,
  };
}

/** The state an account is supplied in: its billing profile's, else the seller's (gst.ts placeOfSupply). */
export async function placeOfSupplyOf(
  db: Kysely<DB>,
  settings: Pick<InvoicingConfig, 'sellerStateCode'>,
  accountId: number,
): Promise<string> {
  const profile = await db
    .selectFrom('billing_profiles')
    .select('state_code')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return placeOfSupply(profile?.state_code ?? null, settings.sellerStateCode);
}

/**
 * What a plan price charges this account, as every charge path asks it: the order placed, the
 * renewal bought or billed, the wallet's sufficiency checks. `db` is the caller's transaction
 * when there is one.
 */
export async function chargeFor(
  db: Kysely<DB>,
  settings: Pick<InvoicingConfig, 'pricesIncludeGst' | 'sellerStateCode'>,
  accountId: number,
  pricePaise: bigint | number | string,
): Promise<Charge> {
  return chargeOfPrice(settings, pricePaise, await placeOfSupplyOf(db, settings, accountId));
}

/**
 * What the account's services take from the wallet a month: each renewing service's charge and
 * each of its add-ons' (with GST when prices exclude it), summed — rounded per line, as each is
 * charged (addons.ts renewalCharge).
 */
export async function monthlyCharge(
  db: Kysely<DB>,
  settings: Pick<InvoicingConfig, 'pricesIncludeGst' | 'sellerStateCode'>,
  accountId: number,
): Promise<bigint> {
  const [plans, addons] = await Promise.all([
    services.ownRenewingPrices(db, accountId),
    services.ownRenewingAddonPrices(db, accountId),
  ]);
  let total = 0n;
  for (const { pricePaise, count } of [...plans, ...addons])
    total += chargeOfPrice(settings, pricePaise).totalPaise * BigInt(count);
  return total;
}
