// deposits reconcile FILE.csv [--dry-run] [--layout NAME] (CONTRACT §12): approve the pending
// manual deposits a bank or UPI statement shows paid, and list what matches nothing both ways.
// The CLI process reads the file (InputReader.file), so the command runs the same inside a
// running server through the admin socket; the run (parse, match, approve, audit as the operator)
// is core/deposits/reconcile-run.ts, which the console's upload runs too.

import { OPERATOR } from '../../core/audit/audit.ts';
import type { Reconciliation } from '../../core/deposits/reconcile.ts';
import { runReconciliation, summaryOf } from '../../core/deposits/reconcile-run.ts';
import { LAYOUTS, layoutNamed, type Statement } from '../../core/deposits/statement.ts';
import { isoWithOffset } from '../../core/time.ts';
import { type Command, type CommandInput, clean, type InputReader, table, UsageError } from '../command.ts';

const DETAILS = `Layouts (--layout; when left out, detected from the header row, which may follow a few
lines of account details). Only credit lines count: withdrawals, debits, failed and zero lines are skipped.
  bank  bank account statement, HDFC-style columns:
          Date, Narration, Chq./Ref.No., Value Dt, Withdrawal Amt., Deposit Amt., Closing Balance
        date <- Date, reference <- Chq./Ref.No., amount <- Deposit Amt., narration <- Narration
  upi   UPI / merchant settlement export:
          Transaction Date, UTR, Amount, Payer VPA, Remarks (optional: Type, Status)
        date <- Transaction Date, reference <- UTR, amount <- Amount, narration <- Remarks;
        a Type other than CR/Credit, a Status other than Success, or a negative amount is skipped
Dates: DD/MM/YY, DD/MM/YYYY or YYYY-MM-DD. Amounts: rupees, commas allowed (1,23,456.78).
A line matches a deposit whose reference equals its reference (case, spaces and leading zeros aside) or,
failing that, appears as whole words in its narration, when exactly one pending deposit of that amount does; the
amount must be exact. Approvals record the reviewer "reconciliation:<file>@<id> by <you>".
Run it again on the same file and nothing changes: those deposits are reported already approved.`;

function layoutOption(options: CommandInput['options']) {
  const name = options.layout;
  if (name === undefined) return undefined;
  const layout = typeof name === 'string' ? layoutNamed(name.trim().toLowerCase()) : undefined;
  if (!layout) throw new UsageError(`--layout is ${LAYOUTS.map((l) => l.name).join(' or ')}`);
  return layout;
}

function readStatementFile(args: string[], inputs: InputReader): Promise<string> {
  const path = args[0];
  if (path === undefined || path.trim() === '')
    throw new UsageError('name the statement file: deposits reconcile FILE.csv');
  return inputs.file(path);
}

function render(file: string, statement: Statement, result: Reconciliation, dryRun: boolean): string {
  const summary = summaryOf(result.lines);
  const counted = Object.entries(summary)
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${n} ${outcome.replace(/_/g, ' ')}`);
  const period = result.period ? `${result.period.from} to ${result.period.to}` : 'no dated lines';
  const out = [
    `${dryRun ? 'DRY RUN (nothing changed): ' : ''}${clean(file)}, ${statement.layout} layout, ${period}: ` +
      `${statement.credits.length} credit lines (${counted.join(', ') || 'none'}), ` +
      `${statement.skipped} skipped, ${statement.invalid.length} invalid`,
  ];
  if (result.lines.length > 0)
    out.push(
      '',
      table(
        result.lines.map((l) => ({ ...l })),
        ['line', 'date', 'reference', 'amount', 'outcome', 'deposit', 'detail'],
      ),
    );
  if (statement.invalid.length > 0)
    out.push(
      '',
      'Lines not read:',
      table(
        statement.invalid.map((l) => ({ ...l })),
        ['line', 'problem', 'raw'],
      ),
    );
  if (result.period) {
    out.push('', `Pending deposits reported ${period} with no statement line:`);
    out.push(
      table(
        result.unmatched_deposits.map((d) => ({ ...d, created_at: isoWithOffset(d.created_at) })),
        ['id', 'public_id', 'txn_ref', 'amount', 'created_at'],
      ),
    );
  }
  return out.join('\n');
}

export const reconcileCommand: Command = {
  noun: 'deposits',
  verb: 'reconcile',
  summary: 'Approve pending deposits a bank/UPI statement CSV shows paid (reference and exact amount)',
  args: ['FILE'],
  options: {
    'dry-run': { type: 'boolean', description: 'report what it would do; change nothing' },
    layout: {
      type: 'string',
      description: `${LAYOUTS.map((l) => l.name).join(' or ')} (default: detected from the header row)`,
    },
  },
  details: DETAILS,
  async readInputs(options, inputs, args) {
    layoutOption(options);
    await readStatementFile(args, inputs);
  },
  async run(deps, { args, options, actor, inputs }) {
    const layout = layoutOption(options);
    const file = args[0] as string;
    const dryRun = options['dry-run'] === true;
    const report = await runReconciliation(
      { db: deps.database.db, deposits: deps.deposits, clock: deps.clock },
      {
        fileName: file,
        text: await readStatementFile(args, inputs),
        layout,
        dryRun,
        actorName: actor,
        audit: OPERATOR,
      },
    );
    return { json: report.json, text: render(file, report.statement, report.result, dryRun) };
  },
};
