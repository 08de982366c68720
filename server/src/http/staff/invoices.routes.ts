// /api/v1/staff/invoices (CONTRACT §14; billing): every account's tax invoices and credit notes —
// searched by number, e-mail or id, one in full with the credit notes against it, its PDF — and a
// credit note issued from the console: the same core as `npm run admin -- invoices credit`
// (core/billing/credit-notes.ts): the note, the money back in the wallet (a `refund` row), the
// customer's notification and activity, and the audit row (invoice.credit), in one transaction.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { creditNotesOf, type StaffInvoice, searchInvoices, staffInvoice } from '../../core/billing/invoice-search.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import type { Invoice } from '../../db/tables.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { InvoiceSchema, InvoiceSummarySchema, invoiceSummaryView, invoiceView } from '../views/invoice.view.ts';
import { invoicePdfReply, PdfFile } from '../views/pdf.ts';
import { actorOf, whoOfStaff, withFieldNames } from './context.ts';
import { Reason } from './views.ts';

const tags = ['staff: billing'];

const Owner = Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false });
const Credits = {
  account: Owner,
  credited: Type.String({ description: 'INR credited against it by credit notes so far (0.00 for a credit note)' }),
  creditable: Type.String({ description: 'INR that may still be credited (0.00 for a credit note)' }),
};

const StaffInvoiceSchema = Type.Object({ ...InvoiceSummarySchema.properties, ...Credits });

function credits(i: StaffInvoice) {
  const left = i.kind === 'invoice' ? BigInt(i.total_paise) - BigInt(i.credited_paise) : 0n;
  return {
    account: { id: i.account_id, email: i.email },
    credited: formatPaise(i.credited_paise),
    creditable: formatPaise(left),
  };
}

const staffInvoiceView = (i: StaffInvoice) => ({ ...invoiceSummaryView(i), ...credits(i) });

export async function staffInvoiceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const db = deps.database.db;

  app.get(
    '/invoices',
    {
      schema: {
        operationId: 'staffInvoices',
        tags,
        summary: "Every account's tax invoices and credit notes, newest first; q searches number, e-mail or id",
        querystring: Type.Object({
          q: Type.Optional(
            Type.String({ maxLength: 200, description: "part of the number or of the customer's e-mail; or the id" }),
          ),
          kind: Type.Optional(Type.Union([Type.Literal('invoice'), Type.Literal('credit_note')])),
          account_id: Type.Optional(Type.Integer({ minimum: 1 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          before: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,9}$', description: 'next_before of the page before' }),
          ),
        }),
        response: {
          200: okSchema({
            invoices: Type.Array(StaffInvoiceSchema),
            next_before: Type.Union([Type.String(), Type.Null()]),
          }),
          ...sessionErrors(422),
        },
      },
    },
    async (request) => {
      const { q, kind, account_id, before } = request.query;
      const limit = request.query.limit ?? 50;
      const rows = await searchInvoices(db, {
        limit: limit + 1,
        ...(q?.trim() ? { search: q.trim() } : {}),
        ...(kind ? { kind } : {}),
        ...(account_id ? { accountId: account_id } : {}),
        ...(before ? { before: Number(before) } : {}),
      });
      const page = rows.slice(0, limit);
      return {
        success: true as const,
        message: 'Invoices.',
        invoices: page.map(staffInvoiceView),
        next_before: rows.length > limit ? String(page.at(-1)?.id) : null,
      };
    },
  );

  app.get(
    '/invoices/:id',
    {
      schema: {
        operationId: 'staffInvoice',
        tags,
        summary: 'One tax invoice or credit note in full, with the credit notes against it',
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        response: {
          200: okSchema({
            invoice: Type.Object({ ...InvoiceSchema.properties, ...Credits }),
            credit_notes: Type.Array(InvoiceSummarySchema, { description: 'against this invoice, oldest first' }),
            pdf_url: Type.String({ description: 'GET it for the PDF (/api/v1/staff/invoices/{id}/pdf)' }),
          }),
          ...sessionErrors(404, 422),
        },
      },
    },
    async (request) => {
      const invoice = await staffInvoice(db, request.params.id);
      const notes = invoice.kind === 'invoice' ? await creditNotesOf(db, invoice.id) : [];
      return {
        success: true as const,
        message: `${invoice.kind === 'invoice' ? 'Invoice' : 'Credit note'} ${invoice.number}.`,
        invoice: { ...invoiceView(invoice), ...credits(invoice) },
        credit_notes: notes.map((n: Invoice) => invoiceSummaryView(n)),
        pdf_url: `/api/v1/staff/invoices/${invoice.id}/pdf`,
      };
    },
  );

  app.get(
    '/invoices/:id/pdf',
    {
      schema: {
        operationId: 'staffInvoicePdf',
        tags,
        summary: 'A tax invoice or credit note as a PDF (the one its customer downloads)',
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        response: {
          200: {
            description: 'The PDF, as an attachment named after the number (HP-2627-000001.pdf)',
            content: { 'application/pdf': { schema: PdfFile } },
          },
          ...sessionErrors(404, 422),
        },
      },
    },
    async (request, reply) => {
      const document = await deps.invoiceDocuments.find(String(request.params.id));
      return invoicePdfReply(reply, await deps.invoiceDocuments.pdf(document));
    },
  );

  app.post(
    '/invoices',
    {
      schema: {
        operationId: 'staffInvoiceAction',
        tags,
        summary: 'Credit an invoice: a credit note and the money back in the wallet, in one transaction',
        description:
          'As `npm run admin -- invoices credit`: amount_paise with GST (all that is left un-credited when absent), ' +
          'a reason printed on the credit note (the customer reads it). The credit notes of an invoice never add ' +
          'up to more than it (422 amount_paise); a credit note itself or a fully credited invoice is 409. ' +
          'The service, if any, is not touched. Audited invoice.credit.',
        body: mutationBody({
          action: Type.Literal('credit'),
          id: Type.Integer({ minimum: 1, description: 'the invoice' }),
          amount_paise: Type.Optional(Type.Integer({ minimum: 1 })),
          reason: Reason,
        }),
        response: {
          200: okSchema({
            credit_note: InvoiceSummarySchema,
            invoice: StaffInvoiceSchema,
            transaction: Type.String({ description: 'the refund ledger row' }),
            balance: Type.String({ description: "the wallet's balance after" }),
          }),
          ...sessionErrors(404, 409, 422),
        },
      },
    },
    async (request) => {
      const { id, amount_paise } = request.body;
      const reason = request.body.reason?.trim() ?? '';
      if (reason.length < 3) throw AppError.fields({ reason: 'say why (at least 3 characters; printed on the note)' });
      const out = await withFieldNames({ amount: 'amount_paise' }, () =>
        deps.creditNotes.credit({
          invoice: String(id),
          reason,
          actor: `staff:${actorOf(request).staffId}`,
          who: whoOfStaff(request),
          ...(amount_paise === undefined ? {} : { amount: formatPaise(BigInt(amount_paise)) }),
        }),
      );
      return {
        success: true as const,
        message: `Credit note ${out.creditNote.number}: ₹${formatPaise(out.creditNote.total_paise)} back in the wallet.`,
        credit_note: invoiceSummaryView(out.creditNote),
        invoice: staffInvoiceView(await staffInvoice(db, id)),
        transaction: out.refund.public_id,
        balance: formatPaise(out.balance),
      };
    },
  );
}
