// Statement reconciliation: each credit line of a bank or UPI statement (./statement.ts) is matched
// to a manual deposit by its reference (UTR) and exact amount, and a pending match is approved
// through the deposit service's own approve path (wallet credit, ledger row, notification, mail,
// afterCredit settlement, one transaction per deposit, locked against a concurrent decision), so a
// reconciled deposit is indistinguishable from a staff approval but for its reviewer. A deposit is
// decided at most once, so importing the same statement again approves nothing.

import { type Kysely, sql } from 'kysely';
import type { DB, Deposit } from '../../db/tables.ts';
import { type Who, whoOfReviewer } from '../activity/activity.ts';
import type { AuditActor } from '../audit/audit.ts';
import { isAppError } from '../errors.ts';
import { formatPaise } from '../money.ts';
import type { DepositService } from './deposit.service.ts';
import type { CreditLine, Statement } from './statement.ts';

export type Outcome =
  | 'approved'
  | 'would_approve'
  | 'already_approved'
  | 'rejected_before'
  | 'amount_mismatch'
  | 'ambiguous'
  | 'duplicate_line'
  | 'unmatched';

export interface LineResult {
  line: number;
  date: string;
  reference: string;
  amount: string;
  outcome: Outcome;
  /** How the deposit was found: its reference in the reference column, or in the narration. */
  matched_by: 'reference' | 'narration' | null;
  deposit: string | null;
  detail: string;
}

export interface UnmatchedDeposit {
  id: number;
  public_id: string;
  txn_ref: string;
  amount: string;
  created_at: Date;
}

export interface Reconciliation {
  lines: LineResult[];
  /** Pending deposits reported within the statement's dates (any line's, IST) that no line names. */
  unmatched_deposits: UnmatchedDeposit[];
  period: { from: string; to: string } | null;
}

type Candidate = Pick<Deposit, 'id' | 'public_id' | 'txn_ref' | 'amount_paise' | 'status' | 'created_at'>;

/** A reference as compared: trimmed, lower case. */
const refKey = (ref: string) => ref.trim().toLowerCase();

/**
 * Every run of whole tokens of the narration (a token: letters and digits), as a deposit reference
 * could be: "UPI-ASHA-asha@okhdfc-512345678901-Rent" yields "512345678901" but never "1234567",
 * so a short reference cannot match inside a longer number.
 */
export function narrationRefs(narration: string): string[] {
  const text = narration.toLowerCase();
  const tokens = [...text.matchAll(/[a-z0-9]+/g)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const refs = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    for (let j = i; j < tokens.length; j++) {
      const run = text.slice((tokens[i] as { start: number }).start, (tokens[j] as { end: number }).end);
      if (run.length > 64) break;
      if (run.length >= 4) refs.add(run);
    }
  }
  return [...refs];
}

/** The reference column as compared, and without the leading zeros banks pad UPI references with. */
function referenceKeys(reference: string): string[] {
  const key = refKey(reference);
  if (key === '') return [];
  const unpadded = key.replace(/^0+/, '');
  return unpadded.length >= 4 && unpadded !== key ? [key, unpadded] : [key];
}

interface Match {
  by: 'reference' | 'narration';
  deposit: Candidate | null;
  /** Deposits of the narration that fit equally (more than one: not approved). */
  ambiguous: Candidate[];
}

/**
 * The reference column first; the narration only when it names exactly one deposit of the line's
 * amount that is pending (or, on a second import, already approved), never a guess among several.
 */
function matchLine(credit: CreditLine, byRef: Map<string, Candidate>): Match | null {
  for (const key of referenceKeys(credit.reference)) {
    const deposit = byRef.get(key);
    if (deposit) return { by: 'reference', deposit, ambiguous: [] };
  }
  const named = [...new Set(narrationRefs(credit.narration).flatMap((r) => byRef.get(r) ?? []))];
  if (named.length === 0) return null;
  const sameAmount = named.filter((d) => BigInt(d.amount_paise) === credit.amountPaise);
  const pending = sameAmount.filter((d) => d.status === 'pending');
  const fits = pending.length > 0 ? pending : sameAmount.filter((d) => d.status === 'approved');
  if (fits.length === 1) return { by: 'narration', deposit: fits[0] as Candidate, ambiguous: [] };
  if (fits.length > 1) return { by: 'narration', deposit: null, ambiguous: fits };
  return named.length === 1 ? { by: 'narration', deposit: named[0] as Candidate, ambiguous: [] } : null;
}

/** Every deposit any line could name, by its compared reference (references are unique that way). */
async function candidates(db: Kysely<DB>, lines: CreditLine[]): Promise<Map<string, Candidate>> {
  const keys = new Set<string>();
  for (const line of lines) {
    for (const key of referenceKeys(line.reference)) keys.add(key);
    for (const key of narrationRefs(line.narration)) keys.add(key);
  }
  const found = new Map<string, Candidate>();
  const all = [...keys];
  for (let i = 0; i < all.length; i += 500) {
    const rows = await db
      .selectFrom('deposits')
      .select(['id', 'public_id', 'txn_ref', 'amount_paise', 'status', 'created_at'])
      .where(sql<string>`lower(txn_ref)`, 'in', all.slice(i, i + 500))
      .execute();
    for (const d of rows) if (d.txn_ref !== null) found.set(refKey(d.txn_ref), d);
  }
  return found;
}

