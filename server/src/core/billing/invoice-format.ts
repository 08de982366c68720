// How an issued invoice is written out, for its PDF (invoice-pdf.ts) and the staff CLI: dates in
// India Standard Time, rates as percentages, states as "name (code)", the title by kind, the file
// name from the number, and which tax heads apply.

import type { Invoice } from '../../db/tables.ts';
import { formatPaiseIndian } from '../money.ts';
import { stateName } from './gst.ts';

export interface InvoiceDocument {
  invoice: Invoice;
  /** A credit note's original invoice: its number and date. Null for an invoice. */
  original: { number: string; issued_at: Date } | null;
  /** The e-invoice registration number from the government portal, when there is one. */
  irn: string | null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;

/** The date an invoice is dated, in India Standard Time: "15 Jun 2026". */
export function istDate(at: Date): string {
  const ist = new Date(at.getTime() + IST_OFFSET_MS);
  return `${String(ist.getUTCDate()).padStart(2, '0')} ${MONTHS[ist.getUTCMonth()]} ${ist.getUTCFullYear()}`;
}

/** A rate in basis points as a percentage: 900 → "9%", 250 → "2.5%". */
export function percentOf(bps: number): string {
  return `${Number((bps / 100).toFixed(2))}%`;
}

/** "Maharashtra (27)"; the bare code for one not on the list. */
export function stateLabel(code: string): string {
  const name = stateName(code);
  return name === null ? code : `${name} (${code})`;
}

/** "Tax invoice" or "Credit note". */
export function documentTitle(invoice: Invoice): string {
  return invoice.kind === 'credit_note' ? 'Credit note' : 'Tax invoice';
}

/** The file a PDF is saved as: the number with '/' as '-', `HP-2627-000001.pdf`. */
export function invoiceFileName(number: string): string {
  return `${number.replace(/[^A-Za-z0-9-]/g, '-')}.pdf`;
}

/** Whether the tax is CGST + SGST (supplied in the seller's own state) rather than IGST. */
export function intraState(invoice: Invoice): boolean {
  return invoice.seller.state_code === invoice.place_of_supply;
}

/** An amount as printed: `₹1,23,456.78` (Indian grouping). */
export function rupees(paise: bigint | string | number): string {
  return `₹${formatPaiseIndian(paise)}`;
}
