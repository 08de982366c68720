// The GSTR-1 export (./gstr1.ts) as one CSV text (`--format gstr1-csv`): each section in turn —
// a line `# <section>`, a header line, its rows, then an empty line — in the order period, b2b, b2cl,
// b2cs, cdnr, cdnur, hsn, totals, reconciliation. A section with no rows keeps its header. RFC 4180
// quoting (a field with a comma, quote or line break is quoted, quotes doubled); a text field that
// a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return) gets
// a leading apostrophe. Amounts are rupees with two decimals. docs/INVOICES.md lists the columns.

import type { Gstr1Export } from './gstr1.ts';

export const GSTR1_COLUMNS = {
  period: ['month', 'from', 'to', 'timezone', 'seller_gstin', 'seller_state_code', 'b2cl_threshold'],
  b2b: ['gstin', 'name', 'number', 'date', 'value', 'place_of_supply', 'rate', 'taxable', 'igst', 'cgst', 'sgst'],
  b2cl: ['number', 'date', 'value', 'place_of_supply', 'rate', 'taxable', 'igst'],
  b2cs: ['supply', 'place_of_supply', 'rate', 'taxable', 'igst', 'cgst', 'sgst'],
  cdnr: [
    'gstin',
    'name',
    'number',
    'date',
    'note_type',
    'original_number',
    'original_date',
    'place_of_supply',
    'value',
    'rate',
    'taxable',
    'igst',
    'cgst',
    'sgst',
  ],
  cdnur: [
    'ur_type',
    'number',
    'date',
    'note_type',
    'original_number',
    'original_date',
    'place_of_supply',
    'value',
    'rate',
    'taxable',
    'igst',
  ],
  hsn: ['supply', 'sac', 'description', 'uqc', 'quantity', 'rate', 'value', 'taxable', 'igst', 'cgst', 'sgst'],
  totals: ['document', 'count', 'value', 'taxable', 'igst', 'cgst', 'sgst'],
  reconciliation: [
    'invoices_total',
    'credit_notes_total',
    'documents_net',
    'ledger_charges',
    'ledger_credit_note_refunds',
    'ledger_net',
    'difference',
    'reconciles',
  ],
} as const;

const NUMBER = /^-?\d+(\.\d+)?$/;

function cell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !NUMBER.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function section(name: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): string[] {
  return [`# ${name}`, columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c])).join(',')), ''];
}

export function gstr1Csv(doc: Gstr1Export): string {
  const totals = (['invoices', 'credit_notes', 'net'] as const).map((document) => ({
    document,
    ...doc.totals[document],
  }));
  const period = {
    ...doc.period,
    month: doc.month,
    seller_gstin: doc.seller.gstin,
    seller_state_code: doc.seller.state_code,
    b2cl_threshold: doc.b2cl_threshold,
  };
  return [
    ...section('period', GSTR1_COLUMNS.period, [period]),
    ...section('b2b', GSTR1_COLUMNS.b2b, doc.b2b),
    ...section('b2cl', GSTR1_COLUMNS.b2cl, doc.b2cl),
    ...section('b2cs', GSTR1_COLUMNS.b2cs, doc.b2cs),
    ...section('cdnr', GSTR1_COLUMNS.cdnr, doc.cdnr),
    ...section('cdnur', GSTR1_COLUMNS.cdnur, doc.cdnur),
    ...section('hsn', GSTR1_COLUMNS.hsn, doc.hsn),
    ...section('totals', GSTR1_COLUMNS.totals, totals),
    ...section('reconciliation', GSTR1_COLUMNS.reconciliation, [doc.reconciliation]),
  ].join('\n');
}