interface Context {
  deposits: DepositService;
  reviewer: string;
  /** The customer sees the platform's confirmation; the audit log, who imported the statement. */
  who: Who | undefined;
  dryRun: boolean;
  claimed: Map<number, number>;
}

/** Decide one line: what its deposit is, and approve it when it is pending and the amounts agree. */
async function settleLine(ctx: Context, credit: CreditLine, match: Match | null): Promise<LineResult> {
  const base = {
    line: credit.line,
    date: credit.date,
    reference: credit.reference,
    amount: formatPaise(credit.amountPaise),
    matched_by: match?.by ?? null,
    deposit: match?.deposit?.public_id ?? null,
  };
  if (match === null) return { ...base, outcome: 'unmatched', detail: 'no deposit has this reference' };
  if (match.deposit === null) {
    const ids = match.ambiguous.map((d) => d.public_id).join(', ');
    return { ...base, outcome: 'ambiguous', detail: `the narration names several deposits of this amount: ${ids}` };
  }
  const deposit = match.deposit;
  const earlier = ctx.claimed.get(deposit.id);
  if (earlier !== undefined) return { ...base, outcome: 'duplicate_line', detail: `line ${earlier} matched it first` };
  ctx.claimed.set(deposit.id, credit.line);
  if (BigInt(deposit.amount_paise) !== credit.amountPaise)
    return { ...base, outcome: 'amount_mismatch', detail: `the deposit says ₹${formatPaise(deposit.amount_paise)}` };
  if (deposit.status === 'approved') return { ...base, outcome: 'already_approved', detail: 'approved before' };
  if (deposit.status === 'rejected')
    return { ...base, outcome: 'rejected_before', detail: 'rejected before; if the money came, use wallet credit' };
  if (ctx.dryRun) return { ...base, outcome: 'would_approve', detail: 'pending; amount matches' };
  try {
    const note = `statement line ${credit.line}: ${ctx.reviewer}`;
    const { transaction } = await ctx.deposits.approve(deposit.id, ctx.reviewer, ctx.who, note);
    return { ...base, outcome: 'approved', detail: `credited (${transaction?.public_id})` };
  } catch (error) {
    // Decided by someone else between our look and the approval's lock.
    if (isAppError(error) && error.code === 'conflict') {
      const outcome = /rejected/.test(error.message) ? 'rejected_before' : 'already_approved';
      return { ...base, outcome, detail: error.message };
    }
    throw error;
  }
}

/** Pending deposits reported on the statement's days (Indian dates, IST) that no line named. */
async function pendingBetween(
  db: Kysely<DB>,
  period: { from: string; to: string },
  named: Set<number>,
): Promise<UnmatchedDeposit[]> {
  const end = new Date(`${period.to}T00:00:00+05:30`);
  end.setUTCDate(end.getUTCDate() + 1);
  const rows = await db
    .selectFrom('deposits')
    .select(['id', 'public_id', 'txn_ref', 'amount_paise', 'created_at'])
    .where('status', '=', 'pending')
    // Razorpay deposits never appear on a bank statement: the gateway confirms them itself.
    .where('method', '=', 'manual')
    .where('created_at', '>=', new Date(`${period.from}T00:00:00+05:30`))
    .where('created_at', '<', end)
    .orderBy('id')
    .execute();
  return rows
    .filter((d) => !named.has(d.id))
    .map(({ amount_paise, txn_ref, ...d }) => ({ ...d, txn_ref: txn_ref ?? '', amount: formatPaise(amount_paise) }));
}

export interface ReconcileOptions {
  db: Kysely<DB>;
  deposits: DepositService;
  /** Recorded as the deposits' reviewer, e.g. `reconciliation:nov.csv@1a2b3c4d by staff:priya`. */
  reviewer: string;
  dryRun: boolean;
  /** Staff who imported it (the console's member, or the operator): each approval is audited as theirs. */
  audit?: AuditActor;
}

/** Match every credit line, approve what fits (unless a dry run), and list what matched nothing. */
export async function reconcile(options: ReconcileOptions, statement: Statement): Promise<Reconciliation> {
  const { db, deposits } = options;
  const byRef = await candidates(db, statement.credits);
  const who = options.audit ? { ...whoOfReviewer(options.reviewer), audit: options.audit } : undefined;
  const ctx: Context = { deposits, reviewer: options.reviewer, who, dryRun: options.dryRun, claimed: new Map() };
  const lines: LineResult[] = [];
  const named = new Set<number>();
  for (const credit of statement.credits) {
    const match = matchLine(credit, byRef);
    for (const d of [match?.deposit ?? [], ...(match?.ambiguous ?? [])].flat()) named.add(d.id);
    lines.push(await settleLine(ctx, credit, match));
  }
  const period = statement.period;
  const unmatched = period ? await pendingBetween(db, period, named) : [];
  return { lines, unmatched_deposits: unmatched, period };
}
