// Tax invoicing (issue 35): what an account's invoices name it by. Invoices copy a profile when
// issued, so these rows may change freely without touching an issued invoice.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, Paise, Timestamp } from './columns.ts';

export interface BillingProfilesTable {
  /** One profile per account, keyed by it. */
  account_id: number;
  legal_name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  /** A GST state code, two digits ("27"): core/billing/gst.ts GST_STATES. */
  state_code: string;
  /** Six digits, not starting with 0. */
  pincode: string;
  /** Upper case, and its first two digits are state_code; null for an unregistered buyer (B2C). */
  gstin: string | null;
  updated_at: CreatedAt;
}

export type BillingProfile = Selectable<BillingProfilesTable>;

/** The next serial of one invoice series in one financial year (migration 0023). */
export interface InvoiceSeriesTable {
  /** INVOICE_PREFIX for invoices, INVOICE_PREFIX + 'C' for credit notes (their own series). */
  series: string;
  /** Financial year as its two two-digit years: '2627'. */
  fy: string;
  next_serial: ColumnType<number, number | undefined, number>;
}

/** The buyer as the invoice names them, frozen when issued. */
export interface InvoiceParty {
  legal_name: string;
  address: string | null;
  state_code: string | null;
  state_name: string | null;
  gstin: string | null;
  email?: string | null;
}

export interface InvoiceLine {
  description: string;
  sac: string;
  quantity: number;
  taxable_paise: string;
  cgst_paise: string;
  sgst_paise: string;
  igst_paise: string;
  total_paise: string;
}

/** An issued tax invoice or credit note: immutable (a trigger refuses UPDATE and DELETE). */
export interface InvoicesTable {
  id: Generated<number>;
  /** `HP/2627/000042`: at most 16 characters (rule 46). */
  number: string;
  kind: 'invoice' | 'credit_note';
  account_id: number;
  order_id: number | null;
  original_invoice_id: number | null;
  issued_at: Timestamp;
  fy: string;
  serial: number;
  taxable_paise: Paise;
  cgst_paise: Paise;
  sgst_paise: Paise;
  igst_paise: Paise;
  total_paise: Paise;
  rate_bps: number;
  /** The state code of the place of supply. */
  place_of_supply: string;
  b2b: boolean;
  buyer: ColumnType<InvoiceParty, string, never>;
  seller: ColumnType<InvoiceParty, string, never>;
  lines: ColumnType<InvoiceLine[], string, never>;
  /** A credit note's reason and the number and date of the invoice it credits (null on invoices). */
  reason: ColumnType<string | null, string | null | undefined, never>;
  original_number: ColumnType<string | null, string | null | undefined, never>;
  original_issued_at: ColumnType<Date | null, Date | null | undefined, never>;
  created_at: CreatedAt;
}

export type Invoice = Selectable<InvoicesTable>;
