// The shape of a staff command. Commands call core services, never SQL of their own; each
// returns both a human rendering and a JSON document (printed with --json).

import type { Deps } from '../core/deps.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
}

export interface CommandInput {
  args: string[];
  options: Record<string, string | boolean | undefined>;
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
