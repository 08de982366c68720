// CONTRACT §12: GET /api/v1/client/invoices/ — the account's tax invoices, newest first, paged
// like the other lists; ?id= one in full (buyer, seller, lines, amount in words); ?id=&format=pdf
// its PDF, as an attachment. Invoices are
// issued by the charging code (core/billing/invoices.ts); nothing here writes. Another account's
// invoice is 404 not_owner, the same answer as one that does not exist.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { sessionErrors } from '../schemas.ts';
import { InvoiceSchema, InvoiceSummarySchema, invoiceSummaryView, invoiceView } from '../views/invoice.view.ts';
import { invoicePdfReply, PdfFile } from '../views/pdf.ts';
import { PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { okSchema } from './envelopes.ts';

export async function invoiceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/invoices/',
    {
      schema: {
        operationId: 'listClientInvoices',
        tags: ['billing'],
        summary: 'Your tax invoices, newest first; ?id= one in full; ?id=&format=pdf its PDF',
        description:
          'An invoice is issued when an order is paid from the wallet (a new order, or a renewal), in the same ' +
          'transaction, numbered PREFIX/FY/serial with no gap. A refund is a credit note (kind credit_note, ' +
          'numbered PREFIXC/FY/serial in its own series, with original_number and reason); the list shows both ' +
          'kinds. Amounts are rupees with two decimals. ' +
          'format=pdf (with id) answers the invoice as an A4 PDF attachment named after its number ' +
          '(HP-2627-000001.pdf); format=json, the default, answers JSON.',
        querystring: Type.Object(
          {
            ...PAGE_QUERY,
            id: Type.Optional(Type.Integer({ minimum: 1 })),
            format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('pdf')])),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description: 'Your invoices, or one (?id=); with format=pdf its PDF, as an attachment',
            content: {
              'application/json': {
                schema: Type.Union([
                  okSchema({ invoices: Type.Array(InvoiceSummarySchema), pagination: PaginationSchema }),
                  okSchema({ invoice: InvoiceSchema }),
                ]),
              },
              'application/pdf': { schema: PdfFile },
            },
          },
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const q = request.query;
      if (q.format === 'pdf') {
        if (q.id === undefined) throw AppError.fields({ id: 'is required with format=pdf' });
        const document = await deps.invoiceDocuments.ofAccount(session.account.id, q.id);
        return invoicePdfReply(reply, await deps.invoiceDocuments.pdf(document));
      }
      if (q.id !== undefined) {
        const invoice = await deps.invoices.get(session.account.id, q.id);
        return { success: true as const, message: `Invoice ${invoice.number} loaded.`, invoice: invoiceView(invoice) };
      }
      const { page, perPage } = pageOf(q);
      const list = await deps.invoices.list(session.account.id, page, perPage);
      return {
        success: true as const,
        message: 'Invoices loaded.',
        invoices: list.rows.map(invoiceSummaryView),
        pagination: pagination(page, perPage, list.total),
      };
    },
  );
}
