// GET /billing, /invoices and /invoices/{id}/pdf (billing.read), GET /status (read).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { formatPaise } from '../../core/money.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { tokenErrors } from '../schemas.ts';
import { BillingSchema, billingView } from '../views/billing.view.ts';
import {
  OrderCreditNoteFields,
  OrderInvoiceFields,
  orderCreditNotesView,
  orderInvoiceView,
} from '../views/invoice.view.ts';
import { OrderSchema, orderView } from '../views/order.view.ts';
import { invoicePdfReply, PdfFile } from '../views/pdf.ts';
import { IdParams, okSchema } from './envelopes.ts';

const Money = Type.Object({ amount: Type.String(), currency: Type.Literal('INR') });
/** An order of GET /invoices: its fields as everywhere, and its tax invoice's (null until paid). */
const OrderWithInvoice = Type.Object({ ...OrderSchema.properties, ...OrderInvoiceFields, ...OrderCreditNoteFields });

export async function billingRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/billing',
    {
      config: { scope: 'billing.read' },
      schema: {
        operationId: 'getBilling',
        tags: ['token: billing'],
        summary: 'Wallet balance, monthly run-rate of active services, unpaid orders',
        response: {
          200: okSchema({
            wallet: Type.Object({ balance: Type.String(), currency: Type.Literal('INR') }),
            monthly_run_rate: Money,
            unpaid_orders: Type.Array(OrderSchema),
            unpaid_total: Money,
            billing: BillingSchema,
          }),
          ...tokenErrors(),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const [balance, runRate, unpaid, summary] = await Promise.all([
        deps.wallet.balance(accountId),
        deps.orders.monthlyRunRate(accountId),
        deps.orders.unpaid(accountId),
        deps.billing.summary(accountId),
      ]);
      return {
        ok: true as const,
        wallet: { balance: formatPaise(balance), currency: 'INR' as const },
        monthly_run_rate: { amount: formatPaise(runRate), currency: 'INR' as const },
        unpaid_orders: unpaid.map(orderView),
        unpaid_total: { amount: formatPaise(summary.unpaidTotalPaise), currency: 'INR' as const },
        billing: billingView(summary),
      };
    },
  );

  app.get(
    '/invoices',
    {
      config: { scope: 'billing.read' },
      schema: {
        operationId: 'listInvoices',
        tags: ['token: billing'],
        summary: "Order history, the last 100, with each paid order's tax invoice",
        description:
          'Each order keeps its fields and adds its tax invoice: invoice_id, number, issued_at, taxable_value, tax ' +
          '{cgst, sgst, igst, rate}, total, description, pdf_url (GET /api/v1/invoices/{id}/pdf) — all null for an ' +
          'order with no invoice (unpaid, cancelled). credit_notes lists the credit notes against the invoice (a ' +
          'refund: number PREFIXC/FY/serial, kind credit_note, original_number, reason, amounts).',
        response: { 200: okSchema({ invoices: Type.Array(OrderWithInvoice) }), ...tokenErrors() },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { rows } = await deps.orders.list(accountId, 1, 100);
      const ids = rows.map((o) => o.id);
      const [invoices, notes] = await Promise.all([
        deps.invoices.ofOrders(accountId, ids),
        deps.creditNotes.ofOrders(accountId, ids),
      ]);
      return {
        ok: true as const,
        invoices: rows.map((o) => ({
          ...orderView(o),
          ...orderInvoiceView(invoices.get(o.id), deps.config.publicUrl),
          ...orderCreditNotesView(notes.get(o.id)),
        })),
      };
    },
  );

  app.get(
    '/invoices/:id/pdf',
    {
      config: { scope: 'billing.read' },
      schema: {
        operationId: 'getInvoicePdf',
        tags: ['token: billing'],
        summary: 'A tax invoice (or credit note) as a PDF',
        description:
          'The invoice id is the one in pdf_url of GET /api/v1/invoices. A4, with the seller and buyer, SAC, tax heads, ' +
          "total and amount in words; the same bytes every time. Another account's invoice is 404 not_owner, like a " +
          'missing one.',
        params: IdParams,
        response: {
          200: {
            description: 'The PDF, as an attachment named after the invoice number (HP-2627-000001.pdf)',
            content: { 'application/pdf': { schema: PdfFile } },
          },
          ...tokenErrors(404),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const document = await deps.invoiceDocuments.ofAccount(accountId, request.params.id);
      return invoicePdfReply(reply, await deps.invoiceDocuments.pdf(document));
    },
  );

  app.get(
    '/status',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getStatus',
        tags: ['token: status'],
        summary: 'Node fleet health per location and kind, and the states of your instances',
        response: {
          200: okSchema({
            fleet: Type.Array(
              Type.Object({
                location: Type.String(),
                kind: Type.String(),
                nodes: Type.Integer(),
                up: Type.Integer(),
                down: Type.Integer(),
                unknown: Type.Integer(),
                status: Type.String({ description: 'operational, degraded or down' }),
              }),
            ),
            instances: Type.Array(
              Type.Object({
                id: Type.Integer(),
                label: Type.String(),
                status: Type.String(),
                power: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
          ...tokenErrors(),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const [nodes, locations, list] = await Promise.all([
        deps.nodes.list(),
        deps.catalog.listLocations(),
        deps.services.list(accountId, 1, 100),
      ]);
      const groups = new Map<
        string,
        { location: string; kind: string; nodes: number; up: number; down: number; unknown: number }
      >();
      for (const node of nodes.filter((n) => n.active)) {
        const location = locations.find((l) => l.id === node.location_id)?.code ?? '?';
        const key = `${location}/${node.kind}`;
        const group = groups.get(key) ?? { location, kind: node.kind, nodes: 0, up: 0, down: 0, unknown: 0 };
        group.nodes++;
        group[node.health]++;
        groups.set(key, group);
      }
      const power = await deps.serviceActions.powerStates(list.rows.map((d) => d.service));
      return {
        ok: true as const,
        fleet: [...groups.values()].map((g) => ({
          ...g,
          status: g.down === 0 ? 'operational' : g.down === g.nodes ? 'down' : 'degraded',
        })),
        instances: list.rows.map((d) => ({
          id: d.service.id,
          label: d.service.label,
          status: d.service.status,
          power: power.get(d.service.id) ?? null,
        })),
      };
    },
  );
}
