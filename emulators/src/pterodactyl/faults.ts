// The emulator's fault knobs: how a real panel and its node misbehave (slow, dead, hanging,
// failing, losing answers after doing the work, rate limiting, refusing, Wings unreachable,
// failing installs), and the decisions they drive for each request.

export interface PteroFaultKnobs {
  /** Delay before every API answer (panel and Wings), in ms. */
  latencyMs: number;
  /** A dead panel: API connections are reset without an answer (the control paths still work). */
  down: boolean;
  /** Accept API requests and never answer them. */
  hang: boolean;
  /** Fraction (0–1) of API calls answered 500 with the panel's unexpected-error body, without doing anything. */
  errorRate: number;
  /** Do the work, then cut the connection. A whole number N: the next N calls; a fraction: that share. */
  loseResponses: number;
  /** The next call of this route key (e.g. `POST /api/application/servers`) does its work and loses its answer. */
  loseNext: string | null;
  /** The next N API calls answer 429 ThrottleRequestsException (Retry-After: 2). */
  rateLimitNext: number;
  /** The next N client API calls answer 403 "This action is unauthorized.". */
  forbidNext: number;
  /** Wings is unreachable: client calls that need it answer 504 DaemonConnectionException, its listener resets. */
  wingsDown: boolean;
  /** The next N installs (new servers and reinstalls) end `install_failed` / `reinstall_failed`. */
  failInstalls: number;
}

export const NO_FAULTS: Readonly<PteroFaultKnobs> = Object.freeze({
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  rateLimitNext: 0,
  forbidNext: 0,
  wingsDown: false,
  failInstalls: 0,
});

import { parseKnobs, takeCount as sharedTakeCount } from '../shared/faults.ts';

const NUMBERS = ['latencyMs', 'errorRate', 'loseResponses', 'rateLimitNext', 'forbidNext', 'failInstalls'] as const;
const FLAGS = ['down', 'hang', 'wingsDown'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<PteroFaultKnobs> {
  return parseKnobs<PteroFaultKnobs>(input, { numbers: NUMBERS, flags: FLAGS });
}

export { takeError, takeLoss } from '../shared/faults.ts';

/** Consume one of a counted knob; true when it fired. */
export function takeCount(faults: PteroFaultKnobs, knob: 'rateLimitNext' | 'forbidNext' | 'failInstalls'): boolean {
  return sharedTakeCount(faults, knob);
}
