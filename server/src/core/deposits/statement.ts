// Bank and UPI statement CSV files, parsed into credit lines (date, reference, amount, narration)
// for reconciliation (./reconcile.ts). Pure: text in, lines out, no database. Amounts become
// paise from their decimal text (never a float), so ₹1,00,000.10 is 10000010 paise exactly.
// The two export layouts and their column names are documented in docs/RECONCILIATION.md.

import { AppError } from '../errors.ts';

/** One column of a layout: the header names it goes by (compared by `headerKey`). */
type Column = readonly string[];

export interface Layout {
  name: string;
  date: Column;
  reference: Column;
  /** The credited amount; a debit layout column (withdrawals) is never read. */
  amount: Column;
  narration: Column;
  /** Columns read when present: a debit/credit marker and a transaction status. */
  direction?: Column;
  status?: Column;
}

/** The layouts `--layout` names; auto-detection tries them in this order. */
export const LAYOUTS: readonly Layout[] = [
  {
    name: 'bank',
    date: ['date', 'txn date', 'transaction date'],
    reference: ['chq./ref.no.', 'chq/ref no', 'ref no', 'ref no./cheque no.', 'cheque no', 'reference no'],
    amount: ['deposit amt.', 'deposit amt', 'deposit amount', 'credit', 'credit amount', 'cr amount'],
    narration: ['narration', 'description', 'particulars'],
  },
  {
    name: 'upi',
    date: ['transaction date', 'txn date', 'date'],
    reference: ['utr', 'utr no', 'utr number', 'rrn', 'bank reference'],
    amount: ['amount', 'txn amount', 'transaction amount'],
    narration: ['remarks', 'narration', 'description', 'note'],
    direction: ['type', 'dr/cr', 'cr/dr', 'transaction type'],
    status: ['status', 'transaction status'],
  },
];

/** A credit line of the statement. `line` is where its record starts in the file (1-based). */
export interface CreditLine {
  line: number;
  /** The calendar date as YYYY-MM-DD. */
  date: string;
  reference: string;
  amountPaise: bigint;
  narration: string;
}

export interface BadLine {
  line: number;
  problem: string;
  raw: string;
}

export interface Statement {
  layout: string;
  credits: CreditLine[];
  invalid: BadLine[];
  /** Debit, zero, failed or blank lines: not payments in. */
  skipped: number;
  /** The first and last date of any line, debits included: the days the statement covers. */
  period: { from: string; to: string } | null;
}

/** A header cell compared loosely: case, spaces and a trailing colon do not matter. */
export const headerKey = (cell: string) => cell.trim().toLowerCase().replace(/\s+/g, ' ').replace(/:$/, '');

/** A record and the file line it starts on. */
interface Row {
  line: number;
  cells: string[];
}

/**
 * RFC 4180 CSV, tolerant of what exports do: a UTF-8 BOM, CRLF, LF or CR line ends, quoted fields
 * with commas, doubled quotes and line breaks inside. An unterminated quote is an error for the
 * whole file (what follows it cannot be read reliably).
 */
export function parseCsv(text: string): Row[] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const rows: Row[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowStart = 1;
  let quoteStart = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i] as string;
    if (quoted) {
      if (char === '"' && source[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n' || (char === '\r' && source[i + 1] !== '\n')) line++;
        cell += char;
      }
    } else if (char === '"' && cell.trim() === '') {
      quoted = true;
      quoteStart = line;
      cell = '';
    } else if (char === ',') {
      cells.push(cell);
      cell = '';
    } else if (char === '\r' || char === '\n') {
      if (char === '\r' && source[i + 1] === '\n') i++;
      cells.push(cell);
      rows.push({ line: rowStart, cells });
      cells = [];
      cell = '';
      line++;
      rowStart = line;
    } else cell += char;
  }
  if (quoted) throw new AppError('bad_request', { message: `line ${quoteStart}: a quoted field is never closed` });
  if (cell !== '' || cells.length > 0) {
    cells.push(cell);
    rows.push({ line: rowStart, cells });
  }
  return rows;
}

