// Tax invoices (issue 35, CONTRACT §12): one issued in the very transaction that takes an order's
// money, so an invoice exists exactly when a charge does. The number is the next serial of
// (INVOICE_PREFIX, financial year), taken with UPDATE … RETURNING on invoice_series: the row lock
// orders concurrent charges (across processes too), and a charge that rolls back takes its number
// back with it, so the series has no gap and no duplicate. The buyer (the billing profile, else
// the account's name and e-mail) and the seller are copied into the invoice, which is never
// changed afterwards (no UPDATE or DELETE here; the database refuses both).

import type { Kysely, Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import { pageOf } from '../../db/page.ts';
import type { DB, Invoice, InvoiceLine, InvoiceParty } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { invoiceData } from '../webhooks/payloads.ts';
import { financialYear, invoiceNumber, placeOfSupply, stateName, type TaxSplit, taxSplit } from './gst.ts';

/** SAC of "hosting and information technology infrastructure provisioning services". */
export const HOSTING_SAC = '998315';

export interface IssueInvoiceInput {
  accountId: number;
  orderId: number;
  /**
   * What the order charged, in paise, as the ledger debited it (charge.ts chargeFor): the GST is
   * in it whichever way prices are configured.
   */
  amountPaise: bigint | number | string;
  description: string;
  at: Date;
  /**
   * Lines of their own inside `amountPaise` (a renewal's add-ons: "Scheduled backups"), each as
   * charged; the first line is what is left. Each line's tax is carved out of it alone, and the
   * invoice's heads are the lines' sums, so the total is still the debit.
   */
  addons?: readonly { description: string; amountPaise: bigint }[];
}

/** The next serial of a series in a financial year, in `trx`: held (locked) until it commits. */
export async function nextSerial(trx: Transaction<DB>, series: string, fy: string): Promise<number> {
  await trx
    .insertInto('invoice_series')
    .values({ series, fy, next_serial: 1 })
    .onConflict((oc) => oc.columns(['series', 'fy']).doNothing())
    .execute();
  const row = await trx
    .updateTable('invoice_series')
    .set((eb) => ({ next_serial: eb('next_serial', '+', 1) }))
    .where('series', '=', series)
    .where('fy', '=', fy)
    .returning('next_serial')
    .executeTakeFirstOrThrow();
  return row.next_serial - 1;
}

/** The buyer as the invoice will name them: the billing profile, else the account itself (B2C). */
async function buyerOf(trx: Transaction<DB>, accountId: number): Promise<InvoiceParty> {
  const profile = await trx
    .selectFrom('billing_profiles')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (profile) {
    const address = [profile.address_line1, profile.address_line2, `${profile.city} ${profile.pincode}`]
      .filter((part) => part !== null && part !== '')
      .join(', ');
    return {
      legal_name: profile.legal_name,
      address,
      state_code: profile.state_code,
      state_name: stateName(profile.state_code),
      gstin: profile.gstin,
    };
  }
  const account = await trx
    .selectFrom('accounts')
    .select(['name', 'email'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return {
    legal_name: account.name,
    address: null,
    state_code: null,
    state_name: null,
    gstin: null,
    email: account.email,
  };
}

export function sellerOf(settings: InvoicingConfig): InvoiceParty {
  return {
    legal_name: settings.sellerLegalName,
    address: settings.sellerAddress,
    state_code: settings.sellerStateCode,
    state_name: stateName(settings.sellerStateCode),
    gstin: settings.sellerGstin,
  };
}

/**
 * The invoice heads of an amount charged. The charge always holds the GST — inclusive prices are
 * charged as they are, exclusive ones as price + round(price × 18 %) (charge.ts) — so the invoice
 * carves the tax out of what was charged, and its total is the ledger's debit by construction.
 * For an exclusive charge this gives back the price as the taxable value exactly: with
 * total = p + t, t = p × r rounded half up (|t − p × r| ≤ ½), total ÷ (1 + r) = p + (t − p × r) ÷
 * (1 + r), which is within ½ ÷ 1.18 < ½ of p and so rounds (half up) to p; the tax is then t.
 * gst.test.ts checks it for every price up to ₹20,000, and at random up to ₹10 lakh.
 */
export function invoiceSplit(
  settings: Pick<InvoicingConfig, 'sellerStateCode'>,
  chargedPaise: bigint,
  supply: string,
): TaxSplit {
  return taxSplit({
    amountPaise: chargedPaise,
    pricesIncludeGst: true,
    sellerState: settings.sellerStateCode,
    placeOfSupply: supply,
  });
}

/**
 * Issue the tax invoice of an order whose money `trx` has just taken. Call it inside the charging
 * transaction, after the debit: if anything later refuses the charge, the invoice and its number
 * go with it.
 */
export async function issueInvoice(
  trx: Transaction<DB>,
  settings: InvoicingConfig,
  input: IssueInvoiceInput,
): Promise<Invoice> {
  const buyer = await buyerOf(trx, input.accountId);
  const seller = sellerOf(settings);
  const supply = placeOfSupply(buyer.state_code, settings.sellerStateCode);
  const extras = input.addons ?? [];
  const main = BigInt(input.amountPaise) - extras.reduce((sum, a) => sum + a.amountPaise, 0n);
  const parts = [{ description: input.description, amountPaise: main }, ...extras];
  const lines: InvoiceLine[] = [];
  const split = { taxablePaise: 0n, cgstPaise: 0n, sgstPaise: 0n, igstPaise: 0n, totalPaise: 0n, rateBps: 0 };
  for (const part of parts) {
    const one = invoiceSplit(settings, part.amountPaise, supply);
    split.taxablePaise += one.taxablePaise;
    split.cgstPaise += one.cgstPaise;
    split.sgstPaise += one.sgstPaise;
    split.igstPaise += one.igstPaise;
    split.totalPaise += one.totalPaise;
    split.rateBps = one.rateBps;
    lines.push({
      description: part.description,
      sac: HOSTING_SAC,
      quantity: 1,
      taxable_paise: String(one.taxablePaise),
      cgst_paise: String(one.cgstPaise),
      sgst_paise: String(one.sgstPaise),
      igst_paise: String(one.igstPaise),
      total_paise: String(one.totalPaise),
    });
  }
  const fy = financialYear(input.at);
  // Taken last, so the series row — shared by every charge — stays locked for the shortest time.
  const serial = await nextSerial(trx, settings.invoicePrefix, fy);
  const invoice = await trx
    .insertInto('invoices')
    .values({
      number: invoiceNumber(settings.invoicePrefix, fy, serial),
      kind: 'invoice',
      account_id: input.accountId,
      order_id: input.orderId,
      original_invoice_id: null,
      issued_at: input.at,
      fy,
      serial,
      taxable_paise: split.taxablePaise,
      cgst_paise: split.cgstPaise,
      sgst_paise: split.sgstPaise,
      igst_paise: split.igstPaise,
      total_paise: split.totalPaise,
      rate_bps: split.rateBps,
      place_of_supply: supply,
      b2b: buyer.gstin !== null,
      buyer: JSON.stringify(buyer),
      seller: JSON.stringify(seller),
      lines: JSON.stringify(lines),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, input.accountId, 'invoice.issued', invoiceData(invoice), input.at);
  return invoice;
}

/** Reading issued invoices; nothing here writes (they are immutable once issued). */
export function createInvoiceService({ db }: { db: Kysely<DB> }) {
  return {
    /** The account's invoices, newest first. */
    list: (accountId: number, page: number, perPage: number) =>
      pageOf(
        db.selectFrom('invoices').where('account_id', '=', accountId),
        (q) => q.selectAll().orderBy('id', 'desc'),
        page,
        perPage,
      ),

    /** One of the account's invoices; another account's is 404 not_owner, like a missing one. */
    async get(accountId: number, invoiceId: number): Promise<Invoice> {
      const invoice = await db
        .selectFrom('invoices')
        .selectAll()
        .where('id', '=', invoiceId)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (!invoice) throw new AppError('not_owner');
      return invoice;
    },

    /** The invoices of these orders, by order id (orders without one are absent). */
    async ofOrders(accountId: number, orderIds: number[]): Promise<Map<number, Invoice>> {
      if (orderIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('invoices')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('kind', '=', 'invoice')
        .where('order_id', 'in', orderIds)
        .execute();
      return new Map(rows.map((row) => [row.order_id as number, row]));
    },
  };
}

export type InvoiceService = ReturnType<typeof createInvoiceService>;
