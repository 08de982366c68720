// The staff console's operations pages (CONTRACT §14): the dashboard (support), the billing cycle
// on demand (billing: a dry run, or the run itself, as `npm run admin -- billing run [--dry-run]`)
// and a month's GSTR-1 export (billing: as `npm run admin -- invoices export`).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { recordAudit } from '../../core/audit/audit.ts';
import { gstr1Export } from '../../core/billing/gstr1.ts';
import { gstr1Csv } from '../../core/billing/gstr1-csv.ts';
import type { Deps } from '../../core/deps.ts';
import { formatPaise } from '../../core/money.ts';
import { dashboard } from '../../core/staff/dashboard.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { actorOf } from './context.ts';
import { jobView, NodeLoadSchema, nodeLoadView, StaffJobSchema } from './views.ts';

const Money = Type.Object(
  { amount: Type.String({ description: 'INR, two decimals' }), count: Type.Integer() },
  { additionalProperties: false },
);
const money = (paise: bigint, count: number) => ({ amount: formatPaise(paise), count });

const BillingActionSchema = Type.Object(
  {
    service: Type.Integer(),
    label: Type.String(),
    account: Type.Integer(),
    action: Type.String(),
    detail: Type.String(),
  },
  { additionalProperties: false },
);

export async function staffOpsRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/dashboard',
    {
      schema: {
        operationId: 'staffDashboard',
        tags: ['staff: operations'],
        summary: "Today's money in and out (IST day), failed jobs, nodes in trouble, deposits waiting",
        description:
          'money_in: manual deposits approved today and online (Razorpay) payments captured today; money_out: ' +
          'withdrawals (wallet money paid back outside the platform) and refunds into wallets, today. failed_jobs: ' +
          'how many failed today, and the latest five failed. nodes: down at their last check, or carrying more ' +
          'services than their capacity. deposits_waiting: pending deposits and the age of the oldest.',
        response: {
          200: okSchema({
            day: Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) }),
            money_in: Type.Object({ deposits: Money, online: Money, total: Type.String() }),
            money_out: Type.Object({ withdrawals: Money, refunds: Money, total: Type.String() }),
            failed_jobs: Type.Object({ today: Type.Integer(), latest: Type.Array(StaffJobSchema) }),
            nodes: Type.Array(NodeLoadSchema),
            deposits_waiting: Type.Object({
              count: Type.Integer(),
              oldest_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
              oldest_age_seconds: Type.Union([Type.Integer(), Type.Null()]),
            }),
          }),
        },
      },
    },
    async () => {
      const now = deps.clock();
      const d = await dashboard(deps.database.db, now);
      const oldest = d.depositsWaiting.oldest;
      return {
        success: true as const,
        message: 'Dashboard.',
        day: { from: isoWithOffset(d.day.start), to: isoWithOffset(d.day.end) },
        money_in: {
          deposits: money(d.moneyIn.depositsPaise, d.moneyIn.depositsCount),
          online: money(d.moneyIn.onlinePaise, d.moneyIn.onlineCount),
          total: formatPaise(d.moneyIn.depositsPaise + d.moneyIn.onlinePaise),
        },
        money_out: {
          withdrawals: money(d.moneyOut.withdrawalsPaise, d.moneyOut.withdrawalsCount),
          refunds: money(d.moneyOut.refundsPaise, d.moneyOut.refundsCount),
          total: formatPaise(d.moneyOut.withdrawalsPaise + d.moneyOut.refundsPaise),
        },
        failed_jobs: { today: d.failedJobs.today, latest: d.failedJobs.latest.map(jobView) },
        nodes: d.nodes.map(nodeLoadView),
        deposits_waiting: {
          count: d.depositsWaiting.count,
          oldest_at: oldest ? isoWithOffset(oldest) : null,
          oldest_age_seconds: oldest ? Math.max(0, Math.floor((now.getTime() - oldest.getTime()) / 1000)) : null,
        },
      };
    },
  );

  app.post(
    '/billing',
    {
      schema: {
        operationId: 'staffBillingRun',
        tags: ['staff: billing'],
        summary: 'The billing cycle now: preview (a dry run, nothing changes) or run',
        description:
          'The same cycle as the worker and `npm run admin -- billing run`: reminders, renewals, unpaid orders, ' +
          'overdue suspensions and terminations. `actions` is what it did (or would do), per service. A run is ' +
          'audited (billing.run) once it has finished; each service of it is its own transaction.',
        body: mutationBody({
          action: Type.Union([Type.Literal('preview'), Type.Literal('run')]),
          reason: Type.Optional(Type.String({ maxLength: 500 })),
        }),
        response: {
          200: okSchema({
            at: Type.String({ format: 'date-time' }),
            dry_run: Type.Boolean(),
            actions: Type.Array(BillingActionSchema),
          }),
          ...sessionErrors(422),
        },
      },
    },
    async (request) => {
      const dryRun = request.body.action === 'preview';
      const at = deps.clock();
      const actions = await deps.billing.run({ at, dryRun });
      if (!dryRun) {
        const counts: Record<string, number> = {};
        for (const a of actions) counts[a.action] = (counts[a.action] ?? 0) + 1;
        await deps.database.db.transaction().execute((trx) =>
          recordAudit(trx, {
            actor: actorOf(request),
            action: 'billing.run',
            targetType: 'billing',
            targetId: null,
            after: { actions: actions.length, ...counts },
            reason: request.body.reason?.trim() || null,
            at: deps.clock(),
          }),
        );
      }
      return {
        success: true as const,
        message: dryRun
          ? `Preview: ${counted(actions.length, 'action')}.`
          : `Ran: ${counted(actions.length, 'action')}.`,
        at: isoWithOffset(at),
        dry_run: dryRun,
        actions: actions.map((a) => ({
          service: a.service,
          label: a.label,
          account: a.account,
          action: a.action,
          detail: a.detail,
        })),
      };
    },
  );

  app.get(
    '/invoices/export',
    {
      schema: {
        operationId: 'staffInvoiceExport',
        tags: ['staff: billing'],
        summary: "A month's invoices and credit notes in GSTR-1 sections (CSV or JSON)",
        description:
          'The document `npm run admin -- invoices export --month` writes: b2b, b2cl, b2cs, cdnr, cdnur, hsn, ' +
          'totals and the ledger reconciliation (docs/INVOICES.md). GSTR-1 is filed by month, so the period is ' +
          'one month, in India Standard Time. format=csv (default) answers text/csv as an attachment.',
        querystring: Type.Object({
          month: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM' }),
          format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('json')], { default: 'csv' })),
        }),
        response: {
          200: {
            description: 'text/csv (format=csv) or the JSON document in the envelope (format=json)',
            content: {
              'text/csv': { schema: Type.String() },
              'application/json': { schema: okSchema({ export: Type.Unknown() }) },
            },
          },
          ...sessionErrors(422),
        },
      },
    },
    async (request, reply) => {
      const { month } = request.query;
      const doc = await gstr1Export(deps.database.db, deps.config.invoicing, month);
      if (request.query.format === 'json') return { success: true as const, message: 'GSTR-1 export.', export: doc };
      reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="gstr1-${month}.csv"`)
        .header('Cache-Control', 'private, no-store');
      return sendAsIs(reply, `${gstr1Csv(doc)}\n`);
    },
  );
}
