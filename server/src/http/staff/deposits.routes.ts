// /api/v1/staff/deposits (CONTRACT §14): the deposits queue — the pattern for domain routes.
// GET (support and above) lists deposits, pending by default; POST {action: approve|reject, id,
// reason} (billing and above) decides one through the same core service as the staff CLI
// (`deposits approve|reject`), so the customer's wallet, notification, mail and activity log
// change at once, and the decision is audited in its transaction (whoOfStaff). POST {action:
// refund, id, amount_paise?, reason} gives an approved online deposit back to its payer through
// Razorpay (`deposits refund`, core/deposits/refund.ts), the wallet debited in the same transaction.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Deposit } from '../../db/tables.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { actorOf, whoOfStaff, withFieldNames } from './context.ts';

const tags = ['staff: deposits'];
const Time = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const StaffDepositSchema = Type.Object(
  {
    id: Type.Integer(),
    public_id: Type.String(),
    account: Type.Object({ id: Type.Integer(), email: Type.String() }, { additionalProperties: false }),
    amount: Type.String({ description: 'INR, two decimals' }),
    currency: Type.Literal('INR'),
    method: Type.String({ description: 'manual (UPI/bank, reviewed by staff) or razorpay' }),
    txn_ref: Nullable(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]),
    reason: Nullable(Type.String()),
    reviewed_by: Nullable(Type.String()),
    created_at: Time,
    reviewed_at: Nullable(Time),
    refund: Type.Union([
      Type.Object(
        {
          id: Type.String({ description: "the gateway's refund id" }),
          amount: Type.String({ description: 'INR, two decimals' }),
          reason: Nullable(Type.String()),
          by: Nullable(Type.String()),
          at: Nullable(Time),
        },
        { additionalProperties: false, description: 'an online deposit refunded to its payer (at most once)' },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

function view(d: Deposit & { email: string }) {
  return {
    id: d.id,
    public_id: d.public_id,
    account: { id: d.account_id, email: d.email },
    amount: formatPaise(d.amount_paise),
    currency: 'INR' as const,
    method: d.method,
    txn_ref: d.txn_ref,
    status: d.status,
    reason: d.reason,
    reviewed_by: d.reviewed_by,
    created_at: isoWithOffset(d.created_at),
    reviewed_at: d.reviewed_at ? isoWithOffset(d.reviewed_at) : null,
    refund:
      d.refund_gateway_id === null
        ? null
        : {
            id: d.refund_gateway_id,
            amount: formatPaise(d.refund_amount_paise ?? 0),
            reason: d.refund_reason,
            by: d.refunded_by,
            at: d.refunded_at ? isoWithOffset(d.refunded_at) : null,
          },
  };
}

export async function staffDepositRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/deposits',
    {
      schema: {
        operationId: 'staffDeposits',
        tags,
        summary: 'Deposits, newest first or (sort=oldest) oldest first; pending by default',
        querystring: Type.Object({
          status: Type.Optional(
            Type.Union(
              [Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('all')],
              {
                default: 'pending',
              },
            ),
          ),
          method: Type.Optional(
            Type.Union([Type.Literal('manual'), Type.Literal('razorpay')], {
              description: 'manual (UPI/bank, reviewed by staff) or razorpay (online); both when absent',
            }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          sort: Type.Optional(
            Type.Union([Type.Literal('newest'), Type.Literal('oldest')], {
              default: 'newest',
              description: 'oldest: the one waiting longest first (the work queue)',
            }),
          ),
        }),
        response: { 200: okSchema({ deposits: Type.Array(StaffDepositSchema) }), ...sessionErrors(422) },
      },
    },
    async (request) => {
      const status = request.query.status ?? 'pending';
      const rows = await deps.deposits.list({
        limit: request.query.limit ?? 50,
        oldestFirst: request.query.sort === 'oldest',
        ...(request.query.method ? { method: request.query.method } : {}),
        ...(status === 'all' ? {} : { status }),
      });
      return { success: true as const, message: 'Deposits.', deposits: rows.map(view) };
    },
  );

  app.post(
    '/deposits',
    {
      schema: {
        operationId: 'staffDecideDeposit',
        tags,
        summary:
          'Approve (credits the wallet once) or reject (with a reason the customer sees) a pending deposit; ' +
          'refund an approved online one to its payer',
        description:
          'approve, reject: a pending deposit; 404 for an unknown id, 409 when it is no longer pending. refund ' +
          '(billing): an approved online (Razorpay) deposit back to the card, UPI or bank account it came from, ' +
          'through the gateway, with a `withdrawal` ledger row in the same transaction: amount_paise (at least ' +
          '100; the whole deposit when absent) and a reason (the customer reads it). Once per deposit; 409 for a ' +
          'manual deposit, one refunded already, or a gateway refusal; 422 insufficient_funds when the wallet ' +
          'holds less (a balance is never negative); 422 not_supported without a Razorpay account; 503 when the ' +
          'gateway does not answer (nothing changed; run it again). Audited deposit.approve, deposit.reject, ' +
          'deposit.refund.',
        body: mutationBody({
          action: Type.Union([Type.Literal('approve'), Type.Literal('reject'), Type.Literal('refund')]),
          id: Type.Integer({ minimum: 1 }),
          reason: Type.Optional(
            Type.String({ maxLength: 500, description: 'reject, refund: required, shown to the customer' }),
          ),
          amount_paise: Type.Optional(
            Type.Integer({ minimum: 1, description: 'refund: paise (default: the whole deposit)' }),
          ),
        }),
        response: { 200: okSchema({ deposit: StaffDepositSchema }), ...sessionErrors(404, 409, 422, 503) },
      },
    },
    async (request) => {
      const { action, id, reason, amount_paise } = request.body;
      const actor = actorOf(request);
      const reviewer = `staff:${actor.staffId}`;
      if (action !== 'approve' && (reason === undefined || reason.trim() === '')) {
        throw AppError.fields({ reason: `is required to ${action} (the customer reads it)` });
      }
      if (action === 'approve') await deps.deposits.approve(id, reviewer, whoOfStaff(request));
      else if (action === 'reject') await deps.deposits.reject(id, reviewer, reason as string, whoOfStaff(request));
      else if (!deps.razorpay.configured)
        throw new AppError('not_supported', {
          message: 'Razorpay is not configured on this server (RAZORPAY_*): nothing can be refunded through it.',
        });
      else
        await withFieldNames({ amount: 'amount_paise' }, () =>
          deps.razorpay.refund({
            depositId: id,
            reason: reason as string,
            actor: reviewer,
            who: whoOfStaff(request),
            ...(amount_paise === undefined ? {} : { amount: formatPaise(BigInt(amount_paise)) }),
          }),
        );
      return {
        success: true as const,
        message: {
          approve: 'Approved; the wallet is credited.',
          reject: 'Rejected; the customer is told why.',
          refund: 'Refunded to the payer through Razorpay; the wallet is debited.',
        }[action],
        deposit: view(await deps.deposits.get(id)),
      };
    },
  );
}
