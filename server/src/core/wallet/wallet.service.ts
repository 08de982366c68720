// Wallet reads for clients and staff credits. The ledger module does the bookkeeping.

import type { Kysely, Transaction } from 'kysely';
import type { DB, LedgerRow } from '../../db/tables.ts';
import { byStaff, recordActivity, type Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { formatPaise, parsePaise } from '../money.ts';
import { balanceOf, history, type LedgerFilter, type LedgerPage, lockWallet, post } from './ledger.ts';

/** The most a single staff credit may add, so a typo of three zeros does not mint money. */
export const MAX_CREDIT_PAISE = 10_00_000_00n; // ₹10,00,000

export function createWalletService({
  db,
  afterCredit,
}: {
  db: Kysely<DB>;
  /** Runs in the crediting transaction (the billing cycle pays unpaid orders). */
  afterCredit?: (trx: Transaction<DB>, accountId: number) => Promise<unknown>;
}) {
  return {
    balance: (accountId: number) => balanceOf(db, accountId),

    history: (accountId: number, page: number, perPage: number, filter?: LedgerFilter): Promise<LedgerPage> =>
      history(db, accountId, page, perPage, filter),

    /** A staff adjustment (positive), recorded with its reason. */
    async credit(accountId: number, amount: unknown, note: string, who: Who = byStaff()): Promise<LedgerRow> {
      const parsed = parsePaise(amount);
      const fields: Record<string, string> = {};
      if (!parsed.ok) fields.amount = parsed.reason;
      else if (parsed.paise <= 0n) fields.amount = 'must be more than zero';
      else if (parsed.paise > MAX_CREDIT_PAISE) fields.amount = 'must be at most 1000000.00 per credit';
      if (note.trim().length < 3) fields.note = 'say why (at least 3 characters)';
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      return db.transaction().execute(async (trx) => {
        const entry = await post(trx, accountId, {
          kind: 'adjustment',
          amountPaise: (parsed as { paise: bigint }).paise,
          note: note.trim(),
        });
        await recordActivity(trx, {
          accountId,
          type: 'staff_wallet_credited',
          who,
          summary: `Hostplane staff added ₹${formatPaise(entry.amount_paise)} to your wallet (${entry.public_id})`,
          details: { amount: formatPaise(entry.amount_paise), transaction: entry.public_id },
          at: entry.created_at,
        });
        await afterCredit?.(trx, accountId);
        await auditAs(trx, who, {
          action: 'wallet.credit',
          targetType: 'account',
          targetId: accountId,
          before: { balance: formatPaise(BigInt(entry.balance_after_paise) - BigInt(entry.amount_paise)) },
          // After paying what was unpaid from it (afterCredit): the balance the account is left with.
          after: { balance: formatPaise(await balanceOf(trx, accountId)), transaction: entry.public_id },
          reason: note.trim(),
          at: entry.created_at,
        });
        return entry;
      });
    },

    /**
     * Staff paid money of the wallet back to the customer outside the platform (a bank or UPI
     * transfer, e.g. before the account is deleted): a `withdrawal` row with how it was paid. Never
     * more than the balance (422 insufficient_funds).
     */
    withdraw: (accountId: number, amount: unknown, note: string, who: Who = byStaff()): Promise<LedgerRow> =>
      takeOut(db, WITHDRAWAL, accountId, amount, note, who),

    /**
     * A staff correction taking money out of the wallet (a negative `adjustment` row with its
     * reason), e.g. a credit given by mistake. Never more than the balance (422 insufficient_funds:
     * nothing is written, no audit row).
     */
    debit: (accountId: number, amount: unknown, note: string, who: Who = byStaff()): Promise<LedgerRow> =>
      takeOut(db, DEBIT, accountId, amount, note, who),
  };
}

interface TakeOutKind {
  kind: 'withdrawal' | 'adjustment';
  activity: 'staff_wallet_refunded' | 'staff_wallet_debited';
  action: string;
  noteHint: string;
  summary: (amount: string, publicId: string) => string;
}

const WITHDRAWAL: TakeOutKind = {
  kind: 'withdrawal',
  activity: 'staff_wallet_refunded',
  action: 'wallet.refund',
  noteHint: 'say how it was paid back (at least 3 characters)',
  summary: (amount, id) => `Hostplane staff paid ₹${amount} of your wallet back to you (${id})`,
};

const DEBIT: TakeOutKind = {
  kind: 'adjustment',
  activity: 'staff_wallet_debited',
  action: 'wallet.debit',
  noteHint: 'say why (at least 3 characters)',
  summary: (amount, id) => `Hostplane staff took ₹${amount} out of your wallet (${id})`,
};

/** Money out of the wallet by staff, never below zero, with its activity row and audit row. */
function takeOut(
  db: Kysely<DB>,
  how: TakeOutKind,
  accountId: number,
  amount: unknown,
  note: string,
  who: Who,
): Promise<LedgerRow> {
  const parsed = parsePaise(amount);
  const fields: Record<string, string> = {};
  if (!parsed.ok) fields.amount = parsed.reason;
  else if (parsed.paise <= 0n) fields.amount = 'must be more than zero';
  if (note.trim().length < 3) fields.note = how.noteHint;
  if (Object.keys(fields).length > 0) return Promise.reject(AppError.fields(fields));
  return db.transaction().execute(async (trx) => {
    await lockWallet(trx, accountId);
    const entry = await post(trx, accountId, {
      kind: how.kind,
      amountPaise: -(parsed as { paise: bigint }).paise,
      note: note.trim(),
    });
    const paid = formatPaise(-BigInt(entry.amount_paise));
    await recordActivity(trx, {
      accountId,
      type: how.activity,
      who,
      summary: how.summary(paid, entry.public_id),
      details: { amount: paid, transaction: entry.public_id },
      at: entry.created_at,
    });
    await auditAs(trx, who, {
      action: how.action,
      targetType: 'account',
      targetId: accountId,
      before: { balance: formatPaise(BigInt(entry.balance_after_paise) - BigInt(entry.amount_paise)) },
      after: { balance: formatPaise(entry.balance_after_paise), transaction: entry.public_id },
      reason: note.trim(),
      at: entry.created_at,
    });
    return entry;
  });
}

export type WalletService = ReturnType<typeof createWalletService>;
