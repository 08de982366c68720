// Spec 4.6: GET /api/v1/client/wallet/ (balance and ledger), POST /wallet/deposit/ (multipart:
// amount, txn_ref, screenshot; CSRF) and GET /wallet/deposit/ (own deposits; ?id= one;
// ?id=&action=screenshot the proof, as an attachment, to its owner only).

import { createReadStream } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { CONTENT_TYPES, type ReceivedUpload } from '../../core/deposits/uploads.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { CURRENCY, formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { LedgerKind, LedgerRow } from '../../db/tables.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { BillingSchema, billingView } from '../views/billing.view.ts';
import { DepositSchema, depositView } from '../views/deposit.view.ts';
import { limited, PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { okSchema } from './envelopes.ts';
import { RAZORPAY_ANSWERS, RAZORPAY_BODY, razorpayDeposit } from './razorpay-deposit.ts';

const LEDGER_KINDS: readonly LedgerKind[] = ['deposit', 'order', 'renewal', 'refund', 'adjustment', 'withdrawal'];

const Money = Type.String({ description: 'INR amount, two decimals; debits are negative' });

const TransactionSchema = Type.Object({
  id: Type.Integer(),
  public_id: Type.String({ description: 'pay_…' }),
  kind: Type.String({
    description: 'deposit, order, renewal, refund, adjustment or withdrawal (an online deposit refunded to its payer)',
  }),
  amount: Money,
  balance_after: Money,
  reference: Type.Union([Type.Object({ type: Type.String(), id: Type.Integer() }), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

const ProofFile = Type.String({ format: 'binary', description: 'the payment proof, as uploaded' });

function transactionView(t: LedgerRow) {
  return {
    id: t.id,
    public_id: t.public_id,
    kind: t.kind,
    amount: formatPaise(t.amount_paise),
    balance_after: formatPaise(t.balance_after_paise),
    reference:
      t.reference_type !== null && t.reference_id !== null ? { type: t.reference_type, id: t.reference_id } : null,
    note: t.note,
    created_at: isoWithOffset(t.created_at),
  };
}

export async function walletRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['wallet'];

  app.get(
    '/wallet/',
    {
      schema: {
        operationId: 'getWallet',
        tags,
        summary: 'Wallet balance and transaction history (newest first)',
        description:
          'Filters: `kind` (one or more of deposit, order, renewal, refund, adjustment, withdrawal, comma-separated), ' +
          '`from` and `to` (times with an offset; rows at or after `from` and before `to`). ' +
          '`pagination.total` counts the filtered rows.',
        querystring: Type.Object(
          {
            ...PAGE_QUERY,
            kind: Type.Optional(
              Type.String({
                pattern: `^(${LEDGER_KINDS.join('|')})(,(${LEDGER_KINDS.join('|')}))*$`,
                description: 'comma-separated ledger kinds',
              }),
            ),
            from: Type.Optional(Type.String({ format: 'date-time' })),
            to: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: okSchema({
            wallet: Type.Object({
              balance: Money,
              currency: Type.Literal('INR'),
              upi: Type.Union(
                [
                  Type.Object(
                    { vpa: Type.String(), payee_name: Type.String() },
                    { description: 'Where to pay a deposit by UPI (UPI_VPA, UPI_PAYEE_NAME)' },
                  ),
                  Type.Null(),
                ],
                { description: 'null when the operator has not configured a UPI ID' },
              ),
              online_payments: Type.Boolean({
                description: 'whether deposits can be paid online (POST wallet/deposit/ with method "razorpay")',
              }),
            }),
            billing: BillingSchema,
            transactions: Type.Array(TransactionSchema),
            pagination: PaginationSchema,
          }),
          ...sessionErrors(401, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const { page: pageNo, perPage } = pageOf(request.query);
      const { kind, from, to } = request.query;
      const filter = {
        ...(kind ? { kinds: [...new Set(kind.split(','))] as LedgerKind[] } : {}),
        ...(from ? { from: new Date(from) } : {}),
        ...(to ? { to: new Date(to) } : {}),
      };
      if (filter.from && filter.to && filter.from >= filter.to) {
        throw AppError.fields({ to: 'must be after from' });
      }
      const [balance, page] = await Promise.all([
        deps.wallet.balance(session.account.id),
        deps.wallet.history(session.account.id, pageNo, perPage, filter),
      ]);
      return {
        success: true as const,
        message: 'Wallet loaded.',
        wallet: {
          balance: formatPaise(balance),
          currency: CURRENCY as 'INR',
          upi: deps.config.upi === null ? null : { vpa: deps.config.upi.vpa, payee_name: deps.config.upi.payeeName },
          online_payments: deps.razorpay.configured,
        },
        billing: billingView(await deps.billing.summary(session.account.id)),
        transactions: page.rows.map(transactionView),
        pagination: pagination(pageNo, perPage, page.total),
      };
    },
  );

  app.post(
    '/wallet/deposit/',
    {
      config: { uploads: true },
      schema: {
        operationId: 'submitDeposit',
        tags,
        summary: 'Report a UPI/bank deposit (multipart/form-data), or pay one online through Razorpay (JSON)',
        description:
          'Fields: `amount` (rupees, > 0, at most 100000.00, two decimals at most), `txn_ref` (the UPI or bank ' +
          'reference, 4–64 characters, unique across all accounts regardless of case: reuse is 422), `screenshot` ' +
          '(PNG, JPEG, WebP or PDF by content, at most 5 MiB: 413 when larger, 415 for other content), `csrf_token` ' +
          '(before the screenshot, or the X-CSRF-Token header: a file is refused before it is read without it). ' +
          'Limited to 5 an hour and 20 a day per account; 429 while 2 uploads of the account are in flight, 507 ' +
          'insufficient_storage (Retry-After) when the server is short of disk space, or runs out of it while the ' +
          'screenshot is received (nothing is kept: no deposit, no file).\n\n' +
          'Online (JSON): `{method: "razorpay", amount}` creates a pending deposit and a Razorpay order (201 with ' +
          '`checkout`, what Razorpay Checkout opens with; 503 when online payments are not configured or Razorpay ' +
          'is down); `{action: "razorpay_verify", razorpay_order_id, razorpay_payment_id, razorpay_signature}` ' +
          'checks what Checkout handed back (400 bad_signature) and credits the wallet once the payment is ' +
          'captured (200; the webhook may have done it already).',
        consumes: ['multipart/form-data', 'application/json'],
        body: Type.Object(
          {
            amount: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Number()])),
            txn_ref: Type.Optional(Type.String({ maxLength: 128 })),
            screenshot: Type.Optional(
              Type.Unsafe<ReceivedUpload>({ description: 'the payment proof file', format: 'binary' }),
            ),
            csrf_token: Type.Optional(Type.String()),
            ...RAZORPAY_BODY,
          },
          { additionalProperties: false },
        ),
        response: {
          200: RAZORPAY_ANSWERS.verified,
          201: Type.Union([okSchema({ deposit: DepositSchema }), RAZORPAY_ANSWERS.started]),
          ...sessionErrors(400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 507),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      if (!request.isMultipart()) return razorpayDeposit(deps, reply, session, request.body ?? {}, whoOf(request));
      const key = `account:${session.account.id}`;
      const body: Partial<typeof request.body> = request.body ?? {};
      // A submission refused for its content does not use up the client's allowance.
      const deposit = await limited(
        deps,
        reply,
        [
          ['deposit_account', key],
          ['deposit_daily_account', key],
        ],
        () =>
          deps.deposits.submit(
            session.account.id,
            {
              amount: body.amount,
              txnRef: body.txn_ref,
              upload: request.receivedFiles?.screenshot ?? null,
            },
            whoOf(request),
          ),
      );
      return reply.code(201).send({
        success: true as const,
        message: `Deposit of ₹${formatPaise(deposit.amount_paise)} submitted for approval.`,
        deposit: depositView(deposit),
      });
    },
  );

  app.get(
    '/wallet/deposit/',
    {
      schema: {
        operationId: 'listDeposits',
        tags,
        summary: 'Your deposits with their status; ?id= one; ?id=&action=screenshot its proof file',
        querystring: Type.Object(
          {
            ...PAGE_QUERY,
            id: Type.Optional(Type.Integer({ minimum: 1 })),
            action: Type.Optional(Type.Literal('screenshot')),
          },
          { additionalProperties: false },
        ),
        response: {
          // JSON, or with action=screenshot the proof file as it was uploaded.
          200: {
            description: 'Your deposits, or one (?id=); with action=screenshot its proof file, as an attachment',
            content: {
              'application/json': {
                schema: Type.Union([
                  okSchema({ deposits: Type.Array(DepositSchema), pagination: PaginationSchema }),
                  okSchema({ deposit: DepositSchema }),
                ]),
              },
              ...Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type, { schema: ProofFile }])),
            },
          },
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const q = request.query;
      if (q.action !== undefined && q.id === undefined) {
        throw AppError.fields({ id: `is required with action=${q.action}` });
      }
      if (q.id !== undefined) {
        const deposit = await deps.deposits.getOwn(session.account.id, q.id);
        const file = deps.deposits.screenshotPath(deposit);
        if (q.action === 'screenshot') {
          if (file === null || deposit.screenshot_type === null) {
            throw new AppError('not_found', { message: 'This deposit was paid online and has no proof file.' });
          }
          const extension = deposit.screenshot_type === 'jpeg' ? 'jpg' : deposit.screenshot_type;
          reply
            .type(CONTENT_TYPES[deposit.screenshot_type])
            .header('Content-Disposition', `attachment; filename="deposit-${deposit.public_id}.${extension}"`)
            .header('Cache-Control', 'private, no-store')
            .header('Content-Security-Policy', "default-src 'none'; sandbox");
          return sendAsIs(reply, createReadStream(file));
        }
        return { success: true as const, message: 'Deposit loaded.', deposit: depositView(deposit) };
      }
      const { page, perPage } = pageOf(q);
      const list = await deps.deposits.listOwn(session.account.id, page, perPage);
      return {
        success: true as const,
        message: 'Deposits loaded.',
        deposits: list.rows.map(depositView),
        pagination: pagination(page, perPage, list.total),
      };
    },
  );
}
