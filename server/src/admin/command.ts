// The shape of a staff command. Commands call core services, never SQL of their own; each
// returns both a human rendering and a JSON document (printed with --json).

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Deps } from '../core/deps.ts';
import type { Database } from '../db/database.ts';

/** Where a command reads what an option takes from standard input or a file (./inputs.ts). */
export interface InputReader {
  /** The whole standard input of the CLI process, as UTF-8. */
  stdin(): Promise<string>;
  /** A whole file holding a secret; refused when users other than its owner may read or write it. */
  secretFile(path: string): Promise<string>;
  /** A whole file that is no secret (a bank statement), up to MAX_FILE_BYTES; any mode. */
  file(path: string): Promise<string>;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** The command refuses to run without it (a usage error, exit 2); help shows it unbracketed. */
  required?: boolean;
}

export interface CommandInput {
  args: string[];
  options: Record<string, string | boolean | undefined>;
  /** Who runs the command (`staff:<os user>`), recorded on decisions such as deposit approvals. */
  actor: string;
  /** Standard input and secret files, read by the CLI process (see inputs.ts). */
  inputs: InputReader;
}

/** A file a command hands back for the CLI process to write (where the staff member runs it). */
export type OutputFile = {
  /** As given on the command line: relative paths are relative to the CLI's working directory. */
  path: string;
  /** Refuse to replace a file that exists (a backup): the command fails instead. */
  exclusive?: boolean;
} & (
  | { data: Buffer }
  | {
      /**
       * A file the command wrote under DATA_DIR/backup-tmp (too large to travel as bytes: a
       * backup), which the CLI moves to `path` (and removes if it cannot).
       */
      tempPath: string;
    }
);

export interface CommandOutput {
  text: string;
  json: unknown;
  /**
   * Files to write, such as an invoice's PDF. Written by the CLI process, never by the command:
   * inside a server (through the admin socket) the server's working directory is not the staff
   * member's, so the bytes travel back with the result (see outputs.ts).
   */
  files?: OutputFile[];
}

/**
 * What a command on the installation itself runs on instead of Deps (`backup`): the
 * configuration and the database, opened bare (neither migrated nor serving: no queue, no
 * workers). Inside a server (through the admin socket) they are the server's own.
 */
export interface BareContext {
  config: Config;
  /** True inside a running server (through the admin socket); false in the CLI's own process. */
  inServer: boolean;
  /** The configured database; in the CLI opened on first call (an embedded one is locked meanwhile). */
  database(): Promise<Database>;
  logger: Logger;
}

export interface Command {
  noun: string;
  /** Empty: the noun is the command by itself (`search QUERY`). */
  verb: string;
  summary: string;
  /** Positional arguments, e.g. `EMAIL AMOUNT`; their count is checked against this. */
  args?: string[];
  /** Trailing positionals that may be left out. */
  optionalArgs?: string[];
  options?: Record<string, OptionSpec>;
  /** More text for the command's own --help (formats it reads, examples), after its options. */
  details?: string;
  /** The command, on the services (every command but `backup`). */
  run?(deps: Deps, input: CommandInput): Promise<CommandOutput>;
  /** Instead of `run`: the command on the bare installation (see BareContext). */
  runBare?(context: BareContext, input: CommandInput): Promise<CommandOutput>;
  /** Runs in the CLI's own process only, never through a server's admin socket (`backup restore`). */
  cliOnly?: boolean;
  /**
   * Read what `run` will read from standard input or files, without running: the CLI calls it
   * before sending a command over the admin socket, so the server gets the same text.
   */
  readInputs?(options: CommandInput['options'], inputs: InputReader, args: string[]): Promise<void>;
}

/** A refused operation with a code of its own, outside the API's error catalogue (exit 1). */
export class CommandError extends Error {
  override name = 'CommandError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Wrong use of the CLI itself (exit 2), as opposed to a refused operation (exit 1). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Render rows as an aligned plain-text table. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((c) => formatCell(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

/**
 * Every character a terminal may act on: C0 controls, DEL, C1 controls (U+0080–U+009F, e.g. the
 * one-character CSI U+009B) and the Unicode bidi embeddings, overrides and isolates.
 */
const TERMINAL_UNSAFE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
/** The same, less the line feed: what may not reach the terminal even between lines. */
const TERMINAL_UNSAFE_BUT_LF = /(?!\n)[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;
/** What JSON.stringify leaves raw inside strings (it escapes C0 itself); never structural JSON. */
const JSON_UNESCAPED = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(char: string): string {
  const short = SHORT_ESCAPES[char];
  if (short) return short;
  const code = char.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * One value as a single line of text a terminal only displays: every control character
 * (line breaks included, so a value cannot forge a row) becomes a visible escape such as `\x1b`.
 * For text that came from clients, nodes or anyone else: names, notes, reasons, job details.
 */
export function clean(value: unknown): string {
  return formatCell(value);
}

/**
 * The last guard, applied by runAdmin to every text the CLI prints (stdout and stderr): line
 * breaks stay, every other control character becomes a visible escape. Values inside a line go
 * through `clean` (via `table` or `keyValues`) first, so they cannot add lines either.
 */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_UNSAFE_BUT_LF, visibleEscape);
}

/** JSON text with the characters JSON.stringify leaves raw (DEL, C1, bidi) as \u escapes: same value. */
export function jsonSafe(text: string): string {
  return text.replace(JSON_UNESCAPED, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `key   value` lines, as `show` commands print them; every value goes through `clean`. */
export function keyValues(entries: Record<string, unknown>, width = 12): string {
  return Object.entries(entries)
    .map(([k, v]) => `${k.padEnd(width)} ${clean(v)}`)
    .join('\n');
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (value instanceof Date) return value.toISOString();
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(TERMINAL_UNSAFE, visibleEscape);
}

/** A positive whole-number id argument. */
export function idArg(raw: string | undefined, name = 'ID'): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`${name} must be a positive number`);
  return Number(raw);
}

/** A JSON object option (e.g. --specs '{"vcpu":2}'). */
export function jsonOption(raw: string | boolean | undefined, name: string): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(String(raw));
  } catch {
    throw new UsageError(`--${name} must be JSON, e.g. --${name} '{"key":"value"}'`);
  }
}

export function requiredOption(options: Record<string, string | boolean | undefined>, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}
