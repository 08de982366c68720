// Manual deposits (spec §2 Manual deposit, 4.6): a client reports a UPI/bank payment with its
// reference and a screenshot; staff approve (the wallet is credited exactly once, whatever
// races) or reject (with a reason). Either decision notifies the client in-app and by mail, in
// the same transaction as the decision.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import { pageOf } from '../../db/page.ts';
import type { Account, DB, Deposit, DepositStatus } from '../../db/tables.ts';
import { byClient, recordActivity, type Who, whoOfReviewer } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import type { Mailer } from '../mail/mailer.ts';
import { formatPaise, parsePaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { balanceOf, post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { depositData } from '../webhooks/payloads.ts';
import { keepUpload, type ReceivedUpload, uploadDirs } from './uploads.ts';

/** The largest single deposit a client may report. */
export const MAX_DEPOSIT_PAISE = 1_00_000_00n; // ₹1,00,000

/** UPI references are 12 digits; bank references (IMPS/NEFT/RTGS UTRs) are letters and digits. */
const TXN_REF = /^[A-Za-z0-9][A-Za-z0-9._/-]{3,63}$/;

export interface SubmitDeposit {
  amount: unknown;
  txnRef: unknown;
  upload: ReceivedUpload | null;
}

export interface DepositServiceOptions {
  db: Kysely<DB>;
  dataDir: string;
  mailer: Mailer;
  clock: () => Date;
  /** Runs in the approving transaction, after the credit (the billing cycle pays unpaid orders). */
  afterCredit?: (trx: Transaction<DB>, accountId: number) => Promise<unknown>;
}

type Decision = { status: 'approved'; note?: string } | { status: 'rejected'; reason: string };

/** What the client knows the deposit by: its UPI/bank reference, or the gateway's payment id. */
function referenceOf(deposit: Deposit): string {
  return deposit.txn_ref ?? deposit.gateway_payment_id ?? deposit.gateway_order_id ?? deposit.public_id;
}
export type Owner = Pick<Account, 'id' | 'name' | 'email'>;

async function txnRefTaken(db: Kysely<DB>, ref: string): Promise<boolean> {
  const row = await db
    .selectFrom('deposits')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['txn_ref']), '=', ref.toLowerCase()))
    .executeTakeFirst();
  return row !== undefined;
}

/** Every field problem of a submission, together (empty when there is none). */
async function submissionProblems(db: Kysely<DB>, input: SubmitDeposit) {
  const fields: Record<string, string> = {};
  const amount = parsePaise(input.amount);
  if (input.amount === undefined || input.amount === '') fields.amount = 'is required';
  else if (!amount.ok) fields.amount = amount.reason;
  else if (amount.paise <= 0n) fields.amount = 'must be more than zero';
  else if (amount.paise > MAX_DEPOSIT_PAISE) fields.amount = `must be at most ${formatPaise(MAX_DEPOSIT_PAISE)}`;
  const txnRef = typeof input.txnRef === 'string' ? input.txnRef.trim() : '';
  let existence = false;
  if (txnRef === '') fields.txn_ref = 'is required';
  else if (!TXN_REF.test(txnRef))
    fields.txn_ref = 'must be 4–64 letters, digits, ".", "_", "/" or "-" (the UPI or bank reference)';
  else if (await txnRefTaken(db, txnRef)) {
    fields.txn_ref = 'has already been used';
    existence = true;
  }
  if (input.upload === null) fields.screenshot = 'is required: a PNG, JPEG, WebP or PDF file';
  return { fields, existence, amount, txnRef };
}

/** The activity log's `deposit_created`: a deposit the customer reported, or started online. */
export async function depositCreated(trx: Kysely<DB>, deposit: Deposit, who: Who, at: Date): Promise<void> {
  const amount = formatPaise(deposit.amount_paise);
  await recordActivity(trx, {
    accountId: deposit.account_id,
    type: 'deposit_created',
    who,
    summary:
      deposit.method === 'razorpay'
        ? `Started an online deposit of ₹${amount} (${deposit.public_id})`
        : `Reported a deposit of ₹${amount} by UPI or bank transfer for review (${deposit.public_id})`,
    details: { deposit: deposit.public_id, amount, method: deposit.method },
    at,
  });
}

