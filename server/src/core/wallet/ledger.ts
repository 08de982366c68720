// The wallet ledger (CONTRACT §3). Every change to a balance is one row, posted in the caller's
// transaction together with the balance update; the database refuses to update or delete rows
// (trigger) and refuses a negative balance (CHECK). A debit is a conditional UPDATE that only
// applies while the balance covers it, so concurrent debits serialise on the wallet row and
// can never overspend.

import type { Kysely, Transaction } from 'kysely';
import { type Page, pageOf } from '../../db/page.ts';
import type { DB, LedgerKind, LedgerRow } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import { formatPaise } from '../money.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { lowBalanceData } from '../webhooks/payloads.ts';

export interface LedgerEntry {
  kind: LedgerKind;
  /** Signed: credits positive, debits negative. */
  amountPaise: bigint;
  referenceType?: string;
  referenceId?: number;
  note?: string;
  /**
   * When the entry happened, for an entry that goes with a tax document (a charge with its invoice,
   * a refund with its credit note): the document's own instant, so both fall in the same month
   * whatever the clock says; the database's time otherwise.
   */
  at?: Date;
}

/** Make sure the account has a wallet row (a new account has none until its first entry). */
export async function ensureWallet(db: Kysely<DB>, accountId: number): Promise<void> {
  await db
    .insertInto('wallets')
    .values({ account_id: accountId })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
}

/**
 * Every path that moves an account's money, or settles its orders, locks its wallet row first
 * (then orders, then the service), so a client's payment, a credit paying unpaid orders, the
 * billing cycle and a service's transitions (a termination cancelling its unpaid order, a refund)
 * never deadlock.
 */
export async function lockWallet(trx: Transaction<DB>, accountId: number): Promise<void> {
  await ensureWallet(trx, accountId);
  await trx.selectFrom('wallets').select('account_id').where('account_id', '=', accountId).forUpdate().execute();
}

/**
 * Post one entry. A debit the balance cannot cover throws `insufficient_funds` with the balance,
 * the amount required and the shortfall; nothing is written then.
 */
export async function post(trx: Transaction<DB>, accountId: number, entry: LedgerEntry): Promise<LedgerRow> {
  if (entry.amountPaise === 0n) throw new Error('a ledger entry cannot be zero');
  await ensureWallet(trx, accountId);
  const updated = await trx
    .updateTable('wallets')
    .set((eb) => ({ balance_paise: eb('balance_paise', '+', entry.amountPaise.toString()), updated_at: new Date() }))
    .where('account_id', '=', accountId)
    .where((eb) => eb(eb('balance_paise', '+', entry.amountPaise.toString()), '>=', '0'))
    .returning(['balance_paise', 'low_balance_threshold_paise'])
    .executeTakeFirst();
  if (!updated) {
    const balance = BigInt(await balanceOf(trx, accountId));
    const required = -entry.amountPaise;
    throw new AppError('insufficient_funds', {
      message: `The wallet holds ₹${formatPaise(balance)}; this needs ₹${formatPaise(required)}.`,
      details: {
        balance: formatPaise(balance),
        required: formatPaise(required),
        shortfall: formatPaise(required - balance),
        currency: 'INR',
      },
    });
  }
  await lowBalance(trx, accountId, entry, updated);
  return trx
    .insertInto('wallet_transactions')
    .values({
      public_id: publicId('pay'),
      account_id: accountId,
      kind: entry.kind,
      amount_paise: entry.amountPaise,
      balance_after_paise: updated.balance_paise,
      reference_type: entry.referenceType ?? null,
      reference_id: entry.referenceId ?? null,
      note: entry.note ?? null,
      ...(entry.at ? { created_at: entry.at } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * wallet.low_balance (issue 37): a debit that takes the balance from at or above the account's
 * threshold to below it; never again until money takes it back above (not every debit below it).
 */
async function lowBalance(
  trx: Transaction<DB>,
  accountId: number,
  entry: LedgerEntry,
  after: { balance_paise: string; low_balance_threshold_paise: string | null },
): Promise<void> {
  if (after.low_balance_threshold_paise === null || entry.amountPaise >= 0n) return;
  const threshold = BigInt(after.low_balance_threshold_paise);
  const balance = BigInt(after.balance_paise);
  if (balance < threshold && balance - entry.amountPaise >= threshold)
    await emitWebhook(trx, accountId, 'wallet.low_balance', lowBalanceData(balance, threshold), entry.at);
}

export async function balanceOf(db: Kysely<DB>, accountId: number): Promise<string> {
  const row = await db
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.balance_paise ?? '0';
}

export type LedgerPage = Page<LedgerRow>;

/** Which rows of the ledger a page shows: some kinds only, and a time window [from, to). */
export interface LedgerFilter {
  kinds?: LedgerKind[];
  from?: Date;
  to?: Date;
}

export async function history(
  db: Kysely<DB>,
  accountId: number,
  page: number,
  perPage: number,
  filter: LedgerFilter = {},
): Promise<LedgerPage> {
  let query = db.selectFrom('wallet_transactions').where('account_id', '=', accountId);
  if (filter.kinds && filter.kinds.length > 0) query = query.where('kind', 'in', filter.kinds);
  if (filter.from) query = query.where('created_at', '>=', filter.from);
  if (filter.to) query = query.where('created_at', '<', filter.to);
  return pageOf(query, (q) => q.selectAll().orderBy('id', 'desc'), page, perPage);
}
