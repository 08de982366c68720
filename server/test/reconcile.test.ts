// Statement reconciliation through the staff CLI (`deposits reconcile FILE.csv`) against a real
// database: both export layouts, exact matches approve and credit once (ledger, notification,
// mail as a staff approval), amount mismatches and ambiguous narrations are left alone, dry runs
// and second imports change nothing, unmatched lines and deposits are listed both ways, and bad
// files get a clear error or a per-line report.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { localInputs, recordingInputs, replayInputs } from '../src/admin/inputs.ts';
import { readCommandInputs, runAdmin } from '../src/admin/run.ts';
import { amountPaise, parseCsv, statementDate } from '../src/core/deposits/statement.ts';
import { formatPaise } from '../src/core/money.ts';
import { createAccount, lastMail } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { receivedPng } from './support/uploads.ts';

let t: TestApp;
let dir: string;
before(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'hostplane-statements-'));
});
after(() => t.close());

const inputs = localInputs();
const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:priya', inputs);
const json = async (...argv: string[]) => {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};

/** Today as an Indian date, in a statement's spelling: the deposits below are reported today. */
const today = new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);
const [yyyy, mm, dd] = today.split('-') as [string, string, string];

function statement(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function deposit(amount: string, txnRef: string) {
  const { account } = await createAccount(t);
  const made = await t.deps.deposits.submit(account.id, { amount, txnRef, upload: await receivedPng(t.dataDir) });
  return { account, deposit: made };
}

const balance = async (accountId: number) => String(await t.deps.wallet.balance(accountId));
const status = async (id: number) => (await t.deps.deposits.get(id)).status;
const ledgerRows = async (accountId: number) =>
  (
    await t.deps.database.db
      .selectFrom('wallet_transactions')
      .select('id')
      .where('account_id', '=', accountId)
      .execute()
  ).length;
interface Line {
  line: number;
  outcome: string;
  matched_by: string | null;
  amount: string;
}
const lineOf = (report: { lines: Line[] }, line: number) => report.lines.find((l) => l.line === line);

describe('statement parsing', () => {
  test('CSV with a BOM, CRLF, quoted commas, doubled quotes and a line break in quotes', () => {
    const rows = parseCsv('\ufeffa,"b, c","say ""hi"""\r\n"multi\nline",2\r\n');
    assert.deepEqual(
      rows.map((r) => r.cells),
      [
        ['a', 'b, c', 'say "hi"'],
        ['multi\nline', '2'],
      ],
    );
    assert.deepEqual(
      rows.map((r) => r.line),
      [1, 2],
    );
  });

  test('amounts become paise from their digits; dates in three spellings', () => {
    assert.equal(amountPaise('1,00,000.10'), 10000010n);
    assert.equal(amountPaise('₹ 1,500.5'), 150050n);
    assert.equal(amountPaise('0.07'), 7n);
    assert.equal(amountPaise('12,34,567'), 123456700n);
    for (const bad of ['1.234', 'abc', '1,,0', '', '1e3', '.5']) assert.equal(amountPaise(bad), null, bad);
    // Any amount, grouped the Indian way (12,34,567.89) or the western way, reads back to its paise.
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 99_99_99_999_99n }), (paise) => {
        const [rupees, fraction] = formatPaise(paise).split('.') as [string, string];
        const western = rupees.replace(/\B(?=(\d{3})+$)/g, ',');
        const indian = rupees.replace(/\B(?=(\d{2})*\d{3}$)/g, ',');
        assert.equal(amountPaise(`${western}.${fraction}`), paise);
        assert.equal(amountPaise(`${indian}.${fraction}`), paise);
      }),
      { numRuns: 300 },
    );
    assert.equal(statementDate('05/11/26'), '2026-11-05');
    assert.equal(statementDate('05/11/2026'), '2026-11-05');
    assert.equal(statementDate('2026-11-05 14:31:05'), '2026-11-05');
    assert.equal(statementDate('5/1/26'), '2026-01-05');
    for (const bad of ['31/02/2026', '2026/11/05', '05/13/26', '2026-11-5', 'yesterday'])
      assert.equal(statementDate(bad), null, bad);
  });
});

