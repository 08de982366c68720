// The emulator's fault knobs: how a real node misbehaves (slow, dead, hanging, failing, losing
// answers after doing the work, failing tasks, guests that ignore ACPI), and the decisions
// they drive for each request.

export interface FaultKnobs {
  /** Delay before every API answer, in ms. */
  latencyMs: number;
  /** A dead node: API connections are reset without an answer (the control paths still work). */
  down: boolean;
  /** Accept API requests and never answer them. */
  hang: boolean;
  /** Fraction (0–1) of API calls answered `500 internal error` without doing anything. */
  errorRate: number;
  /**
   * Do the work, then cut the connection before the answer. A whole number N: the next N API
   * calls; a fraction strictly between 0 and 1: that share of calls.
   */
  loseResponses: number;
  /** The next call of this route (e.g. `POST /nodes/:/qemu/:/clone`) does its work and loses its answer. */
  loseNext: string | null;
  /** The next N tasks end with an error exit status (a failed clone leaves no VM behind, as PVE's). */
  failTasks: number;
  /** Guests ignore ACPI: shutdown and reboot tasks wait their `timeout`, then force or fail. */
  ignoreAcpi: boolean;
}

export const NO_FAULTS: Readonly<FaultKnobs> = Object.freeze({
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  failTasks: 0,
  ignoreAcpi: false,
});

const NUMBERS = ['latencyMs', 'errorRate', 'loseResponses', 'failTasks'] as const;
const FLAGS = ['down', 'hang', 'ignoreAcpi'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<FaultKnobs> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new Error('expected a JSON object');
  const out: Partial<FaultKnobs> = {};
  for (const [key, value] of Object.entries(input)) {
    if ((NUMBERS as readonly string[]).includes(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`${key}: a number >= 0`);
      if (key === 'errorRate' && value > 1) throw new Error('errorRate: between 0 and 1');
      out[key as (typeof NUMBERS)[number]] = value;
    } else if ((FLAGS as readonly string[]).includes(key)) {
      if (typeof value !== 'boolean') throw new Error(`${key}: true or false`);
      out[key as (typeof FLAGS)[number]] = value;
    } else if (key === 'loseNext') {
      if (value !== null && typeof value !== 'string') throw new Error('loseNext: a route key or null');
      out.loseNext = value;
    } else {
      throw new Error(`unknown fault knob ${key}`);
    }
  }
  return out;
}

/** Whether this call answers 500 without doing anything. */
export function takeError(faults: FaultKnobs): boolean {
  return faults.errorRate > 0 && Math.random() < faults.errorRate;
}

/** Whether this call (already done) loses its answer; consumes a count or a `loseNext`. */
export function takeLoss(faults: FaultKnobs, routeKey: string): boolean {
  if (faults.loseNext !== null && faults.loseNext === routeKey) {
    faults.loseNext = null;
    return true;
  }
  const lose = faults.loseResponses;
  if (lose > 0 && lose < 1) return Math.random() < lose;
  if (lose >= 1) {
    faults.loseResponses = Math.floor(lose) - 1;
    return true;
  }
  return false;
}

/** Whether the task being started must fail; consumes one. */
export function takeTaskFailure(faults: FaultKnobs): boolean {
  if (faults.failTasks < 1) return false;
  faults.failTasks = Math.floor(faults.failTasks) - 1;
  return true;
}
