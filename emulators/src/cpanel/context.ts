// What every handler shares: the state, the knobs, the server's settings, and the error a
// handler throws to answer a failure in the API's own envelope (WHM `metadata.result` 0 with
// `reason`, UAPI `status` 0 with `errors`).

import type { CpanelFaultKnobs } from './faults.ts';
import type { CpanelState } from './state.ts';

export interface Settings {
  whmUser: string;
  whmToken: string;
  autosslDelayMs: number;
  minPasswordStrength: number;
  prefixSize: 8 | 16;
  ip: string;
  nameservers: string[];
  sessionTtlSeconds: number;
  hostname: string;
  version: string;
}

export interface Ctx {
  state: CpanelState;
  faults: CpanelFaultKnobs;
  settings: Settings;
  /** The emulator's base URL (filled in once it listens). */
  url: string;
  timers: Set<NodeJS.Timeout>;
  /** Persist the state. */
  changed(): void;
}

/** A failure answered in the API's envelope (HTTP 200). */
export class ApiError extends Error {
  /** UAPI: extra `data` with the failure (e.g. the domains acted on); WHM: `output.raw` (a string) or `data`. */
  readonly extra: unknown;

  constructor(message: string, extra: unknown = null) {
    super(message);
    this.extra = extra;
  }
}

/** `[list_and_quoted]` as cPanel's locale renders it. */
export function quotedList(items: readonly string[]): string {
  const quoted = items.map((i) => `“${i}”`);
  if (quoted.length <= 1) return quoted.join('');
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1)}`;
}

/** `Cpanel::Args::get_length_required`: every named argument present and non-empty, else the cPanel texts. */
export function required(values: Record<string, string | undefined>): string[] {
  const missing = Object.entries(values)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0) {
    throw new ApiError(`Provide the ${quotedList(missing)} ${missing.length === 1 ? 'argument' : 'arguments'}.`);
  }
  const empty = Object.entries(values)
    .filter(([, v]) => v === '')
    .map(([k]) => k);
  if (empty.length > 0) {
    throw new ApiError(`The ${quotedList(empty)} ${empty.length === 1 ? 'argument' : 'arguments'} cannot be empty.`);
  }
  return Object.values(values) as string[];
}

/** Unix seconds. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

export const DOMAIN_RE =
  /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.[a-z][a-z0-9-]{0,62}$/;
