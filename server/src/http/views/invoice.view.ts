// How a tax invoice looks (issue 35, CONTRACT §12): a summary in lists, everything in the detail,
// and the fields the token surface adds to each order of GET /api/v1/invoices. Amounts are
// strings with two decimals (rupees), like every amount the API answers.

import { Type } from 'typebox';
import { amountInWords, stateName } from '../../core/billing/gst.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Invoice } from '../../db/tables.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** A rate in basis points as a percentage with two decimals: 1800 → "18.00". */
function percent(bps: number): string {
  return formatPaise(bps);
}

const TaxSchema = Type.Object({
  cgst: Type.String(),
  sgst: Type.String(),
  igst: Type.String(),
  rate: Type.String({ description: 'the GST rate in percent, "18.00"' }),
});

export const InvoiceSummarySchema = Type.Object({
  id: Type.Integer(),
  number: Type.String({
    description: 'PREFIX/FY/serial, e.g. HP/2627/000042; a credit note PREFIXC/FY/serial (its own series)',
  }),
  kind: Type.Union([Type.Literal('invoice'), Type.Literal('credit_note')], {
    description: 'invoice, or credit_note: a refund or reduction of an earlier invoice (its amounts are credited)',
  }),
  original_number: Nullable(Type.String({ description: 'a credit note: the number of the invoice it credits' })),
  reason: Nullable(Type.String({ description: 'a credit note: why it was issued' })),
  order_id: Type.Union([Type.Integer(), Type.Null()]),
  issued_at: Type.String({ format: 'date-time' }),
  financial_year: Type.String({ description: '2627 for 1 April 2026 – 31 March 2027' }),
  place_of_supply: Type.String({ description: 'GST state code' }),
  b2b: Type.Boolean({ description: 'the buyer has a GSTIN' }),
  taxable_value: Type.String(),
  tax: TaxSchema,
  total: Type.String(),
  currency: Type.Literal('INR'),
  description: Type.String({ description: 'what it is for: the first line\'s description, "(+ N more)" when more' }),
});

/** The first line's words, and how many more lines there are. */
function descriptionOf(i: Invoice): string {
  const [first, ...rest] = i.lines;
  if (!first) return '';
  return rest.length === 0 ? first.description : `${first.description} (+ ${rest.length} more)`;
}

const PartySchema = Type.Object({
  legal_name: Type.String(),
  address: Nullable(Type.String()),
  state_code: Nullable(Type.String()),
  state_name: Nullable(Type.String()),
  gstin: Nullable(Type.String()),
  email: Nullable(Type.String()),
});

const LineSchema = Type.Object({
  description: Type.String(),
  sac: Type.String({ description: '998315' }),
  quantity: Type.Integer(),
  taxable_value: Type.String(),
  cgst: Type.String(),
  sgst: Type.String(),
  igst: Type.String(),
  total: Type.String(),
});

export const InvoiceSchema = Type.Object({
  ...InvoiceSummarySchema.properties,
  original_invoice_id: Type.Union([Type.Integer(), Type.Null()]),
  original_issued_at: Nullable(Type.String({ format: 'date-time', description: "a credit note: the invoice's date" })),
  place_of_supply_name: Type.String(),
  buyer: PartySchema,
  seller: PartySchema,
  lines: Type.Array(LineSchema),
  amount_in_words: Type.String({ description: 'the total in Indian numbering: "Rupees … Only"' }),
});

function taxOf(i: Invoice) {
  return {
    cgst: formatPaise(i.cgst_paise),
    sgst: formatPaise(i.sgst_paise),
    igst: formatPaise(i.igst_paise),
    rate: percent(i.rate_bps),
  };
}

export function invoiceSummaryView(i: Invoice) {
  return {
    id: i.id,
    number: i.number,
    kind: i.kind,
    original_number: i.original_number,
    reason: i.reason,
    order_id: i.order_id,
    issued_at: isoWithOffset(i.issued_at),
    financial_year: i.fy,
    place_of_supply: i.place_of_supply,
    b2b: i.b2b,
    taxable_value: formatPaise(i.taxable_paise),
    tax: taxOf(i),
    total: formatPaise(i.total_paise),
    currency: 'INR' as const,
    description: descriptionOf(i),
  };
}

