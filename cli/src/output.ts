// Everything the CLI prints. Data goes to stdout, as a table for people or, with `-o json`, as
// JSON for scripts: the API's own objects, unchanged, so that the fields a script reads are the
// API's documented ones. Messages, progress and errors go to stderr. Colour only on a terminal,
// never with NO_COLOR (https://no-color.org) or TERM=dumb.
//
// Every string a server sends (names, descriptions, error messages) may hold characters a
// terminal acts on: an escape sequence can write the clipboard (OSC 52) or move the cursor, a
// carriage return or line feed can forge a row, a bidi override can reorder what is read. So
// each value is shown through `clean` (table cells and `fields` values always; messages through
// the `msg` template), which turns those characters into visible escapes such as `\x1b`; the
// CLI's own colours are added around the cleaned text (`Safe`). As a last guard, `write` and
// `note` escape whatever control character is left but the line feed and, on a colour
// terminal, the CLI's own colour codes. JSON output escapes them as \u sequences (same value).

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

/** Text the CLI put together itself: its own words and colours around values already cleaned. */
export class Safe {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/**
 * What a terminal may act on: C0 controls, DEL, C1 controls (U+0080–U+009F, e.g. the
 * one-character CSI U+009B) and the Unicode bidi embeddings, overrides and isolates.
 */
const TERMINAL_UNSAFE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
/** The last guard: one of our own colour codes (SGR; kept on a colour terminal), or any unsafe character but LF. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding ESC is the point
const GUARDED = /(\u001b\[[0-9;]*m)|(?!\n)[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
/** What JSON.stringify leaves raw inside strings (it escapes C0 itself): DEL, C1, bidi. */
const JSON_UNESCAPED = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(char: string): string {
  const short = SHORT_ESCAPES[char];
  if (short) return short;
  const code = char.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A value as one line a terminal only displays: every control or bidi character (line breaks too) as a visible escape. */
export function clean(value: unknown): string {
  if (value instanceof Safe) return value.text;
  return String(value).replace(TERMINAL_UNSAFE, visibleEscape);
}

/** A message whose every interpolated value is cleaned (a Safe value is kept as it is). */
export function msg(strings: TemplateStringsArray, ...values: unknown[]): Safe {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += clean(value) + (strings[i + 1] ?? '');
  });
  return new Safe(text);
}

/** A colour (of `out` or `err`) around a value, cleaned first. */
export function paint(colour: (text: string) => string, value: unknown): Safe {
  return new Safe(colour(clean(value)));
}

/** What reaches the stream: line feeds stay, our colour codes stay where colour is on, nothing else a terminal acts on. */
export function guard(text: string, colour: boolean): string {
  return text.replace(GUARDED, (match, sgr: string | undefined) =>
    sgr !== undefined ? (colour ? sgr : `\\x1b${sgr.slice(1)}`) : visibleEscape(match),
  );
}

/** JSON text with DEL, C1 and bidi characters as \u escapes: the same value, inert on a terminal. */
export function jsonSafe(text: string): string {
  return text.replace(JSON_UNESCAPED, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const colourOut = colourFor(process.stdout);
const colourErr = colourFor(process.stderr);

export function write(text: string | Safe): void {
  const line = guard(String(text), colourOut);
  process.stdout.write(line.endsWith('\n') ? line : `${line}\n`);
}

/** A message for the person (stderr, so stdout stays the data). */
export function note(text: string | Safe): void {
  process.stderr.write(`${guard(String(text), colourErr)}\n`);
}

export function json(data: unknown): void {
  write(jsonSafe(JSON.stringify(data, null, 2)));
}

export type Cell = string | number | boolean | null | undefined | Safe;

function cell(value: Cell): string {
  if (value === null || value === undefined) return '-';
  return clean(value);
}

/** Columns separated by two spaces, a bold header, no borders: easy to read and to grep. */
export function table(head: string[], rows: Cell[][]): Safe {
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
  return new Safe(t.toString().replace(/[ \t]+$/gm, ''));
}

/** One object as `name  value` lines. */
export function fields(pairs: [string, Cell][]): Safe {
  const width = Math.max(...pairs.map(([name]) => name.length));
  return new Safe(pairs.map(([name, value]) => `${out.bold(name.padEnd(width))}  ${cell(value)}`).join('\n'));
}

/** A status or power state, coloured by what it means. */
export function state(value: string | null | undefined): Safe {
  if (!value) return new Safe('-');
  if (['active', 'running', 'succeeded', 'paid'].includes(value)) return paint(out.green, value);
  if (['failed', 'terminated', 'suspended', 'unpaid'].includes(value)) return paint(out.red, value);
  if (['stopped', 'cancelled', 'refunded'].includes(value)) return paint(out.dim, value);
  return paint(out.yellow, value);
}

export function rupees(amount: string): string {
  return `₹${amount}`;
}