/** Rupees (optional ₹/INR/Rs., Indian or western digit grouping) → paise, or null when not an amount. */
export function amountPaise(text: string): bigint | null {
  const bare = text
    .trim()
    .replace(/^(₹|inr|rs\.?)\s*/i, '')
    .trim();
  const match = /^(\d{1,3}(?:,\d{2,3})*|\d+)(?:\.(\d{1,2}))?$/.exec(bare);
  if (!match) return null;
  const rupees = (match[1] as string).replace(/,/g, '');
  if (rupees.length > 13) return null;
  return BigInt(rupees) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

const two = (digits: string | undefined) => (digits ?? '').padStart(2, '0');

/** Day-first always (Indian exports): 05/11/26 is the 5th of November, never May the 11th. */
const DATE_FORMS: readonly [RegExp, (m: RegExpExecArray) => [string, string, string]][] = [
  [/^(\d{4})-(\d{2})-(\d{2})$/, (m) => [m[1] as string, m[2] as string, m[3] as string]],
  [/^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$/, (m) => [m[3] as string, two(m[2]), two(m[1])]],
  [/^(\d{1,2})[/-](\d{1,2})[/-](\d{2})$/, (m) => [`20${m[3]}`, two(m[2]), two(m[1])]],
];

/** DD/MM/YY, DD/MM/YYYY (1-digit day and month too) or YYYY-MM-DD; a time after it is ignored. */
export function statementDate(text: string): string | null {
  const day = text.trim().split(/[ T]/)[0] ?? '';
  for (const [form, parts] of DATE_FORMS) {
    const match = form.exec(day);
    if (!match) continue;
    const [y, m, d] = parts(match);
    const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
    const iso = `${y}-${m}-${d}`;
    return date.toISOString().slice(0, 10) === iso ? iso : null;
  }
  return null;
}

function columnIndex(header: string[], column: Column | undefined): number {
  if (!column) return -1;
  return header.findIndex((cell) => column.includes(headerKey(cell)));
}

interface Mapping {
  layout: Layout;
  headerAt: number;
  date: number;
  reference: number;
  amount: number;
  narration: number;
  direction: number;
  status: number;
}

function mappingOf(layout: Layout, header: string[], headerAt: number): Mapping | null {
  const mapping = {
    layout,
    headerAt,
    date: columnIndex(header, layout.date),
    reference: columnIndex(header, layout.reference),
    amount: columnIndex(header, layout.amount),
    narration: columnIndex(header, layout.narration),
    direction: columnIndex(header, layout.direction),
    status: columnIndex(header, layout.status),
  };
  return mapping.date < 0 || mapping.reference < 0 || mapping.amount < 0 ? null : mapping;
}

/** Exports often open with account details: the header is the first of the first 30 rows a layout knows. */
function findHeader(rows: Row[], layouts: readonly Layout[]): Mapping {
  for (let at = 0; at < Math.min(rows.length, 30); at++) {
    for (const layout of layouts) {
      const mapping = mappingOf(layout, (rows[at] as Row).cells, at);
      if (mapping) return mapping;
    }
  }
  const names = layouts.map((l) => l.name).join(' or ');
  throw new AppError('bad_request', {
    message: `no header row of the ${names} layout in the first 30 lines (see \`deposits reconcile --help\` for the columns each needs)`,
  });
}

type LineOutcome = { credit: CreditLine } | { bad: BadLine } | 'skip';

function readRow(row: Row, m: Mapping): LineOutcome {
  const cell = (i: number) => (i < 0 ? '' : (row.cells[i] ?? '').trim());
  const raw = row.cells.join(',');
  if (row.cells.every((c) => c.trim() === '' || /^[*=-]+$/.test(c.trim()))) return 'skip';
  const direction = cell(m.direction).toLowerCase();
  if (direction !== '' && !/^(cr|credit|c)$/.test(direction)) return 'skip';
  const status = cell(m.status).toLowerCase();
  if (status !== '' && !/^(success|successful|settled|completed|captured)$/.test(status)) return 'skip';
  const amountText = cell(m.amount);
  if (amountText === '' || /^-/.test(amountText) || /^\(.*\)$/.test(amountText)) return 'skip';
  const amount = amountPaise(amountText);
  if (amount === null) return { bad: { line: row.line, problem: `amount "${amountText}" is not rupees`, raw } };
  if (amount === 0n) return 'skip';
  const date = statementDate(cell(m.date));
  if (date === null) return { bad: { line: row.line, problem: `date "${cell(m.date)}" is not a date`, raw } };
  const narration = cell(m.narration);
  const reference = cell(m.reference);
  if (reference === '' && narration === '')
    return { bad: { line: row.line, problem: 'neither a reference nor a narration', raw } };
  return { credit: { line: row.line, date, reference, amountPaise: amount, narration } };
}

/** The layout `--layout NAME` names; a usage problem is reported by the caller. */
export function layoutNamed(name: string): Layout | undefined {
  return LAYOUTS.find((l) => l.name === name);
}

/** Parse a statement with the given layout, or the first whose header row is found. */
export function parseStatement(text: string, layout?: Layout): Statement {
  const rows = parseCsv(text);
  const mapping = findHeader(rows, layout ? [layout] : LAYOUTS);
  const statement: Statement = { layout: mapping.layout.name, credits: [], invalid: [], skipped: 0, period: null };
  for (const row of rows.slice(mapping.headerAt + 1)) {
    const day = statementDate(row.cells[mapping.date] ?? '');
    if (day !== null) {
      const { from, to } = statement.period ?? { from: day, to: day };
      statement.period = { from: day < from ? day : from, to: day > to ? day : to };
    }
    const outcome = readRow(row, mapping);
    if (outcome === 'skip') statement.skipped++;
    else if ('bad' in outcome) statement.invalid.push(outcome.bad);
    else statement.credits.push(outcome.credit);
  }
  return statement;
}
