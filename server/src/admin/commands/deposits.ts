// deposits list [--status] | show ID | approve ID | reject ID --reason (CONTRACT §1); refund ID
// --reason [--amount] (an online deposit back through the gateway, §12); reconcile FILE (§12)
// lives in ./reconcile.ts.

import { byOperator } from '../../core/audit/audit.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { DepositStatus } from '../../db/tables.ts';
import { type Command, clean, idArg, keyValues, requiredOption, table, UsageError } from '../command.ts';
import { reconcileCommand } from './reconcile.ts';

function view(d: {
  id: number;
  public_id: string;
  email?: string;
  amount_paise: string;
  txn_ref: string | null;
  status: string;
  reason: string | null;
  reviewed_by: string | null;
  created_at: Date;
  reviewed_at: Date | null;
  refund_gateway_id?: string | null;
  refund_amount_paise?: string | null;
  refund_reason?: string | null;
  refunded_by?: string | null;
  refunded_at?: Date | null;
}) {
  return {
    id: d.id,
    public_id: d.public_id,
    account: d.email,
    amount: formatPaise(d.amount_paise),
    txn_ref: d.txn_ref,
    status: d.status,
    reason: d.reason,
    reviewed_by: d.reviewed_by,
    created_at: isoWithOffset(d.created_at),
    reviewed_at: d.reviewed_at ? isoWithOffset(d.reviewed_at) : null,
    refund: d.refund_gateway_id
      ? {
          id: d.refund_gateway_id,
          amount: formatPaise(d.refund_amount_paise ?? 0),
          reason: d.refund_reason ?? null,
          by: d.refunded_by ?? null,
          at: d.refunded_at ? isoWithOffset(d.refunded_at) : null,
        }
      : null,
  };
}

export const depositCommands: Command[] = [
  {
    noun: 'deposits',
    verb: 'list',
    summary: 'Deposits, newest first',
    options: {
      status: { type: 'string', description: 'pending, approved or rejected' },
      limit: { type: 'string', description: 'rows (default 50)' },
    },
    async run(deps, { options }) {
      const status = options.status as string | undefined;
      if (status !== undefined && !['pending', 'approved', 'rejected'].includes(status))
        throw new UsageError('--status is pending, approved or rejected');
      const limit = Number(options.limit ?? 50);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit is 1–1000');
      const rows = (await deps.deposits.list({ limit, ...(status ? { status: status as DepositStatus } : {}) })).map(
        view,
      );
      return {
        json: rows,
        text: table(rows, ['id', 'public_id', 'account', 'amount', 'txn_ref', 'status', 'created_at']),
      };
    },
  },
  {
    noun: 'deposits',
    verb: 'show',
    summary: 'One deposit, with where its screenshot is stored',
    args: ['ID'],
    async run(deps, { args }) {
      const deposit = await deps.deposits.get(idArg(args[0]));
      const json = {
        ...view(deposit),
        screenshot: {
          type: deposit.screenshot_type,
          bytes: deposit.screenshot_bytes,
          path: deps.deposits.screenshotPath(deposit),
        },
      };
      const text = keyValues({
        ...view(deposit),
        screenshot:
          json.screenshot.path === null
            ? `none (${deposit.method})`
            : `${json.screenshot.path} (${deposit.screenshot_type}, ${deposit.screenshot_bytes} bytes)`,
      });
      return { json, text };
    },
  },
  {
    noun: 'deposits',
    verb: 'approve',
    summary: 'Approve a pending deposit: credits the wallet once, notifies the client',
    args: ['ID'],
    async run(deps, { args, actor }) {
      const { deposit, transaction } = await deps.deposits.approve(idArg(args[0]), actor, byOperator());
      // After the credit, unpaid orders may have been paid from it (the billing cycle): the balance now.
      const balance = await deps.wallet.balance(deposit.account_id);
      return {
        json: {
          ...view(deposit),
          transaction: transaction?.public_id,
          balance: formatPaise(balance),
        },
        text: `approved ${deposit.public_id}: ₹${formatPaise(deposit.amount_paise)} credited (${transaction?.public_id}); balance ₹${formatPaise(balance)}`,
      };
    },
  },
  {
    noun: 'deposits',
    verb: 'reject',
    summary: 'Reject a pending deposit with a reason the client sees',
    args: ['ID'],
    options: { reason: { type: 'string', required: true, description: 'why (shown to the client)' } },
    async run(deps, { args, options, actor }) {
      const { deposit } = await deps.deposits.reject(
        idArg(args[0]),
        actor,
        requiredOption(options, 'reason'),
        byOperator(),
      );
      return { json: view(deposit), text: `rejected ${deposit.public_id}: ${clean(deposit.reason)}` };
    },
  },
  {
    noun: 'deposits',
    verb: 'refund',
    summary: 'Refund an approved online (razorpay) deposit to its payer through the gateway; debits the wallet',
    args: ['ID'],
    options: {
      reason: { type: 'string', required: true, description: 'why (shown to the client, kept on the deposit)' },
      amount: { type: 'string', description: 'rupees (default: the whole deposit); at most the wallet balance' },
    },
    details:
      'One refund per deposit. Refused when the wallet holds less than the amount (a balance is never negative),\n' +
      'for a manual (UPI/bank) deposit, and for a deposit refunded already. The gateway refund and the\n' +
      '`withdrawal` ledger row happen together: if Razorpay refuses or fails, the wallet is unchanged.\n' +
      'A deposit is an advance, not a taxed supply: its refund has no credit note (docs/INVOICES.md).',
    async run(deps, { args, options, actor }) {
      const out = await deps.razorpay.refund({
        depositId: idArg(args[0]),
        reason: requiredOption(options, 'reason'),
        actor,
        who: byOperator(),
        ...(options.amount === undefined ? {} : { amount: options.amount }),
      });
      const amount = formatPaise(out.deposit.refund_amount_paise ?? 0);
      return {
        json: {
          ...view(out.deposit),
          transaction: out.transaction.public_id,
          gateway_refund: { id: out.refund.id, status: out.refund.status, amount },
          balance: formatPaise(out.balance),
        },
        text: `refunded ₹${amount} of ${out.deposit.public_id} through Razorpay (${clean(out.refund.id)}, ${clean(out.refund.status)}); wallet debited (${out.transaction.public_id}), balance ₹${formatPaise(out.balance)}`,
      };
    },
  },
  reconcileCommand,
];
