// invoices export --month YYYY-MM [--format json|gstr1-csv] [--out FILE] (the month's documents as
// GSTR-1 lays them out, with the ledger reconciliation: core/billing/gstr1.ts) and invoices credit
// N --reason [--amount] (a credit note and its refund into the wallet: core/billing/credit-notes.ts).
// CONTRACT §12; docs/INVOICES.md.

import { resolve } from 'node:path';
import { byOperator } from '../../core/audit/audit.ts';
import { gstr1Export } from '../../core/billing/gstr1.ts';
import { gstr1Csv } from '../../core/billing/gstr1-csv.ts';
import { isDiskFull, writeFailure, writeFileWhole } from '../../core/disk.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Invoice } from '../../db/tables.ts';
import { type Command, CommandError, clean, requiredOption, UsageError } from '../command.ts';

const FORMATS = ['json', 'gstr1-csv'] as const;

function creditNoteView(n: Invoice) {
  return {
    id: n.id,
    number: n.number,
    kind: n.kind,
    original_number: n.original_number,
    reason: n.reason,
    issued_at: isoWithOffset(n.issued_at),
    taxable_value: formatPaise(n.taxable_paise),
    tax: { cgst: formatPaise(n.cgst_paise), sgst: formatPaise(n.sgst_paise), igst: formatPaise(n.igst_paise) },
    total: formatPaise(n.total_paise),
  };
}

const exportCommand: Command = {
  noun: 'invoices',
  verb: 'export',
  summary: "A month's invoices and credit notes in GSTR-1 sections, with totals and the ledger reconciliation",
  options: {
    month: { type: 'string', required: true, description: 'YYYY-MM, read in India Standard Time' },
    format: { type: 'string', description: 'json (default) or gstr1-csv' },
    out: { type: 'string', description: 'write the document to FILE instead of standard output' },
  },
  details:
    'Sections: b2b, b2cl (inter-state B2C above ₹1,00,000), b2cs (by place of supply and rate, net of their\n' +
    'credit notes), cdnr, cdnur, hsn, totals, reconciliation (reconciles: true when the documents equal the\n' +
    "ledger's charges less the refunds of credit notes). docs/INVOICES.md describes the fields and the CSV.\n" +
    '--out is written by the process that runs the command (with a running embedded server, the server):\n' +
    'a relative path is taken from the directory `npm run` was started in.',
  async run(deps, { options }) {
    const month = requiredOption(options, 'month');
    const format = (options.format ?? 'json') as string;
    if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError('--format is json or gstr1-csv');
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month is YYYY-MM, e.g. 2026-06');
    const doc = await gstr1Export(deps.database.db, deps.config.invoicing, month);
    const text = format === 'json' ? `${JSON.stringify(doc, null, 2)}` : gstr1Csv(doc);
    if (typeof options.out !== 'string') return { json: doc, text };
    const path = resolve(process.env.INIT_CWD ?? process.cwd(), options.out);
    // Whole or not at all: a full disk (or any failed write) leaves no half document at PATH.
    await writeFileWhole(path, `${text}\n`).catch((error: unknown) => {
      throw new CommandError(isDiskFull(error) ? 'insufficient_storage' : 'write_failed', writeFailure(path, error));
    });
    const { reconciles } = doc.reconciliation;
    return {
      json: { month, format, out: path, bytes: Buffer.byteLength(text) + 1, reconciles },
      text: `wrote ${format} of ${month} to ${clean(path)} (${doc.totals.invoices.count} invoices, ${doc.totals.credit_notes.count} credit notes; reconciles: ${reconciles})`,
    };
  },
};

const creditCommand: Command = {
  noun: 'invoices',
  verb: 'credit',
  summary: 'Credit an invoice: a credit note (PREFIXC series) and the money back in the wallet, in one transaction',
  args: ['N'],
  options: {
    reason: { type: 'string', required: true, description: 'why (printed on the credit note, seen by the client)' },
    amount: { type: 'string', description: 'rupees with GST (default: all that is left un-credited on the invoice)' },
  },
  details:
    'N is the invoice number (HP/2627/000042) or its id. The credit notes of an invoice never add up to more\n' +
    'than it; the tax is split in proportion (docs/INVOICES.md). The service, if any, is not touched.',
  async run(deps, { args, options, actor }) {
    const out = await deps.creditNotes.credit({
      invoice: args[0] as string,
      reason: requiredOption(options, 'reason'),
      actor,
      who: byOperator(),
      ...(options.amount === undefined ? {} : { amount: options.amount }),
    });
    const note = creditNoteView(out.creditNote);
    return {
      json: { credit_note: note, transaction: out.refund.public_id, balance: formatPaise(out.balance) },
      text:
        `credit note ${note.number} against ${out.invoice.number}: ₹${note.total} (taxable ₹${note.taxable_value}, ` +
        `CGST ₹${note.tax.cgst}, SGST ₹${note.tax.sgst}, IGST ₹${note.tax.igst}); refunded to the wallet ` +
        `(${out.refund.public_id}), balance ₹${formatPaise(out.balance)}`,
    };
  },
};

export const invoiceExportCommands: Command[] = [exportCommand, creditCommand];
