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

import { parseKnobs, takeCount } from '../shared/faults.ts';

const NUMBERS = ['latencyMs', 'errorRate', 'loseResponses', 'failTasks'] as const;
const FLAGS = ['down', 'hang', 'ignoreAcpi'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<FaultKnobs> {
  return parseKnobs<FaultKnobs>(input, { numbers: NUMBERS, flags: FLAGS });
}

export { takeError, takeLoss } from '../shared/faults.ts';

/** Whether the task being started must fail; consumes one. */
export function takeTaskFailure(faults: FaultKnobs): boolean {
  return takeCount(faults, 'failTasks');
}
