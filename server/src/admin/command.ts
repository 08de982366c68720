// The shape of a staff command. Commands call core services, never SQL of their own; each
// returns both a human rendering and a JSON document (printed with --json).

import type { Deps } from '../core/deps.ts';

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
}

export interface CommandOutput {
  text: string;
  json: unknown;
}

export interface Command {
  noun: string;
  verb: string;
  summary: string;
  /** Positional arguments, e.g. `EMAIL AMOUNT`; their count is checked against this. */
  args?: string[];
  /** Trailing positionals that may be left out. */
  optionalArgs?: string[];
  options?: Record<string, OptionSpec>;
  run(deps: Deps, input: CommandInput): Promise<CommandOutput>;
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

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
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
