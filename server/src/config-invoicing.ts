// The seller's side of tax invoices (issue 35, CONTRACT §12): who issues them, from which state,
// whether catalog prices include GST, and the invoice series prefix. Kept apart from config.ts
// (which calls readInvoicing and lists INVOICING_VARIABLES with the others) so that file stays
// readable; the rules for a GSTIN and a state code are core/billing/gst.ts's, the same ones the
// billing profile uses.

import { isStateCode, stateName, validateGstin } from './core/billing/gst.ts';

export interface InvoicingConfig {
  /** The seller's GSTIN, or null before registration (invoices then carry no seller GSTIN). */
  sellerGstin: string | null;
  sellerLegalName: string;
  sellerAddress: string;
  /** GST state code of the seller's place of business: decides intra-state (CGST + SGST) or IGST. */
  sellerStateCode: string;
  /**
   * Catalog prices include GST (the tax is carved out of them) rather than being added on top
   * (false: the price is the taxable value and the wallet is charged it plus GST, core/billing/charge.ts).
   */
  pricesIncludeGst: boolean;
  /** The invoice series: numbers are `<prefix>/<fy>/<serial>`, credit notes `<prefix>C/<fy>/<serial>`. */
  invoicePrefix: string;
}

export const INVOICING_VARIABLES = [
  {
    name: 'SELLER_GSTIN',
    description: "the seller's GSTIN printed on tax invoices (checked: shape, check character, SELLER_STATE_CODE)",
    default: 'unset (no GSTIN on invoices)',
  },
  { name: 'SELLER_LEGAL_NAME', description: "the seller's legal name on tax invoices", default: 'Hostplane' },
  { name: 'SELLER_ADDRESS', description: "the seller's address on tax invoices", default: 'Mumbai, Maharashtra' },
  {
    name: 'SELLER_STATE_CODE',
    description: "GST state code of the seller (two digits): the same state as the buyer's is CGST + SGST, else IGST",
    default: '27 (Maharashtra)',
  },
  {
    name: 'PRICES_INCLUDE_GST',
    description:
      'catalog prices include 18 % GST (true: the tax is carved out of the price); false: the price is the taxable value and the wallet is charged the price plus 18 % GST',
    default: 'true',
  },
  {
    name: 'INVOICE_PREFIX',
    description:
      'invoice number prefix: 1–3 of A-Z and 0-9; invoices are PREFIX/FY/000001 and credit notes PREFIXC/FY/000001 (at most 16 characters)',
    default: 'HP',
  },
] as const;

interface Reader {
  get(name: string): string | undefined;
  fail(name: string, value: string, why: string): void;
}

export function readInvoicing(r: Reader): InvoicingConfig {
  let sellerStateCode = r.get('SELLER_STATE_CODE') ?? '27';
  if (!isStateCode(sellerStateCode)) {
    r.fail('SELLER_STATE_CODE', sellerStateCode, 'must be a GST state code of two digits, such as 27 (Maharashtra)');
    sellerStateCode = '27';
  }
  const gstinRaw = r.get('SELLER_GSTIN');
  const sellerGstin = gstinRaw === undefined ? null : gstinRaw.toUpperCase();
  if (sellerGstin !== null) {
    const problem = validateGstin(sellerGstin, sellerStateCode);
    if (problem) r.fail('SELLER_GSTIN', gstinRaw as string, problem);
  }
  const includeRaw = r.get('PRICES_INCLUDE_GST') ?? 'true';
  const pricesIncludeGst = includeRaw === 'true' || includeRaw === '1';
  if (!['true', '1', 'false', '0'].includes(includeRaw))
    r.fail('PRICES_INCLUDE_GST', includeRaw, 'must be true or false (1 or 0)');
  const invoicePrefix = r.get('INVOICE_PREFIX') ?? 'HP';
  // Three at most: the credit notes' series adds a C, and PREFIXC/FY/000001 must fit 16 characters.
  if (!/^[A-Z0-9]{1,3}$/.test(invoicePrefix))
    r.fail(
      'INVOICE_PREFIX',
      invoicePrefix,
      'must be 1–3 capital letters or digits, so credit note numbers (PREFIXC/FY/000001) fit 16 characters',
    );
  return {
    sellerGstin,
    sellerLegalName: r.get('SELLER_LEGAL_NAME') ?? 'Hostplane',
    sellerAddress: r.get('SELLER_ADDRESS') ?? `Mumbai, ${stateName(sellerStateCode)}`,
    sellerStateCode,
    pricesIncludeGst,
    invoicePrefix,
  };
}

/** The defaults, as loadConfig gives them with nothing set (tests and tools building a Config by hand). */
export const DEFAULT_INVOICING: InvoicingConfig = readInvoicing({ get: () => undefined, fail: () => {} });
