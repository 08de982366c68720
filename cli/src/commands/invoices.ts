// orders, and the tax invoices of paid ones (CONTRACT §12): invoices [list], invoices show REF,
// invoices pdf REF [--out FILE]. All read GET /api/v1/invoices (the last 100 orders, each with its
// invoice's fields) and the PDF comes from GET /api/v1/invoices/{id}/pdf (scope billing.read). An
// invoice is named by its id (the ID column, `invoice_id`), its number (HP/2627/000042) or its
// order (order_…).

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Invoice } from '@hostplane/sdk';
import type { Argv } from 'yargs';
import { CliError, UsageError } from '../errors.ts';
import { writeWhole } from '../files.ts';
import { fields, json, msg, note, rupees, state, table, write } from '../output.ts';
import { type GlobalArgs, session } from '../session.ts';

/** An invoice's date of issue as it is printed on it: the day in India Standard Time. */
const IST_DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Kolkata' });
const issuedOn = (iso: string | null) => (iso === null ? null : IST_DAY.format(new Date(iso)));

/** "71.91" → 7191n (the API's amounts are strings with two decimals). */
function paise(amount: string): bigint {
  const [whole = '0', fraction = ''] = amount.split('.');
  const sign = whole.startsWith('-') ? -1n : 1n;
  return sign * (BigInt(whole.replace('-', '')) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2)));
}

