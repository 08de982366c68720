// Staff refund an online deposit back to its payer through Razorpay (issue 35, CONTRACT §12;
// `npm run admin -- deposits refund ID --reason TEXT [--amount RUPEES]`).
//
// One transaction, holding the account's wallet and the deposit locked throughout: the checks
// (an approved razorpay deposit with its payment, not refunded before, a balance that covers the
// amount: the wallet is never negative), the gateway's refund (`POST /v1/payments/{id}/refund`,
// our deposit's public id as its receipt), then the `withdrawal` ledger row and the refund recorded
// on the deposit. A gateway refusal or failure rolls everything back: the wallet is untouched.
// Holding the locks across the gateway call means nothing can spend the money between the check
// and the debit (a client's order waits the few seconds the call takes). If the gateway refunded
// but its answer was lost (or the commit failed), the next run finds the refund by its receipt and
// records it instead of refunding twice. One refund per deposit; a refunded one is refused.
//
// A deposit is an advance, not a taxed supply (tax is invoiced when the wallet is charged), so its
// refund has no credit note (docs/INVOICES.md).
//
// Razorpay's `refund.processed` webhook changes nothing here (`refundEvent`): it is logged, and a
// refund this platform did not make (from Razorpay's dashboard) is logged as a warning for staff.

import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { DB, Deposit, LedgerRow } from '../../db/tables.ts';
import { UpstreamError } from '../../upstreams/errors.ts';
import type { RazorpayClient, RazorpayRefund } from '../../upstreams/razorpay/index.ts';
import { byStaff, recordActivity, type Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { formatPaise, parsePaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { balanceOf, lockWallet, post } from '../wallet/ledger.ts';
import type { DepositServiceOptions } from './deposit.service.ts';

/** Razorpay refunds ₹1.00 or more. */
const MIN_REFUND_PAISE = 100n;

export interface DepositRefund {
  depositId: number;
  /** Rupees; the whole deposit when absent. */
  amount?: unknown;
  reason: string;
  actor: string;
  /** Who did it: the customer's activity log names them; a staff `who` (byOperator, byStaffMember) audits it. */
  who?: Who;
}

export interface DepositRefunded {
  deposit: Deposit;
  transaction: LedgerRow;
  refund: RazorpayRefund;
  balance: string;
}

type Options = DepositServiceOptions & { logger: Logger };
type Trx = Transaction<DB>;

function inputProblems(input: DepositRefund): { reason: string; amount: bigint | undefined } {
  const fields: Record<string, string> = {};
  const reason = input.reason.trim();
  if (reason.length < 3 || reason.length > 500) fields.reason = 'say why, in 3–500 characters';
  let amount: bigint | undefined;
  if (input.amount !== undefined) {
    const parsed = parsePaise(input.amount);
    if (!parsed.ok) fields.amount = parsed.reason;
    else if (parsed.paise < MIN_REFUND_PAISE) fields.amount = 'must be at least 1.00 (the gateway refunds no less)';
    else amount = parsed.paise;
  }
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  return { reason, amount };
}

/** The deposit, locked, if it can be refunded at all; the refusal otherwise. */
async function refundable(trx: Trx, id: number): Promise<Deposit & { gateway_payment_id: string }> {
  const deposit = await trx.selectFrom('deposits').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!deposit) throw new AppError('not_found', { message: `No deposit ${id}.` });
  if (deposit.refund_gateway_id !== null) {
    throw new AppError('conflict', {
      message: `Deposit ${deposit.public_id} was refunded already: ₹${formatPaise(deposit.refund_amount_paise ?? 0)} (${deposit.refund_gateway_id}).`,
    });
  }
  if (deposit.method !== 'razorpay') {
    throw new AppError('conflict', {
      message: `Deposit ${deposit.public_id} was paid by UPI or bank transfer, not online: only online deposits are refunded through the gateway.`,
    });
  }
  if (deposit.status !== 'approved' || deposit.gateway_payment_id === null) {
    throw new AppError('conflict', {
      message: `Deposit ${deposit.public_id} is ${deposit.status}: only an approved (paid) deposit is refunded.`,
    });
  }
  return deposit as Deposit & { gateway_payment_id: string };
}

/** Refuse what would take the wallet below zero, saying so. */
async function coveredBy(trx: Trx, deposit: Deposit, amount: bigint): Promise<void> {
  const balance = BigInt(await balanceOf(trx, deposit.account_id));
  if (balance >= amount) return;
  throw new AppError('insufficient_funds', {
    message:
      `The wallet holds ₹${formatPaise(balance)}, less than the ₹${formatPaise(amount)} to refund, and a balance ` +
      `is never negative: nothing was refunded. Refund at most ₹${formatPaise(balance)} (--amount), or nothing.`,
    details: {
      balance: formatPaise(balance),
      required: formatPaise(amount),
      shortfall: formatPaise(amount - balance),
      currency: 'INR',
    },
  });
}

function gatewayRefusal(error: unknown): AppError {
  if (error instanceof UpstreamError && error.kind === 'rejected') {
    return new AppError('conflict', {
      message: `Razorpay refused the refund: ${error.detail ?? error.message}. Nothing was refunded; the wallet is unchanged.`,
    });
  }
  return new AppError('service_unavailable', {
    message:
      'Razorpay could not be reached, or did not answer: the wallet is unchanged. Run the refund again: a refund ' +
      'the gateway made meanwhile is found by its receipt and recorded, never made twice.',
    retryAfter: 30,
  });
}

/** The gateway's refund of this deposit: one an earlier run made (found by receipt), else a new one. */
async function gatewayRefund(
  client: RazorpayClient,
  deposit: Deposit & { gateway_payment_id: string },
  amount: bigint,
  reason: string,
): Promise<RazorpayRefund> {
  try {
    const earlier = (await client.refundsOf(deposit.gateway_payment_id)).find((r) => r.receipt === deposit.public_id);
    if (earlier && earlier.status !== 'failed') return earlier;
    return await client.refund(deposit.gateway_payment_id, {
      amountPaise: Number(amount),
      receipt: deposit.public_id,
      notes: { deposit: deposit.public_id, reason: reason.slice(0, 250) },
    });
  } catch (error) {
    throw gatewayRefusal(error);
  }
}

export async function refundDeposit(
  options: Options,
  client: RazorpayClient,
  input: DepositRefund,
): Promise<DepositRefunded> {
  const { reason, amount: asked } = inputProblems(input);
  const found = await options.db
    .selectFrom('deposits')
    .select(['account_id'])
    .where('id', '=', input.depositId)
    .executeTakeFirst();
  if (!found) throw new AppError('not_found', { message: `No deposit ${input.depositId}.` });
  const done = await options.db.transaction().execute(async (trx) => {
    // Wallet, then the deposit: the order every money path takes (ledger.ts lockWallet).
    await lockWallet(trx, found.account_id);
    const deposit = await refundable(trx, input.depositId);
    const amount = asked ?? BigInt(deposit.amount_paise);
    if (amount > BigInt(deposit.amount_paise)) {
      throw AppError.fields({ amount: `must be at most ${formatPaise(deposit.amount_paise)}, the deposit` });
    }
    await coveredBy(trx, deposit, amount);
    const refund = await gatewayRefund(client, deposit, amount, reason);
    // An earlier run's refund may be of another amount: what the gateway paid out is what leaves.
    const paid = BigInt(refund.amount);
    if (paid !== amount) await coveredBy(trx, deposit, paid);
    const now = options.clock();
    const transaction = await post(trx, deposit.account_id, {
      kind: 'withdrawal',
      amountPaise: -paid,
      referenceType: 'deposit',
      referenceId: deposit.id,
      note: `Deposit ${deposit.public_id} refunded to its payer through Razorpay (${refund.id}): ${reason} (${input.actor})`,
    });
    const updated = await trx
      .updateTable('deposits')
      .set({
        refund_gateway_id: refund.id,
        refund_amount_paise: paid,
        refund_reason: reason,
        refunded_by: input.actor,
        refunded_at: now,
        refund_transaction_id: transaction.id,
      })
      .where('id', '=', deposit.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await notify(trx, deposit.account_id, {
      kind: 'deposit_refunded',
      title: `₹${formatPaise(paid)} refunded to your payment method`,
      body: `₹${formatPaise(paid)} of your online deposit ${deposit.public_id} was refunded to the card, UPI or bank account it came from (Razorpay refund ${refund.id}): ${reason}. It left your wallet.`,
      data: { deposit: deposit.id, refund: refund.id },
    });
    const who = input.who ?? byStaff();
    await auditAs(trx, who, {
      action: 'deposit.refund',
      targetType: 'deposit',
      targetId: deposit.id,
      before: { status: deposit.status, amount: formatPaise(deposit.amount_paise), refunded: false },
      after: {
        refunded: true,
        refund_amount: formatPaise(paid),
        gateway_refund: refund.id,
        transaction: transaction.public_id,
      },
      reason,
      at: now,
    });
    await recordActivity(trx, {
      accountId: deposit.account_id,
      type: 'deposit_refunded',
      who,
      summary: `₹${formatPaise(paid)} of your online deposit ${deposit.public_id} refunded to where it came from: ${reason}`,
      details: {
        deposit: deposit.public_id,
        amount: formatPaise(paid),
        gateway_refund: refund.id,
        transaction: transaction.public_id,
        reason,
      },
      at: now,
    });
    return { deposit: updated, transaction, refund };
  });
  options.logger.info(
    { deposit: done.deposit.public_id, refund: done.refund.id, actor: input.actor },
    'razorpay: deposit refunded',
  );
  return { ...done, balance: await balanceOf(options.db, found.account_id) };
}

/**
 * A signed `refund.processed` (or `refund.created`) webhook: never moves money. A refund this
 * platform made carries the deposit's public id as its receipt: `refund_recorded` once its
 * transaction committed, `refund_recording` while it runs (the event can overtake the commit).
 * Any other refund (made from Razorpay's dashboard) is logged as a warning for staff and answered
 * `refund_unrecorded`: the wallet is not debited for it.
 */
export async function refundEvent(options: Options, refund: Partial<RazorpayRefund> | undefined): Promise<string> {
  if (typeof refund?.id !== 'string' || typeof refund.payment_id !== 'string') return 'ignored';
  const deposit = await options.db
    .selectFrom('deposits')
    .select(['public_id', 'refund_gateway_id'])
    .where('gateway_payment_id', '=', refund.payment_id)
    .executeTakeFirst();
  if (deposit && deposit.refund_gateway_id === refund.id) return 'refund_recorded';
  if (deposit && refund.receipt === deposit.public_id) return 'refund_recording';
  options.logger.warn(
    { refund: refund.id, payment: refund.payment_id, deposit: deposit?.public_id ?? null, amount: refund.amount },
    'razorpay: a refund this platform did not make (from the dashboard?); the wallet was not changed',
  );
  return 'refund_unrecorded';
}
