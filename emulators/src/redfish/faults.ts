// The emulator's fault knobs: how a real BMC misbehaves (slow, dead, hanging, 500s, a 503 with
// Retry-After while it is busy or resetting, answers lost after the work was done, sessions that
// expire, tasks that end in Exception, installs that fail or never finish, an OS that ignores
// ACPI), and the decisions they drive for each request. The common part is ../shared/faults.ts.

import { type CommonKnobs, parseKnobs } from '../shared/faults.ts';

export interface RedfishFaultKnobs extends CommonKnobs {
  /** Delay before every API answer, in ms. (common) */
  latencyMs: number;
  /** A dead BMC: API connections are reset without an answer (the control paths still work). (common) */
  down: boolean;
  /** Accept API requests and never answer them. (common) */
  hang: boolean;
  /** Fraction (0–1) of API calls answered HTTP 500 (Base GeneralError) without doing anything. (common) */
  errorRate: number;
  /** Do the work, then cut the connection. A whole number N: the next N calls; a fraction: that share. (common) */
  loseResponses: number;
  /**
   * The next call of this route key (`POST /redfish/v1/Systems/X/Actions/ComputerSystem.Reset`)
   * or action (`ComputerSystem.Reset`, `VirtualMedia.InsertMedia`, `VirtualMedia.EjectMedia`,
   * `Drive.SecureErase`, `PATCH ComputerSystem`, `Sessions`) does its work and loses its answer.
   */
  loseNext: string | null;
  /** The next N API requests answer 503 with Retry-After (a BMC busy with another client). */
  unavailable: number;
  /** Every API request answers 503 with Retry-After (the BMC is resetting itself). */
  resetting: boolean;
  /** The Retry-After (seconds) of those 503 answers (default 1). */
  retryAfterSeconds: number;
  /** The next N tasks (InsertMedia, SecureErase, …) end in TaskState Exception, having done nothing. */
  failTasks: number;
  /** Installs end in `failed` (the installer found no disk it liked). */
  installFails: boolean;
  /** Installs never finish: InstallState stays `installing`. */
  installHangs: boolean;
  /** The OS ignores GracefulShutdown / GracefulRestart (the BMC accepts them; the machine stays on). */
  ignoreAcpi: boolean;
  /** A session unused for longer than this (ms) expires; 0: sessions never expire. */
  sessionTimeoutMs: number;
}

export const NO_FAULTS: Readonly<RedfishFaultKnobs> = Object.freeze({
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  unavailable: 0,
  resetting: false,
  retryAfterSeconds: 1,
  failTasks: 0,
  installFails: false,
  installHangs: false,
  ignoreAcpi: false,
  sessionTimeoutMs: 0,
});

export function noFaults(): RedfishFaultKnobs {
  return { ...NO_FAULTS };
}

const NUMBERS = [
  'latencyMs',
  'errorRate',
  'loseResponses',
  'unavailable',
  'retryAfterSeconds',
  'failTasks',
  'sessionTimeoutMs',
] as const;
const FLAGS = ['down', 'hang', 'resetting', 'installFails', 'installHangs', 'ignoreAcpi'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<RedfishFaultKnobs> {
  return parseKnobs<RedfishFaultKnobs>(input, { numbers: NUMBERS, flags: FLAGS });
}

export { takeCount, takeError, takeLoss } from '../shared/faults.ts';
