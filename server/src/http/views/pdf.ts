// An invoice's PDF as both surfaces answer it (CONTRACT §12): application/pdf, an attachment
// named after the invoice number (HP-2627-000001.pdf), never cached by a shared cache, and a
// sandbox CSP in case a browser shows it inline anyway.

import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { InvoicePdf } from '../../core/billing/invoice-documents.ts';
import { sendAsIs } from '../surfaces.ts';

export const PdfFile = Type.String({ format: 'binary', description: 'the PDF document (A4)' });

/** Set the headers of a PDF download and return its bytes for the handler to answer. */
export function invoicePdfReply(reply: FastifyReply, file: InvoicePdf): never {
  reply
    .type('application/pdf')
    .header('Content-Disposition', `attachment; filename="${file.fileName}"`)
    .header('Cache-Control', 'private, no-store')
    .header('Content-Security-Policy', "default-src 'none'; sandbox");
  return sendAsIs(reply, file.bytes);
}
