// One import of a bank or UPI statement (CONTRACT §12, §14), as the staff CLI (`deposits reconcile
// FILE.csv`) and the console's upload (POST /api/v1/staff/deposits/reconcile) both run it: parse
// the file (./statement.ts), match and approve (./reconcile.ts), and report every line, every line
// not read and the pending deposits of those days no line names. The approvals record the reviewer
// `reconciliation:<file>@<content id> by <who>`; with a staff actor each approval is audited as
// theirs (deposit.approve, in its own transaction), and a run that is not a dry run adds one
// `deposit.reconcile` row with the counts once it has finished.

import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import { isoWithOffset } from '../time.ts';
import type { DepositService } from './deposit.service.ts';
import { type LineResult, type Reconciliation, reconcile } from './reconcile.ts';
import { type Layout, parseStatement, type Statement } from './statement.ts';

export const OUTCOMES = [
  'approved',
  'would_approve',
  'already_approved',
  'amount_mismatch',
  'ambiguous',
  'rejected_before',
  'duplicate_line',
  'unmatched',
] as const;

/** The file's name as a reviewer string keeps it (no path, nothing odd, at most 48 characters). */
function fileLabel(fileName: string): string {
  return (
    basename(fileName)
      .replace(/[^\w.@-]/g, '_')
      .slice(0, 48) || 'statement'
  );
}

/** A statement by name and content: `hdfc-nov.csv@1a2b3c4d`. */
function statementId(fileName: string, text: string): string {
  return `${fileLabel(fileName)}@${createHash('sha256').update(text).digest('hex').slice(0, 8)}`;
}

/** The reviewer recorded on approved deposits: the file by name and content, and who ran it. */
export function reviewerFor(fileName: string, text: string, actor: string): string {
  return `reconciliation:${statementId(fileName, text)} by ${actor}`;
}

/** How many lines had each outcome (every outcome named, zero or not). */
export function summaryOf(lines: LineResult[]): Record<(typeof OUTCOMES)[number], number> {
  const counts = {} as Record<(typeof OUTCOMES)[number], number>;
  for (const outcome of OUTCOMES) counts[outcome] = lines.filter((l) => l.outcome === outcome).length;
  return counts;
}

export interface ReconcileRunOptions {
  db: Kysely<DB>;
  deposits: DepositService;
  clock: () => Date;
}

export interface ReconcileInput {
  fileName: string;
  text: string;
  /** The export's layout; detected from the header row when absent. */
  layout?: Layout | undefined;
  dryRun: boolean;
  /** Who ran it, as the reviewer string names them: `staff:priya`, `staff:12`. */
  actorName: string;
  /** Staff to audit it as (the console's member, or the operator); none: not audited. */
  audit?: AuditActor | undefined;
  reason?: string | null;
}

export interface ReconcileReport {
  statement: Statement;
  result: Reconciliation;
  /** What the CLI prints with --json and the console's API answers. */
  json: {
    file: string;
    layout: string;
    dry_run: boolean;
    reviewer: string;
    period: { from: string; to: string } | null;
    summary: Record<(typeof OUTCOMES)[number] | 'skipped' | 'invalid', number>;
    lines: LineResult[];
    invalid_lines: Statement['invalid'];
    unmatched_deposits: { id: number; public_id: string; txn_ref: string; amount: string; created_at: string }[];
  };
}

/** Parse, match, approve (unless a dry run) and report; a file that cannot be read is 422 `statement`. */
export async function runReconciliation(options: ReconcileRunOptions, input: ReconcileInput): Promise<ReconcileReport> {
  const statement = parseStatement(input.text, input.layout);
  const reviewer = reviewerFor(input.fileName, input.text, input.actorName);
  const result = await reconcile(
    {
      db: options.db,
      deposits: options.deposits,
      reviewer,
      dryRun: input.dryRun,
      ...(input.audit ? { audit: input.audit } : {}),
    },
    statement,
  );
  const summary = { ...summaryOf(result.lines), skipped: statement.skipped, invalid: statement.invalid.length };
  if (!input.dryRun && input.audit) {
    const audit = input.audit;
    await options.db.transaction().execute((trx) =>
      recordAudit(trx, {
        actor: audit,
        action: 'deposit.reconcile',
        targetType: 'statement',
        targetId: statementId(input.fileName, input.text),
        after: { layout: statement.layout, credit_lines: statement.credits.length, ...summary },
        reason: input.reason?.trim() || null,
        at: options.clock(),
      }),
    );
  }
  return {
    statement,
    result,
    json: {
      file: input.fileName,
      layout: statement.layout,
      dry_run: input.dryRun,
      reviewer,
      period: result.period,
      summary,
      lines: result.lines,
      invalid_lines: statement.invalid,
      unmatched_deposits: result.unmatched_deposits.map((d) => ({ ...d, created_at: isoWithOffset(d.created_at) })),
    },
  };
}
