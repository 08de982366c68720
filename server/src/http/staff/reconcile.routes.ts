// POST /api/v1/staff/deposits/reconcile (CONTRACT §12, §14; billing): a bank or UPI statement
// uploaded from the console, run by the same core as `npm run admin -- deposits reconcile FILE`
// (core/deposits/reconcile-run.ts): `preview` is its --dry-run (nothing changes, nothing audited),
// `apply` approves the pending deposits the statement shows paid — each approval audited as the
// member's (deposit.approve), the run once more with its counts (deposit.reconcile).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { runReconciliation } from '../../core/deposits/reconcile-run.ts';
import { LAYOUTS, layoutNamed } from '../../core/deposits/statement.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { counted } from '../../core/words.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { actorOf } from './context.ts';
import { Reason } from './views.ts';

/** The largest statement accepted, in characters (a month of a busy account is far below it). */
const MAX_STATEMENT = 2_000_000;

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const LineSchema = Type.Object(
  {
    line: Type.Integer({ description: 'where the record starts in the file (1-based)' }),
    date: Type.String({ description: 'YYYY-MM-DD' }),
    reference: Type.String(),
    amount: Type.String({ description: 'INR, two decimals' }),
    outcome: Type.Union([
      Type.Literal('approved'),
      Type.Literal('would_approve'),
      Type.Literal('already_approved'),
      Type.Literal('amount_mismatch'),
      Type.Literal('ambiguous'),
      Type.Literal('rejected_before'),
      Type.Literal('duplicate_line'),
      Type.Literal('unmatched'),
    ]),
    matched_by: Type.Union([Type.Literal('reference'), Type.Literal('narration'), Type.Null()]),
    deposit: Nullable(Type.String({ description: "the deposit's public id" })),
    detail: Type.String(),
  },
  { additionalProperties: false },
);

const SummarySchema = Type.Object(
  {
    approved: Type.Integer(),
    would_approve: Type.Integer({ description: 'preview: pending, the amount matches' }),
    already_approved: Type.Integer(),
    amount_mismatch: Type.Integer(),
    ambiguous: Type.Integer({ description: 'the narration names several deposits of this amount' }),
    rejected_before: Type.Integer(),
    duplicate_line: Type.Integer(),
    unmatched: Type.Integer({ description: 'no deposit has this reference' }),
    skipped: Type.Integer({ description: 'debit, zero, failed or blank lines' }),
    invalid: Type.Integer({ description: 'lines that could not be read' }),
  },
  { additionalProperties: false },
);

export async function staffReconcileRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/deposits/reconcile',
    {
      // The statement travels as a JSON string: its escapes may take more than its own size.
      bodyLimit: 3 * MAX_STATEMENT,
      schema: {
        operationId: 'staffReconcile',
        tags: ['staff: deposits'],
        summary: 'Match a bank or UPI statement (CSV) to pending manual deposits: preview, or apply',
        description:
          'The CSV export as text (docs/RECONCILIATION.md: the bank and upi layouts, detected from the header ' +
          'row unless `layout` says). A credit line approves the pending deposit whose reference it carries (or ' +
          'names in its narration) when the amount is exact. preview changes nothing; apply approves (each ' +
          'approval audited deposit.approve, the run deposit.reconcile). Importing a statement again approves ' +
          'nothing: its deposits are reported already_approved. 400 for a file that is not a statement.',
        body: mutationBody({
          action: Type.Union([Type.Literal('preview'), Type.Literal('apply')]),
          file_name: Type.String({ minLength: 1, maxLength: 200, description: "the uploaded file's name" }),
          statement: Type.String({ minLength: 1, maxLength: MAX_STATEMENT, description: 'the CSV, as text' }),
          layout: Type.Optional(Type.Union(LAYOUTS.map((l) => Type.Literal(l.name)))),
          reason: Reason,
        }),
        response: {
          200: okSchema({
            file: Type.String(),
            layout: Type.String(),
            dry_run: Type.Boolean(),
            reviewer: Type.String({ description: 'recorded on each approved deposit: file@content-id by staff:<id>' }),
            period: Type.Union([
              Type.Object({ from: Type.String(), to: Type.String() }, { additionalProperties: false }),
              Type.Null(),
            ]),
            summary: SummarySchema,
            lines: Type.Array(LineSchema),
            invalid_lines: Type.Array(
              Type.Object(
                { line: Type.Integer(), problem: Type.String(), raw: Type.String() },
                { additionalProperties: false },
              ),
            ),
            unmatched_deposits: Type.Array(
              Type.Object(
                {
                  id: Type.Integer(),
                  public_id: Type.String(),
                  txn_ref: Type.String(),
                  amount: Type.String(),
                  created_at: Type.String({ format: 'date-time' }),
                },
                { additionalProperties: false },
              ),
              { description: 'pending manual deposits reported on the statement’s days that no line names' },
            ),
          }),
          ...sessionErrors(400, 413, 422),
        },
      },
    },
    async (request) => {
      const { action, file_name, statement, layout } = request.body;
      if (statement.trim() === '') throw AppError.fields({ statement: 'is empty' });
      const actor = actorOf(request);
      const report = await runReconciliation(
        { db: deps.database.db, deposits: deps.deposits, clock: deps.clock },
        {
          fileName: file_name,
          text: statement,
          layout: layout === undefined ? undefined : layoutNamed(layout),
          dryRun: action === 'preview',
          actorName: `staff:${actor.staffId}`,
          audit: actor,
          reason: request.body.reason ?? null,
        },
      );
      const { summary } = report.json;
      return {
        success: true as const,
        message:
          action === 'preview'
            ? `Preview: ${counted(summary.would_approve, 'deposit')} would be approved.`
            : `${counted(summary.approved, 'deposit')} approved.`,
        ...report.json,
      };
    },
  );
}