/** Record a deposit for review. Every field problem is reported together; the file is kept only on success. */
async function submit(
  options: DepositServiceOptions,
  accountId: number,
  input: SubmitDeposit,
  who: Who,
): Promise<Deposit> {
  const { fields, existence, amount, txnRef } = await submissionProblems(options.db, input);
  // "Already used" tells about a deposit (of any account): it keeps counting against the limits.
  if (Object.keys(fields).length > 0) throw AppError.fields(fields, undefined, { existence });

  const dirs = uploadDirs(options.dataDir);
  const file = await keepUpload(input.upload as ReceivedUpload, dirs.deposits);
  try {
    return await options.db.transaction().execute(async (trx) => {
      const deposit = await trx
        .insertInto('deposits')
        .values({
          public_id: publicId('pay'),
          account_id: accountId,
          amount_paise: (amount as { paise: bigint }).paise,
          txn_ref: txnRef,
          screenshot_file: file,
          screenshot_type: (input.upload as ReceivedUpload).type,
          screenshot_bytes: (input.upload as ReceivedUpload).bytes,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await depositCreated(trx, deposit, who, options.clock());
      return deposit;
    });
  } catch (error) {
    await rm(join(dirs.deposits, file), { force: true });
    // Lost a race with another submission of the same reference (any account).
    if ((error as { code?: string }).code === '23505')
      throw AppError.fields({ txn_ref: 'has already been used' }, undefined, { existence: true });
    throw error;
  }
}

/**
 * Staff decide a pending deposit, under a lock on it, so two decisions cannot both apply. With a
 * staff `who` (byOperator, byStaffMember) the decision is audited in the same transaction.
 */
async function decide(
  options: DepositServiceOptions,
  id: number,
  reviewer: string,
  decision: Decision,
  who: Who = whoOfReviewer(reviewer),
) {
  return options.db.transaction().execute(async (trx) => {
    const deposit = await trx.selectFrom('deposits').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!deposit) throw new AppError('not_found', { message: `No deposit ${id}.` });
    if (deposit.status !== 'pending') {
      throw new AppError('conflict', { message: `Deposit ${deposit.public_id} is already ${deposit.status}.` });
    }
    const account = await trx
      .selectFrom('accounts')
      .select(['id', 'name', 'email'])
      .where('id', '=', deposit.account_id)
      .executeTakeFirstOrThrow();
    const done =
      decision.status === 'approved'
        ? await approve(options, trx, deposit, account, reviewer, who)
        : await reject(options, trx, deposit, account, reviewer, decision.reason, who);
    await auditAs(trx, who, {
      action: decision.status === 'approved' ? 'deposit.approve' : 'deposit.reject',
      targetType: 'deposit',
      targetId: deposit.id,
      before: { status: deposit.status, account_id: deposit.account_id, amount: formatPaise(deposit.amount_paise) },
      after: { status: done.deposit.status, transaction: done.transaction?.public_id ?? null },
      reason: decision.status === 'rejected' ? decision.reason : (decision.note ?? null),
      at: options.clock(),
    });
    return done;
  });
}

/** Credit the wallet once, pay what is unpaid from it, and tell the client (under the caller's lock on the deposit). */
export async function approve(
  options: DepositServiceOptions,
  trx: Transaction<DB>,
  deposit: Deposit,
  account: Owner,
  reviewer: string,
  who: Who = whoOfReviewer(reviewer),
) {
  const amount = formatPaise(deposit.amount_paise);
  const entry = await post(trx, deposit.account_id, {
    kind: 'deposit',
    amountPaise: BigInt(deposit.amount_paise),
    referenceType: 'deposit',
    referenceId: deposit.id,
    note: `Deposit ${deposit.public_id} (${referenceOf(deposit)})`,
  });
  const updated = await trx
    .updateTable('deposits')
    .set({ status: 'approved', reviewed_by: reviewer, reviewed_at: options.clock(), transaction_id: entry.id })
    .where('id', '=', deposit.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, deposit.account_id, 'deposit.approved', depositData(updated), options.clock());
  // Unpaid renewal orders are paid from the deposit first (the billing cycle): the balance after.
  await options.afterCredit?.(trx, deposit.account_id);
  const balance = formatPaise(await balanceOf(trx, deposit.account_id));
  await notify(trx, account.id, {
    kind: 'deposit_approved',
    title: `Deposit of ₹${amount} approved`,
    body: `₹${amount} (reference ${referenceOf(deposit)}) was added to your wallet. Balance: ₹${balance}.`,
    data: { deposit: deposit.public_id, transaction: entry.public_id },
  });
  await options.mailer.queue(
    trx,
    account.email,
    { template: 'deposit_approved', name: account.name, amount, reference: referenceOf(deposit), balance },
    account.id,
  );
  await recordActivity(trx, {
    accountId: account.id,
    type: 'deposit_approved',
    who,
    summary:
      who.actor === 'staff'
        ? `Deposit of ₹${amount} (${deposit.public_id}) approved by Hostplane staff and added to your wallet`
        : `Deposit of ₹${amount} (${deposit.public_id}) confirmed and added to your wallet`,
    details: { deposit: deposit.public_id, amount, method: deposit.method, transaction: entry.public_id },
    at: options.clock(),
  });
  return { deposit: updated, transaction: entry };
}

/** Refuse a pending deposit with a reason, and tell the client (under the caller's lock on the deposit). */
export async function reject(
  options: DepositServiceOptions,
  trx: Transaction<DB>,
  deposit: Deposit,
  account: Owner,
  reviewer: string,
  reason: string,
  who: Who = whoOfReviewer(reviewer),
) {
  const amount = formatPaise(deposit.amount_paise);
  const updated = await trx
    .updateTable('deposits')
    .set({ status: 'rejected', reason, reviewed_by: reviewer, reviewed_at: options.clock() })
    .where('id', '=', deposit.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, deposit.account_id, 'deposit.rejected', depositData(updated), options.clock());
  await notify(trx, account.id, {
    kind: 'deposit_rejected',
    title: `Deposit of ₹${amount} not approved`,
    body: `Your deposit of ₹${amount} (reference ${referenceOf(deposit)}) was not approved: ${reason}`,
    data: { deposit: deposit.public_id },
  });
  await options.mailer.queue(
    trx,
    account.email,
    { template: 'deposit_rejected', name: account.name, amount, reference: referenceOf(deposit), reason },
    account.id,
  );
  await recordActivity(trx, {
    accountId: account.id,
    type: 'deposit_rejected',
    who,
    summary: `Deposit of ₹${amount} (${deposit.public_id}) not approved: ${reason}`,
    details: { deposit: deposit.public_id, amount, method: deposit.method, reason },
    at: options.clock(),
  });
  return { deposit: updated, transaction: null };
}

export function createDepositService(options: DepositServiceOptions) {
  const { db } = options;
  const dirs = uploadDirs(options.dataDir);

  return {
    /** Record a deposit for review. Every field problem is reported together; the file is kept only on success. */
    submit: (accountId: number, input: SubmitDeposit, who: Who = byClient(null)): Promise<Deposit> =>
      submit(options, accountId, input, who),

    async listOwn(accountId: number, page: number, perPage: number) {
      const own = db.selectFrom('deposits').where('account_id', '=', accountId);
      return pageOf(own, (q) => q.selectAll().orderBy('id', 'desc'), page, perPage);
    },

    /** One of the account's deposits; another account's (or none) is 404 not_owner. */
    async getOwn(accountId: number, id: number): Promise<Deposit> {
      const deposit = await db
        .selectFrom('deposits')
        .selectAll()
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (!deposit) throw new AppError('not_owner');
      return deposit;
    },

    /** Where the proof of a manual deposit is kept; null for a Razorpay deposit (it has none). */
    screenshotPath: (deposit: Pick<Deposit, 'screenshot_file'>) =>
      deposit.screenshot_file === null ? null : join(dirs.deposits, deposit.screenshot_file),

    // Staff operations.

    /** Newest first, or the oldest first (`oldestFirst`: a queue, the one waiting longest at the top). */
    async list(filter: { status?: DepositStatus; method?: Deposit['method']; limit: number; oldestFirst?: boolean }) {
      let query = db
        .selectFrom('deposits')
        .innerJoin('accounts', 'accounts.id', 'deposits.account_id')
        .selectAll('deposits')
        .select('accounts.email')
        .limit(filter.limit);
      query = filter.oldestFirst
        ? query.orderBy('deposits.created_at', 'asc').orderBy('deposits.id', 'asc')
        : query.orderBy('deposits.id', 'desc');
      if (filter.status) query = query.where('deposits.status', '=', filter.status);
      if (filter.method) query = query.where('deposits.method', '=', filter.method);
      return query.execute();
    },

    async get(id: number): Promise<Deposit & { email: string }> {
      const deposit = await db
        .selectFrom('deposits')
        .innerJoin('accounts', 'accounts.id', 'deposits.account_id')
        .selectAll('deposits')
        .select('accounts.email')
        .where('deposits.id', '=', id)
        .executeTakeFirst();
      if (!deposit) throw new AppError('not_found', { message: `No deposit ${id}.` });
      return deposit;
    },

    /** Approve; `who` a staff one (byOperator, byStaffMember) audits it, with `note` as the audit row's reason. */
    approve: (id: number, reviewer: string, who?: Who, note?: string) =>
      decide(options, id, reviewer, { status: 'approved', ...(note ? { note } : {}) }, who),

    async reject(id: number, reviewer: string, reason: string, who?: Who) {
      if (reason.trim().length < 3) throw AppError.fields({ reason: 'say why (at least 3 characters)' });
      return decide(options, id, reviewer, { status: 'rejected', reason: reason.trim() }, who);
    },
  };
}

export type DepositService = ReturnType<typeof createDepositService>;
