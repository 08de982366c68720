// Everything the CLI prints. Data goes to stdout, as a table for people or, with `-o json`, as
// JSON for scripts: the API's own objects, unchanged, so that the fields a script reads are the
// API's documented ones. Messages, progress and errors go to stderr. Colour only on a terminal,
// never with NO_COLOR (https://no-color.org) or TERM=dumb.

import Table from 'cli-table3';
import pc from 'picocolors';

export type Format = 'table' | 'json';

function colourFor(stream: NodeJS.WriteStream): boolean {
  const env = process.env;
  if ('NO_COLOR' in env && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

export const out = pc.createColors(colourFor(process.stdout));
export const err = pc.createColors(colourFor(process.stderr));

export function write(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** A message for the person (stderr, so stdout stays the data). */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

export function json(data: unknown): void {
  write(JSON.stringify(data, null, 2));
}

type Cell = string | number | boolean | null | undefined;

function cell(value: Cell): string {
  if (value === null || value === undefined) return '-';
  return String(value);
}

/** Columns separated by two spaces, a bold header, no borders: easy to read and to grep. */
export function table(head: string[], rows: Cell[][]): string {
  const t = new Table({
    head: head.map((h) => out.bold(h)),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const row of rows) t.push(row.map(cell));
  return t.toString().replace(/[ \t]+$/gm, '');
}

/** One object as `name  value` lines. */
export function fields(pairs: [string, Cell][]): string {
  const width = Math.max(...pairs.map(([name]) => name.length));
  return pairs.map(([name, value]) => `${out.bold(name.padEnd(width))}  ${cell(value)}`).join('\n');
}

/** A status or power state, coloured by what it means. */
export function state(value: string | null | undefined): string {
  if (!value) return '-';
  if (['active', 'running', 'succeeded', 'paid'].includes(value)) return out.green(value);
  if (['failed', 'terminated', 'suspended', 'unpaid'].includes(value)) return out.red(value);
  if (['stopped', 'cancelled', 'refunded'].includes(value)) return out.dim(value);
  return out.yellow(value);
}

export function rupees(amount: string): string {
  return `₹${amount}`;
}