const partyView = (p: Invoice['buyer']) => ({
  legal_name: p.legal_name,
  address: p.address,
  state_code: p.state_code,
  state_name: p.state_name,
  gstin: p.gstin,
  email: p.email ?? null,
});

export function invoiceView(i: Invoice) {
  return {
    ...invoiceSummaryView(i),
    original_invoice_id: i.original_invoice_id,
    original_issued_at: i.original_issued_at ? isoWithOffset(i.original_issued_at) : null,
    place_of_supply_name: stateName(i.place_of_supply) ?? i.place_of_supply,
    buyer: partyView(i.buyer),
    seller: partyView(i.seller),
    lines: i.lines.map((l) => ({
      description: l.description,
      sac: l.sac,
      quantity: l.quantity,
      taxable_value: formatPaise(l.taxable_paise),
      cgst: formatPaise(l.cgst_paise),
      sgst: formatPaise(l.sgst_paise),
      igst: formatPaise(l.igst_paise),
      total: formatPaise(l.total_paise),
    })),
    amount_in_words: amountInWords(BigInt(i.total_paise)),
  };
}

/** What GET /api/v1/invoices adds to an order: its invoice's fields, null when it has none. */
export const OrderInvoiceFields = {
  invoice_id: Type.Union([Type.Integer({ description: "the tax invoice's own id (not the order's)" }), Type.Null()]),
  number: Nullable(Type.String({ description: 'the tax invoice number; null: no invoice (not paid)' })),
  issued_at: Nullable(Type.String({ format: 'date-time' })),
  taxable_value: Nullable(Type.String()),
  tax: Type.Union([TaxSchema, Type.Null()]),
  total: Nullable(Type.String({ description: 'the invoice total, GST included' })),
  description: Nullable(Type.String({ description: "the invoice line: what was supplied, and the order's id" })),
  pdf_url: Nullable(
    Type.String({
      description:
        'the tax invoice as a PDF (PUBLIC_URL/api/v1/invoices/{id}/pdf): GET it with the same token (billing.read); ' +
        'null when the order has no invoice',
    }),
  ),
};

/** Where the token surface serves an invoice's PDF: PUBLIC_URL/api/v1/invoices/{id}/pdf. */
export function invoicePdfUrl(publicUrl: string, invoiceId: number): string {
  return `${publicUrl}/api/v1/invoices/${invoiceId}/pdf`;
}

export function orderInvoiceView(i: Invoice | undefined, publicUrl: string) {
  return {
    invoice_id: i?.id ?? null,
    number: i?.number ?? null,
    issued_at: i ? isoWithOffset(i.issued_at) : null,
    taxable_value: i ? formatPaise(i.taxable_paise) : null,
    tax: i ? taxOf(i) : null,
    total: i ? formatPaise(i.total_paise) : null,
    description: i ? i.lines.map((l) => l.description).join('; ') : null,
    pdf_url: i ? invoicePdfUrl(publicUrl, i.id) : null,
  };
}

const OrderCreditNoteSchema = Type.Object({
  number: Type.String({ description: 'PREFIXC/FY/serial' }),
  kind: Type.Literal('credit_note'),
  original_number: Type.String({ description: "the invoice it credits (this order's)" }),
  reason: Type.String(),
  issued_at: Type.String({ format: 'date-time' }),
  taxable_value: Type.String(),
  tax: TaxSchema,
  total: Type.String({ description: 'the amount credited, GST included' }),
});

/** What GET /api/v1/invoices adds to an order besides its invoice: the credit notes against it. */
export const OrderCreditNoteFields = {
  credit_notes: Type.Array(OrderCreditNoteSchema, {
    description: "credit notes against the order's invoice (a refund), oldest first; empty when none",
  }),
};

export function orderCreditNotesView(notes: Invoice[] | undefined) {
  return {
    credit_notes: (notes ?? []).map((n) => ({
      number: n.number,
      kind: 'credit_note' as const,
      original_number: n.original_number ?? '',
      reason: n.reason ?? '',
      issued_at: isoWithOffset(n.issued_at),
      taxable_value: formatPaise(n.taxable_paise),
      tax: taxOf(n),
      total: formatPaise(n.total_paise),
    })),
  };
}
