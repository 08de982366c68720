// Per-node call budgets (security review 3, T3-M5). Every customer of a node shares one panel key
// (Pterodactyl throttles its client API per calling user, 720 calls a minute by default; WHM and
// the BMCs have no throttle but each call is work on a shared machine), so one account must not be
// able to spend the node's allowance for everyone. Each node has a token bucket in this process,
// in front of every HTTP call of its driver (http.ts takes a token before it sends).
//
// Who is asking decides what happens when the bucket is empty:
// - a customer's request (its action runs in `onBehalfOfClient`) may only take tokens above a
//   reserve kept for background work, waits at most CLIENT_WAIT_MS for one, and is otherwise
//   refused at once (the surface answers 429 rate_limited with Retry-After);
// - everything else (provisioning, billing, list probes) waits for its token, at most
//   BACKGROUND_WAIT_MS (then a retryable UpstreamError, so a job tries again later). Customers
//   can never drive the bucket below the reserve, so jobs are not starved by them.
// A customer's action that was let in takes its further calls like background work: an action
// is never refused half-way through.

import { AsyncLocalStorage } from 'node:async_hooks';
import { UpstreamError } from './errors.ts';

/** A node's allowance: calls a minute on average, and how many may go at once after a quiet spell. */
export interface BudgetSpec {
  perMinute: number;
  burst: number;
}

/** Below Pterodactyl's default 720 a minute for the one panel user all customers share. */
export const DEFAULT_NODE_BUDGET: BudgetSpec = { perMinute: 600, burst: 60 };
/** The longest a customer's request waits for a token before it is refused. */
export const CLIENT_WAIT_MS = 1_000;
/** The longest background work (jobs) waits for a token before its call fails (retryably). */
export const BACKGROUND_WAIT_MS = 60_000;
/** The share of the burst customers cannot take: background work always finds these. */
export const RESERVE_SHARE = 0.2;

export type Caller = 'client' | 'background';

/** What `reserve` answers: wait this long, then send; or refused, with when a token would be there. */
export type Reservation = { waitMs: number } | { refusedForMs: number };

/**
 * A token bucket with reservations: a taker is given the next token even if it is not there yet
 * (the level goes below zero) and waits until it would be, so takers are served in order and no
 * timer or queue is needed. `now` is injectable (tests move it).
 */
export class TokenBucket {
  readonly spec: BudgetSpec;
  /** Tokens a customer may not take. */
  readonly reserve: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #level: number;
  #at: number;

  constructor(spec: BudgetSpec, now: () => number = Date.now) {
    this.spec = spec;
    this.#perMs = spec.perMinute / 60_000;
    this.reserve = Math.min(spec.burst - 1, Math.floor(spec.burst * RESERVE_SHARE));
    this.#now = now;
    this.#level = spec.burst;
    this.#at = now();
  }

  /** Tokens there now (below zero: promised to takers still waiting). */
  level(): number {
    const now = this.#now();
    this.#level = Math.min(this.spec.burst, this.#level + (now - this.#at) * this.#perMs);
    this.#at = now;
    return this.#level;
  }

  /**
   * Take one token for `caller` if it would be there within `maxWaitMs`: a customer only above the
   * reserve, background work down to zero. A refused caller takes nothing.
   */
  take(caller: Caller, maxWaitMs: number): Reservation {
    const floor = caller === 'client' ? this.reserve : 0;
    const missing = floor + 1 - this.level();
    const waitMs = missing <= 0 ? 0 : Math.ceil(missing / this.#perMs);
    if (waitMs > maxWaitMs) return { refusedForMs: waitMs };
    this.#level -= 1;
    return { waitMs };
  }
}

/** A customer's request in progress: whether it was let in, and the refusal it met. */
interface ClientScope {
  admitted: boolean;
  refusedForSeconds: number | null;
  /** The action has answered: work it started that outlives it (a shared probe) is background work. */
  over: boolean;
}

const clients = new AsyncLocalStorage<ClientScope>();

/**
 * Run a customer's action: its node calls take tokens as a customer's. When one was refused for
 * the node's budget, whatever the action made of that error becomes `refused(seconds)` (the
 * caller's 429), so every product answers the same way.
 */
export async function onBehalfOfClient<T>(work: () => Promise<T>, refused: (retryAfterSeconds: number) => Error) {
  const scope: ClientScope = { admitted: false, refusedForSeconds: null, over: false };
  try {
    return await clients.run(scope, work);
  } catch (error) {
    if (scope.refusedForSeconds !== null) throw refused(scope.refusedForSeconds);
    throw error;
  } finally {
    scope.over = true;
  }
}

export interface NodeBudgets {
  /** Give the node `name` this allowance (a changed one starts a full bucket). */
  configure(name: string, spec: BudgetSpec): void;
  /** The bucket of a node, if it has one. */
  bucket(name: string): TokenBucket | undefined;
  /**
   * Wait for a token of the node `name` (a node without a budget passes at once). Throws an
   * UpstreamError `rate_limited` when the caller may not wait that long.
   */
  take(name: string): Promise<void>;
}

export function createNodeBudgets(
  options: { now?: () => number; sleep?: (ms: number) => Promise<void> } = {},
): NodeBudgets {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const buckets = new Map<string, TokenBucket>();
  return {
    configure(name, spec) {
      const found = buckets.get(name);
      if (found && found.spec.perMinute === spec.perMinute && found.spec.burst === spec.burst) return;
      buckets.set(name, new TokenBucket(spec, now));
    },
    bucket: (name) => buckets.get(name),
    async take(name) {
      const bucket = buckets.get(name);
      if (bucket === undefined) return;
      const found = clients.getStore();
      const scope = found?.over === false ? found : undefined;
      const client = scope !== undefined && !scope.admitted;
      const got = bucket.take(client ? 'client' : 'background', client ? CLIENT_WAIT_MS : BACKGROUND_WAIT_MS);
      if ('refusedForMs' in got) {
        const seconds = Math.max(1, Math.ceil(got.refusedForMs / 1000));
        if (scope !== undefined) scope.refusedForSeconds = seconds;
        throw new UpstreamError('rate_limited', `${name}: this process's call budget for the node is spent for now`, {
          retryAfterSeconds: seconds,
          detail: 'The panel of this service is busy; try again shortly.',
          reason: 'node_budget',
        });
      }
      if (scope !== undefined) scope.admitted = true;
      if (got.waitMs > 0) await sleep(got.waitMs);
    },
  };
}

/** The budgets of this process's nodes, by node name: every driver's HTTP client takes from them. */
export const nodeBudgets: NodeBudgets = createNodeBudgets();

/**
 * A node's allowance from its settings (`rate_per_minute`, `rate_burst`: positive numbers), else
 * `fallback`. A value that is not a positive number is ignored.
 */
export function budgetOf(settings: unknown, fallback: BudgetSpec = DEFAULT_NODE_BUDGET): BudgetSpec {
  const raw = (typeof settings === 'object' && settings !== null ? settings : {}) as Record<string, unknown>;
  const positive = (value: unknown): number | null => {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : null;
  };
  const rate = positive(raw.rate_per_minute);
  const perMinute = rate ?? fallback.perMinute;
  // A burst of at least one call; with a rate of the node's own, a tenth of its minute by default.
  const burst = Math.max(1, Math.floor(positive(raw.rate_burst) ?? (rate === null ? fallback.burst : perMinute / 10)));
  return { perMinute, burst };
}