describe('deposits reconcile', () => {
  test('bank layout: dry run, then exact and narration matches approve once; a second import changes nothing', async () => {
    const a = await deposit('1500.50', '412345678901');
    const b = await deposit('200.00', 'NEFTN12345678');
    const c = await deposit('999', 'UPIREF777777');
    const d = await deposit('75', 'IMPS5555501');
    const file = statement(
      'hdfc-nov.csv',
      [
        '\ufeffHDFC BANK Ltd.,,,,,,',
        'Account No :,50100012345678,,,,,',
        'Date,Narration,Chq./Ref.No.,Value Dt,Withdrawal Amt.,Deposit Amt.,Closing Balance',
        '********,********,********,********,********,********,********',
        `${dd}/${mm}/${yyyy.slice(2)},UPI-ASHA-asha@okhdfc-ICIC0000123-412345678901-deposit,0000412345678901,${dd}/${mm}/${yyyy.slice(2)},,"1,500.50","10,500.50"`,
        `${dd}/${mm}/${yyyy.slice(2)},NEFT CR-SBIN0000001-RAVI,NEFTN12345678,${dd}/${mm}/${yyyy.slice(2)},,250.00,"10,750.50"`,
        `${dd}/${mm}/${yyyy.slice(2)},"UPI-KIRAN, K-kiran@ybl-UPIREF777777-rent, nov",000000000000,${dd}/${mm}/${yyyy.slice(2)},,999.00,"11,749.50"`,
        `${dd}/${mm}/${yyyy.slice(2)},POS 4321 AMAZON,000000000001,${dd}/${mm}/${yyyy.slice(2)},300.00,,"11,449.50"`,
        `${dd}/${mm}/${yyyy.slice(2)},UPI-STRANGER-x@upi-999999999999-gift,999999999999,${dd}/${mm}/${yyyy.slice(2)},,10.00,"11,459.50"`,
      ].join('\r\n'),
    );

    const dry = await json('deposits', 'reconcile', file, '--dry-run');
    assert.equal(dry.layout, 'bank');
    assert.equal(dry.dry_run, true);
    assert.equal(dry.summary.would_approve, 2);
    assert.equal(dry.summary.approved, 0);
    for (const { account, deposit: dep } of [a, b, c, d]) {
      assert.equal(await status(dep.id), 'pending');
      assert.equal(await balance(account.id), '0');
    }

    const first = await json('deposits', 'reconcile', file);
    assert.equal(first.summary.approved, 2);
    assert.equal(first.summary.skipped, 2, 'the separator row and the withdrawal');
    assert.deepEqual(
      [5, 6, 7, 9].map((n) => [lineOf(first, n)?.outcome, lineOf(first, n)?.matched_by]),
      [
        ['approved', 'reference'],
        ['amount_mismatch', 'reference'],
        ['approved', 'narration'],
        ['unmatched', null],
      ],
    );
    assert.equal(lineOf(first, 7)?.amount, '999.00');
    assert.deepEqual(
      first.unmatched_deposits.map((u: { public_id: string }) => u.public_id),
      [d.deposit.public_id],
      'the pending deposit no line names; the mismatched one is reported on its line',
    );

    assert.equal(await balance(a.account.id), '150050');
    assert.equal(await balance(c.account.id), '99900');
    assert.equal(await status(b.deposit.id), 'pending');
    assert.equal(await balance(b.account.id), '0');
    const approved = await t.deps.deposits.get(a.deposit.id);
    assert.match(approved.reviewed_by ?? '', /^reconciliation:hdfc-nov\.csv@[0-9a-f]{8} by staff:priya$/);
    assert.notEqual(approved.transaction_id, null);
    assert.equal((await lastMail(t, a.account.email)).row.template, 'deposit_approved');
    const notes = await t.deps.database.db
      .selectFrom('notifications')
      .select('kind')
      .where('account_id', '=', c.account.id)
      .execute();
    assert.deepEqual(
      notes.map((n) => n.kind),
      ['deposit_approved'],
    );

    const again = await json('deposits', 'reconcile', file);
    assert.equal(again.summary.approved, 0);
    assert.equal(again.summary.already_approved, 2);
    assert.equal(lineOf(again, 7)?.outcome, 'already_approved', 'a narration match is found again');
    assert.equal(await balance(a.account.id), '150050');
    assert.equal(await ledgerRows(a.account.id), 1);
    assert.equal(await ledgerRows(c.account.id), 1);

    const text = await admin('deposits', 'reconcile', file);
    assert.equal(text.exitCode, 0);
    assert.match(text.stdout, /bank layout/);
    assert.match(text.stdout, /Pending deposits reported .* with no statement line:/);
    assert.match(text.stdout, /IMPS5555501/);
  });

  test('UPI layout: detected by its header; failed and debit lines skipped; exact amount only', async () => {
    const ok = await deposit('499.00', '612300000001');
    const short = await deposit('100.00', '612300000002');
    const failed = await deposit('50.00', '612300000003');
    const file = statement(
      'upi-settlement.csv',
      [
        'Transaction Date,UTR,Amount,Payer VPA,Remarks,Status',
        `${today} 10:01:00,612300000001,499.00,asha@okhdfc,Hostplane wallet,SUCCESS`,
        `${today} 10:05:00,612300000002,100.01,ravi@ybl,wallet,SUCCESS`,
        `${today} 10:09:00,612300000003,50.00,kiran@paytm,wallet,FAILED`,
        `${today} 11:00:00,612300000009,-20.00,asha@okhdfc,refund,SUCCESS`,
        '',
      ].join('\n'),
    );
    const report = await json('deposits', 'reconcile', file);
    assert.equal(report.layout, 'upi');
    assert.deepEqual(
      report.lines.map((l: { reference: string; outcome: string }) => [l.reference, l.outcome]),
      [
        ['612300000001', 'approved'],
        ['612300000002', 'amount_mismatch'],
      ],
    );
    assert.equal(report.summary.skipped, 2);
    assert.equal(await balance(ok.account.id), '49900');
    assert.equal(await status(short.deposit.id), 'pending');
    assert.equal(await status(failed.deposit.id), 'pending');
    assert.ok(report.unmatched_deposits.some((u: { public_id: string }) => u.public_id === failed.deposit.public_id));

    const forced = await admin('deposits', 'reconcile', file, '--layout', 'bank');
    assert.equal(forced.exitCode, 1);
    assert.match(forced.stderr, /^error: no header row of the bank layout/);
  });

  test('a narration naming two deposits of its amount approves neither', async () => {
    const one = await deposit('300', 'AMBREF1111');
    const two = await deposit('300', 'AMBREF2222');
    const file = statement(
      'ambiguous.csv',
      [
        'Transaction Date,UTR,Amount,Payer VPA,Remarks',
        `${dd}/${mm}/${yyyy},,300.00,x@upi,paid for AMBREF1111 and AMBREF2222`,
        `${dd}/${mm}/${yyyy},,300.00,x@upi,ref AMBREF11112 is longer than a deposit's`,
      ].join('\n'),
    );
    const report = await json('deposits', 'reconcile', file);
    assert.equal(report.lines[0].outcome, 'ambiguous');
    assert.match(report.lines[0].detail, new RegExp(`${one.deposit.public_id}.*${two.deposit.public_id}`));
    assert.equal(report.lines[1].outcome, 'unmatched', 'a reference matches whole words only');
    assert.equal(await status(one.deposit.id), 'pending');
    assert.equal(await status(two.deposit.id), 'pending');
  });

  test('pending deposits are listed only within the days the statement covers, debit lines included', async () => {
    const waiting = await deposit('12', 'OLDDAYS0001');
    const file = statement('old.csv', 'Date,UTR,Amount\n01/04/2025,ZZZ000111,5.00\n');
    const report = await json('deposits', 'reconcile', file);
    assert.deepEqual(report.period, { from: '2025-04-01', to: '2025-04-01' });
    assert.equal(report.unmatched_deposits.length, 0);
    assert.equal(await status(waiting.deposit.id), 'pending');
    // A debit line of today extends the statement's days to today: the deposit is then listed.
    const longer = statement('longer.csv', `Date,UTR,Amount\n01/04/2025,ZZZ000111,5.00\n${today},ZZZ000112,-3.00\n`);
    const listed = await json('deposits', 'reconcile', longer);
    assert.deepEqual(listed.period, { from: '2025-04-01', to: today });
    assert.ok(listed.unmatched_deposits.some((u: { public_id: string }) => u.public_id === waiting.deposit.public_id));
  });

  test('bad input: a clear error or a per-line report, never a stack trace', async () => {
    const missing = await admin('deposits', 'reconcile', join(dir, 'nope.csv'));
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /^error: cannot read .*nope\.csv: ENOENT/);

    const good = statement('good.csv', 'Date,UTR,Amount\n01/04/2025,ZZZ000111,5.00\n');
    const layout = await admin('deposits', 'reconcile', good, '--layout', 'swift');
    assert.equal(layout.exitCode, 2);
    assert.match(layout.stderr, /--layout is bank or upi/);

    const noHeader = await admin('deposits', 'reconcile', statement('x.csv', 'a,b,c\n1,2,3\n'));
    assert.equal(noHeader.exitCode, 1);
    assert.match(noHeader.stderr, /no header row of the bank or upi layout/);

    const open = await admin('deposits', 'reconcile', statement('q.csv', 'Date,UTR,Amount\n01/04/2025,"ZZZ,5.00\n'));
    assert.equal(open.exitCode, 1);
    assert.match(open.stderr, /line 2: a quoted field is never closed/);

    const mixed = await json(
      'deposits',
      'reconcile',
      statement(
        'mixed.csv',
        'Date,UTR,Amount\n01/04/2025,A1B2C3,5.0.0\n31/02/2025,A1B2C4,5.00\n02/04/2025,A1B2C5,7.00\n',
      ),
    );
    assert.deepEqual(
      mixed.invalid_lines.map((l: { line: number; problem: string }) => [l.line, l.problem]),
      [
        [2, 'amount "5.0.0" is not rupees'],
        [3, 'date "31/02/2025" is not a date'],
      ],
    );
    assert.equal(mixed.lines.length, 1, 'the good line is still read');

    const help = await admin('deposits', 'reconcile', '--help');
    assert.match(help.stdout, /Chq\.\/Ref\.No\..*Deposit Amt\./);
    assert.match(help.stdout, /Transaction Date, UTR, Amount, Payer VPA, Remarks/);
    assert.match(help.stdout, /\[--dry-run\]/);
  });

  test('beside a running server the CLI reads the file and sends its text over the admin socket', async () => {
    const paid = await deposit('42.00', 'SOCKETREF42');
    const file = statement('socket.csv', `Date,UTR,Amount\n${today},SOCKETREF42,42.00\n`);
    const argv = ['deposits', 'reconcile', file, '--json'];
    const recording = recordingInputs(localInputs());
    assert.equal(await readCommandInputs(argv, recording.reader), null);
    assert.match(recording.read.files?.[file] ?? '', /SOCKETREF42/);
    const remote = await runAdmin(argv, async () => t.deps, 'staff:priya', replayInputs(recording.read));
    assert.equal(remote.exitCode, 0, remote.stderr);
    assert.equal(JSON.parse(remote.stdout).summary.approved, 1);
    assert.equal(await status(paid.deposit.id), 'approved');
  });
});
