// An issued invoice as a document (issue 35, CONTRACT §12): the invoice with what its PDF needs
// besides its own row (a credit note's original invoice), found for its owner (another account's
// is 404 not_owner, like a missing one) or for staff (by number or id), and rendered to PDF.
// Read-only: invoices are immutable once issued, so a PDF, once drawn, is the invoice's for good:
// the last PDF_CACHE_SIZE drawn are kept (drawing one costs tens of milliseconds of CPU; a client
// fetching its invoice again and again should not cost that each time).

import type { Kysely } from 'kysely';
import type { DB, Invoice } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { type InvoiceDocument, invoiceFileName } from './invoice-format.ts';
import { renderInvoicePdf } from './invoice-pdf.ts';

/** What a staff member may name an invoice by: its number (HP/2627/000001) or its numeric id. */
const NUMBER = /^[A-Za-z0-9/-]{1,16}$/;

/** How many rendered PDFs a process keeps (about 15 KB each). */
const PDF_CACHE_SIZE = 64;

export interface InvoicePdf {
  fileName: string;
  bytes: Buffer;
}

export function createInvoiceDocuments({ db }: { db: Kysely<DB> }) {
  /** Rendered PDFs by invoice id (and IRN), least recently used first. */
  const rendered = new Map<string, Promise<Buffer>>();

  function render(document: InvoiceDocument): Promise<Buffer> {
    const key = `${document.invoice.id}:${document.irn ?? ''}`;
    let bytes = rendered.get(key);
    if (bytes !== undefined) {
      rendered.delete(key);
    } else {
      bytes = renderInvoicePdf(document);
      bytes.catch(() => rendered.delete(key));
    }
    rendered.set(key, bytes);
    if (rendered.size > PDF_CACHE_SIZE) rendered.delete(rendered.keys().next().value as string);
    return bytes;
  }

  async function documentOf(invoice: Invoice): Promise<InvoiceDocument> {
    let original: InvoiceDocument['original'] = null;
    if (invoice.original_invoice_id !== null) {
      original =
        (await db
          .selectFrom('invoices')
          .select(['number', 'issued_at'])
          .where('id', '=', invoice.original_invoice_id)
          .executeTakeFirst()) ?? null;
    }
    // E-invoicing (an IRN from the government portal) is not built: no invoice has an IRN yet.
    return { invoice, original, irn: null };
  }

  return {
    /** One of the account's invoices as a document; another account's is 404 not_owner. */
    async ofAccount(accountId: number, invoiceId: number): Promise<InvoiceDocument> {
      const invoice = await db
        .selectFrom('invoices')
        .selectAll()
        .where('id', '=', invoiceId)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (!invoice) throw new AppError('not_owner');
      return documentOf(invoice);
    },

    /** Any invoice, for staff: by number (HP/2627/000001, any case) or numeric id; 404 not_found. */
    async find(ref: string): Promise<InvoiceDocument> {
      const trimmed = ref.trim();
      if (!NUMBER.test(trimmed)) {
        throw AppError.fields({ invoice: 'is an invoice number such as HP/2627/000001, or its numeric id' });
      }
      const byId = /^\d{1,9}$/.test(trimmed);
      const invoice = await db
        .selectFrom('invoices')
        .selectAll()
        // A number always has '/' in it (PREFIX/FY/serial), so digits alone are an id.
        .where((eb) => (byId ? eb('id', '=', Number(trimmed)) : eb('number', '=', trimmed.toUpperCase())))
        .executeTakeFirst();
      if (!invoice) throw new AppError('not_found', { message: `No invoice ${trimmed}.` });
      return documentOf(invoice);
    },

    /** The PDF of a document and the file name it is saved as (HP-2627-000001.pdf). */
    async pdf(document: InvoiceDocument): Promise<InvoicePdf> {
      return { fileName: invoiceFileName(document.invoice.number), bytes: await render(document) };
    },
  };
}

export type InvoiceDocuments = ReturnType<typeof createInvoiceDocuments>;
