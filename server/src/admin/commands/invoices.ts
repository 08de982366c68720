// invoices show N | pdf N [--out FILE] (CONTRACT §12): one issued invoice or credit note, named by
// its number (HP/2627/000001) or numeric id — everything it says, lines and tax heads included,
// or its PDF, written where the CLI runs (default file name from the number, HP-2627-000001.pdf).

import { amountInWords } from '../../core/billing/gst.ts';
import {
  documentTitle,
  type InvoiceDocument,
  intraState,
  invoiceFileName,
  istDate,
  percentOf,
  rupees,
  stateLabel,
} from '../../core/billing/invoice-format.ts';
import type { Deps } from '../../core/deps.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Invoice, InvoiceParty } from '../../db/tables.ts';
import { type Command, clean, keyValues, table, UsageError } from '../command.ts';

function invoiceRef(raw: string | undefined): string {
  if (raw === undefined || !/^[A-Za-z0-9/-]{1,16}$/.test(raw.trim())) {
    throw new UsageError('N is an invoice number such as HP/2627/000001, or its numeric id');
  }
  return raw.trim();
}

const party = (p: InvoiceParty) => ({
  legal_name: p.legal_name,
  address: p.address,
  gstin: p.gstin,
  state: p.state_code === null ? null : stateLabel(p.state_code),
  email: p.email ?? null,
});

/** Everything an invoice says, as `invoices show --json` prints it (amounts in rupees, two decimals). */
async function view(deps: Deps, document: InvoiceDocument) {
  const { invoice, original } = document;
  const account = await deps.accounts.get(invoice.account_id);
  const half = percentOf(invoice.rate_bps / 2);
  const tax = intraState(invoice)
    ? [
        { head: 'CGST', rate: half, amount: formatPaise(invoice.cgst_paise) },
        { head: 'SGST', rate: half, amount: formatPaise(invoice.sgst_paise) },
      ]
    : [{ head: 'IGST', rate: percentOf(invoice.rate_bps), amount: formatPaise(invoice.igst_paise) }];
  return {
    id: invoice.id,
    number: invoice.number,
    kind: invoice.kind,
    title: documentTitle(invoice),
    against: original ? { number: original.number, date: istDate(original.issued_at) } : null,
    account: { id: invoice.account_id, email: account.email },
    order_id: invoice.order_id,
    issued_at: isoWithOffset(invoice.issued_at),
    date_ist: istDate(invoice.issued_at),
    financial_year: invoice.fy,
    place_of_supply: stateLabel(invoice.place_of_supply),
    supply: intraState(invoice) ? 'intra-state' : 'inter-state',
    b2b: invoice.b2b,
    seller: party(invoice.seller),
    buyer: party(invoice.buyer),
    lines: invoice.lines.map((l, i) => ({
      n: i + 1,
      description: l.description,
      sac: l.sac,
      quantity: l.quantity,
      taxable_value: formatPaise(l.taxable_paise),
      total: formatPaise(l.total_paise),
    })),
    tax,
    taxable_value: formatPaise(invoice.taxable_paise),
    total: formatPaise(invoice.total_paise),
    currency: 'INR',
    amount_in_words: amountInWords(BigInt(invoice.total_paise)),
    pdf: invoiceFileName(invoice.number),
  };
}

type View = Awaited<ReturnType<typeof view>>;

function partyText(p: View['buyer']): string {
  return [p.legal_name, p.address, p.gstin ? `GSTIN ${p.gstin}` : null, p.state, p.email]
    .filter((part) => part !== null && part !== '')
    .join(', ');
}

function text(v: View, invoice: Invoice): string {
  const head = keyValues(
    {
      number: v.number,
      title: v.title,
      ...(v.against ? { against: `invoice ${v.against.number} dated ${v.against.date}` } : {}),
      id: v.id,
      account: `${v.account.id} ${v.account.email}`,
      order: v.order_id,
      issued_at: `${v.issued_at} (${v.date_ist} IST)`,
      fy: v.financial_year,
      supply: `${v.supply}, place of supply ${v.place_of_supply}`,
      b2b: v.b2b ? 'yes' : 'no',
      seller: partyText(v.seller),
      buyer: partyText(v.buyer),
    },
    13,
  );
  const lines = table(
    v.lines.map((l) => ({ ...l, description: clean(l.description) })),
    ['n', 'description', 'sac', 'quantity', 'taxable_value'],
  );
  const tax = table(v.tax, ['head', 'rate', 'amount']);
  const totals = keyValues(
    { taxable_value: rupees(invoice.taxable_paise), total: rupees(invoice.total_paise), in_words: v.amount_in_words },
    13,
  );
  return `${head}\n\nLines\n${lines}\n\nTax\n${tax}\n\n${totals}`;
}

export const invoiceCommands: Command[] = [
  {
    noun: 'invoices',
    verb: 'show',
    summary: 'One tax invoice or credit note, by number or id: parties, lines, tax heads, total',
    args: ['N'],
    details: 'N is the invoice number (HP/2627/000001) or its numeric id.',
    async run(deps, { args }) {
      const document = await deps.invoiceDocuments.find(invoiceRef(args[0]));
      const json = await view(deps, document);
      return { json, text: text(json, document.invoice) };
    },
  },
  {
    noun: 'invoices',
    verb: 'pdf',
    summary: 'Write the PDF of a tax invoice or credit note (default file: its number, HP-2627-000001.pdf)',
    args: ['N'],
    options: { out: { type: 'string', description: 'the file to write (default: HP-2627-000001.pdf, here)' } },
    details:
      'N is the invoice number (HP/2627/000001) or its numeric id. The file is written where the CLI runs ' +
      '(mode 0600: an invoice names a customer), replacing one of the same name.',
    async run(deps, { args, options }) {
      if (options.out !== undefined && (typeof options.out !== 'string' || options.out.trim() === '')) {
        throw new UsageError('--out needs a file name');
      }
      const document = await deps.invoiceDocuments.find(invoiceRef(args[0]));
      const pdf = await deps.invoiceDocuments.pdf(document);
      const out = typeof options.out === 'string' ? options.out : pdf.fileName;
      const { invoice } = document;
      return {
        json: { number: invoice.number, kind: invoice.kind, file: out, bytes: pdf.bytes.length },
        text: `wrote ${clean(out)} (${pdf.bytes.length} bytes): ${documentTitle(invoice)} ${invoice.number}, ${rupees(invoice.total_paise)}`,
        files: [{ path: out, data: pdf.bytes }],
      };
    },
  },
];