function amount(value: bigint): string {
  const abs = value < 0n ? -value : value;
  return `${value < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** The GST of an invoice, all heads together. */
function taxOf(i: Invoice): string {
  if (!i.tax) return '-';
  return rupees(amount(paise(i.tax.cgst) + paise(i.tax.sgst) + paise(i.tax.igst)));
}

/** The heads as the invoice names them: CGST + SGST within the seller's state, else IGST. */
function headsOf(i: Invoice): string {
  if (!i.tax) return '-';
  const { cgst, sgst, igst, rate } = i.tax;
  const heads =
    paise(igst) > 0n || (paise(cgst) === 0n && paise(sgst) === 0n)
      ? `IGST ${rupees(igst)}`
      : `CGST ${rupees(cgst)} + SGST ${rupees(sgst)}`;
  return `${heads} (${rate} %)`;
}

type Invoiced = Invoice & { invoice_id: number; number: string };
const invoiced = (i: Invoice): i is Invoiced => i.invoice_id !== null && i.number !== null;

/** The order `ref` names: by invoice id (digits), invoice number or order id; undefined when none of the list. */
function find(rows: Invoice[], ref: string): Invoice | undefined {
  const r = ref.trim();
  if (/^\d+$/.test(r)) return rows.find((i) => i.invoice_id === Number(r));
  return rows.find((i) => (i.number !== null && i.number.toUpperCase() === r.toUpperCase()) || i.public_id === r);
}

/** Its invoice, or why there is none. */
function invoiceOf(row: Invoice | undefined, ref: string): Invoiced {
  if (!row) throw new CliError(msg`no invoice ${ref} among your last 100 orders (hostplane invoices lists them)`.text);
  if (!invoiced(row)) {
    throw new CliError(
      msg`order ${row.public_id} has no invoice: it is ${row.status} (an invoice comes with payment)`.text,
    );
  }
  return row;
}

/** The file a PDF goes to unless told: its number with the slashes as dashes, HP-2627-000042.pdf. */
const defaultFile = (number: string) => `${number.replace(/[^A-Za-z0-9-]/g, '-')}.pdf`;

export function invoiceCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y
    .command(
      'orders',
      'Your orders (the last 100), paid or not',
      (c) => c,
      async (argv) => {
        const { client } = session(argv);
        const orders = await client.listInvoices();
        if (argv.output === 'json') return json(orders);
        write(
          table(
            ['ORDER', 'KIND', 'STATUS', 'AMOUNT', 'INSTANCE', 'CREATED', 'PAID', 'INVOICE'],
            orders.map((o) => [
              o.public_id,
              o.kind,
              state(o.status),
              rupees(o.amount),
              o.service_id,
              o.created_at,
              o.paid_at,
              o.number,
            ]),
          ),
        );
      },
    )
    .command(['invoices', 'invoice'], 'Tax invoices of your paid orders: list, show, pdf', (c) =>
      c
        .command(
          ['list', '$0'],
          'Your tax invoices (of the last 100 orders), newest first',
          (cc) => cc,
          async (argv) => {
            const { client } = session(argv);
            const list = (await client.listInvoices()).filter(invoiced);
            if (argv.output === 'json') return json(list);
            if (list.length === 0) return note('No invoices yet: an order gets its tax invoice when it is paid.');
            write(
              table(
                ['ID', 'NUMBER', 'ISSUED', 'DESCRIPTION', 'TAXABLE', 'TAX', 'TOTAL'],
                list.map((i) => [
                  i.invoice_id,
                  i.number,
                  issuedOn(i.issued_at),
                  i.description,
                  i.taxable_value === null ? null : rupees(i.taxable_value),
                  taxOf(i),
                  i.total === null ? null : rupees(i.total),
                ]),
              ),
            );
          },
        )
        .command(
          'show <invoice>',
          'One tax invoice: its amounts, tax heads and order',
          (cc) =>
            cc.positional('invoice', {
              type: 'string',
              demandOption: true,
              describe: 'its id (the ID column), number (HP/2627/000042) or order (order_…)',
            }),
          async (argv) => {
            const { client } = session(argv);
            const i = invoiceOf(find(await client.listInvoices(), argv.invoice), argv.invoice);
            if (argv.output === 'json') return json(i);
            write(
              fields([
                ['number', i.number],
                ['id', i.invoice_id],
                ['issued', `${issuedOn(i.issued_at)} (${i.issued_at})`],
                ['order', `${i.public_id} (${i.kind}, ${i.status})`],
                ['description', i.description],
                ['taxable value', i.taxable_value === null ? null : rupees(i.taxable_value)],
                ['tax', headsOf(i)],
                ['total', i.total === null ? null : rupees(i.total)],
                ['pdf', `hostplane invoices pdf ${i.invoice_id}`],
              ]),
            );
          },
        )
        .command(
          'pdf <invoice>',
          'Save a tax invoice as PDF (default: HP-2627-000042.pdf here)',
          (cc) =>
            cc
              .positional('invoice', {
                type: 'string',
                demandOption: true,
                describe: 'its id (the ID column), number or order',
              })
              .option('out', { type: 'string', nargs: 1, describe: 'the file to write; - for standard output' })
              .option('force', { type: 'boolean', default: false, describe: 'overwrite the file if it exists' }),
          async (argv) => {
            const { client } = session(argv);
            const ref = argv.invoice.trim();
            const row = find(await client.listInvoices(), ref);
            // Older than the last 100 orders, by id: the server is asked directly.
            const known = row === undefined && /^\d+$/.test(ref) ? null : invoiceOf(row, ref);
            const number = known?.number ?? `invoice-${ref}`;
            const out = argv.out ?? defaultFile(number);
            if (out !== '-' && !argv.force && existsSync(out)) {
              throw new UsageError(
                msg`${out} exists: nothing was written (--force overwrites it, --out names another file)`.text,
              );
            }
            let pdf: Awaited<ReturnType<typeof client.invoicePdf>>;
            try {
              pdf = await client.invoicePdf(known ? (known.invoice_id ?? known.pdf_url) : Number(ref));
            } catch (error) {
              // The SDK refuses a pdf_url outside the server it talks to: the token is not sent there.
              if (error instanceof TypeError) throw new CliError(msg`the server's pdf_url: ${error.message}`.text);
              throw error;
            }
            if (out === '-') {
              process.stdout.write(pdf.bytes);
              return;
            }
            writeWhole(out, pdf.bytes, argv.force);
            const saved = {
              invoice_id: known?.invoice_id ?? Number(ref),
              number: known?.number ?? null,
              file: resolve(out),
              bytes: pdf.bytes.length,
            };
            if (argv.output === 'json') return json(saved);
            write(msg`Saved ${known?.number ?? `invoice ${ref}`} to ${out} (${pdf.bytes.length} bytes).`);
          },
        ),
    );
}
