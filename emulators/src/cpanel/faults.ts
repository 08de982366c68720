// The emulator's fault knobs: how a real cPanel & WHM server misbehaves (slow, dead, hanging,
// API subprocess crashes, an upgrade in progress, answers lost after the work was done,
// functions that fail), and the decisions they drive for each request.

export interface CpanelFaultKnobs {
  /** Delay before every API answer, in ms. */
  latencyMs: number;
  /** A dead server: API connections are reset without an answer (the control paths still work). */
  down: boolean;
  /** Accept API requests and never answer them. */
  hang: boolean;
  /** Fraction (0–1) of API calls answered HTTP 500 (the API subprocess crashed), without doing anything. */
  errorRate: number;
  /** Every API call answers HTTP 503, as cpsrvd does while cPanel & WHM is being upgraded. */
  upgrading: boolean;
  /** Do the work, then cut the connection. A whole number N: the next N calls; a fraction: that share. */
  loseResponses: number;
  /**
   * The next call of this route key (e.g. `GET /json-api/createacct`) or of this function
   * (`createacct`, `Mysql::create_database`) does its work and loses its answer.
   */
  loseNext: string | null;
  /**
   * The next N calls of a function answer failure (WHM `metadata.result` 0, UAPI `status` 0)
   * with a generic reason and do nothing. Keys: WHM function (`createacct`) or UAPI
   * `Module::function` (counts for `/execute` and for `uapi_cpanel` alike).
   */
  failNext: Record<string, number>;
  /** AutoSSL checks finish with a DCV problem per domain instead of issuing certificates. */
  autosslFails: boolean;
}

export const NO_FAULTS: Readonly<CpanelFaultKnobs> = Object.freeze({
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  upgrading: false,
  loseResponses: 0,
  loseNext: null,
  failNext: {},
  autosslFails: false,
});

/** A fresh copy of NO_FAULTS (failNext is an object and must not be shared). */
export function noFaults(): CpanelFaultKnobs {
  return { ...NO_FAULTS, failNext: {} };
}

import { parseKnobs } from '../shared/faults.ts';

const NUMBERS = ['latencyMs', 'errorRate', 'loseResponses'] as const;
const FLAGS = ['down', 'hang', 'upgrading', 'autosslFails'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<CpanelFaultKnobs> {
  return parseKnobs<CpanelFaultKnobs>(input, {
    numbers: NUMBERS,
    flags: FLAGS,
    other(key, value, out) {
      if (key !== 'failNext') return false;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new Error('failNext: an object of function → count');
      }
      const counts: Record<string, number> = {};
      for (const [fn, n] of Object.entries(value)) {
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`failNext.${fn}: a whole number`);
        counts[fn] = n;
      }
      out.failNext = counts;
      return true;
    },
  });
}

/** Whether this call (already done) loses its answer; `keys` are its route key and its function name. */
export { takeError, takeLoss } from '../shared/faults.ts';

/** Whether this call of `fn` must fail; consumes one. */
export function takeFailure(faults: CpanelFaultKnobs, fn: string): boolean {
  const left = faults.failNext[fn] ?? 0;
  if (left < 1) return false;
  if (left === 1) delete faults.failNext[fn];
  else faults.failNext[fn] = left - 1;
  return true;
}
