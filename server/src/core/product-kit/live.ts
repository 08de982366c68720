// Live state of a running service, never stored. A detail read (status, graph, console) asks
// the node on every request; the service layer (core/services/service-actions.ts) checks
// ownership, state and rate limits and then asks the product, which knows how to reach what runs
// the service. Lists read power and utilisation from one probe per node (NodeProbes below),
// shared by every request that asks within an interval, so a list costs the node nothing more
// however often it is polled and never counts against the per-account live-read allowance.

import type { Kysely } from 'kysely';
import type { DB, NodeRow, Service } from '../../db/tables.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import { UpstreamError } from '../../upstreams/errors.ts';
import {
  type MetricPoint,
  type PowerState,
  TIMEFRAMES,
  type Timeframe,
  type VmStatus,
} from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { Drivers } from '../services/drivers.ts';
import { systemClock } from '../time.ts';

export interface LiveEnv {
  db: Kysely<DB>;
  drivers: Drivers;
  bus: Bus;
  /** The process clock (how old a cached probe is; tests move it). */
  clock: () => Date;
}

/** What can be asked of one running service. Every call may throw UpstreamError. */
export interface LiveTarget {
  status(): Promise<VmStatus>;
  metrics(timeframe: Timeframe): Promise<MetricPoint[]>;
  console(kind: 'vnc' | 'serial'): Promise<UpstreamConsoleTicket>;
}

/** How much of its resources a running service uses, as its node last said. */
export interface Utilisation {
  /** Fraction of its CPUs in use, 0–1; null when the node does not say. */
  cpu: number | null;
  cpus: number;
  /** Null when the node does not say. */
  memoryBytes: number | null;
  memoryTotalBytes: number;
}

/**
 * Why a list shows no utilisation: the service runs nothing now (`not_running`), its node did not
 * answer and nothing recent enough is cached (`node_unreachable`), the node does not know the
 * machine any more (`not_found`), or what runs it does not report it (`not_reported`: a BMC does
 * not see the operating system; a product without live state).
 */
export type UtilisationGap = 'not_running' | 'node_unreachable' | 'not_found' | 'not_reported';

/** What a list shows of one service: its power and utilisation, from one probe of its node. */
export interface LiveState {
  /** Null: nothing to show (no machine yet, or gone); `unknown`: the node did not answer. */
  power: PowerState | null;
  utilisation: Utilisation | null;
  /** Why `utilisation` is null (null when it is not). */
  gap: UtilisationGap | null;
  /** When the node said it: seconds old when fresh, older when the node was slow; null when not asked. */
  measuredAt: Date | null;
}

export interface ProductLive {
  /** The service's live handle; 409 (no_vm) when it has nothing running to ask. */
  target(service: Service, node: NodeRow | null): LiveTarget;
  /** Power of many services (null: none to show; `unknown`: the node did not answer in time). */
  powerStates(services: Service[], nodes: NodeRow[]): Promise<Map<number, PowerState | null>>;
  /**
   * Power and utilisation of many services from the same per-node probe as `powerStates`. A
   * product without it shows power only (utilisation null, `not_reported`).
   */
  states?(services: Service[], nodes: NodeRow[]): Promise<Map<number, LiveState>>;
}

/** Built once per process (caches, subscriptions) from what the core wires. */
export type ProductLiveFactory = (env: LiveEnv) => ProductLive;

/** How long a live read may take before the answer is `unknown` (lists) or 503 (detail). */
export const PROBE_TIMEOUT_MS = 2_500;

export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UpstreamError('timeout', `no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fresh: a list serves a node's probe this long without asking the node again. */
export const PROBE_FRESH_MS = 3_000;
/** Once a probe is older than fresh, a list waits this long for the new one before serving the old one. */
export const PROBE_STALE_WAIT_MS = 250;
/** A probe older than this is never served: the node is shown as not answering. */
export const PROBE_STALE_MAX_MS = 60_000;

/** What a probe gave: its answer and when, or why there is none. */
export type ProbeRead<T> = { ok: true; value: T; at: number } | { ok: false; error: unknown };

/** Probes kept by key: a node (its listing of every VM), a machine's BMC, one game server. */
export interface Probes<K, A, T> {
  /** The latest answer for `key` under the rules of `probes`; `subject` is what the probe asks. Never throws. */
  read(key: K, subject: A): Promise<ProbeRead<T>>;
  /** Forget what was said for `key` (or every key): the next read asks again and waits for it. */
  forget(key?: K): void;
}

export interface NodeProbes<T> {
  /** The node's latest answer under the rules of `probes`. Never throws. */
  read(node: NodeRow): Promise<ProbeRead<T>>;
  /** Forget what a node (or every node) said: the next read asks it again and waits for it. */
  forget(nodeId?: number): void;
}

/** A key nobody read for this long (and with no probe under way) is dropped from memory. */
const PROBE_SWEEP_MS = 2 * PROBE_STALE_MAX_MS;

/**
 * One probe per key per interval, however many requests ask:
 * - an answer younger than PROBE_FRESH_MS is served as it is; nothing is asked;
 * - older, one probe is started (concurrent readers share it) and a reader waits for it; but when
 *   the upstream is slow and an answer younger than PROBE_STALE_MAX_MS is cached, a reader waits
 *   only PROBE_STALE_WAIT_MS and then gets that older answer with its time, rather than a slow
 *   answer (the probe goes on and fills the cache when it ends);
 * - a probe that fails is not retried for PROBE_FRESH_MS either: readers meanwhile get its error,
 *   or the cached answer when the failure was only slowness (a timeout). An upstream that refuses
 *   or resets drops what was cached: its old answer is not vouched for any more.
 * `forget` drops a key's answer and any probe under way (a job changed something there).
 * The key is what one probe answers for: a node for a listing of all its machines (nodeProbes),
 * one server where the upstream has no such listing (game servers: the panel's client API reads
 * one server's resources at a time).
 */
export function probes<K, A, T>(probe: (subject: A) => Promise<T>, clock: () => Date): Probes<K, A, T> {
  interface Entry {
    /** Bumped by `forget`: a probe started before answers nobody. */
    generation: number;
    good: { value: T; at: number } | null;
    failed: { error: unknown; at: number } | null;
    running: Promise<void> | null;
    /** When it was last read (process clock), for the sweep. */
    readAt: number;
  }
  const entries = new Map<K, Entry>();
  // Read per listed service per request: the system clock without a Date each time.
  const now = clock === systemClock ? Date.now : () => clock().getTime();
  const slow = (error: unknown) => error instanceof UpstreamError && error.kind === 'timeout';
  let sweptAt = 0;

  /** Keys gone from every list (a terminated service) must not stay in memory for the process's life. */
  function sweep(t: number): void {
    if (t - sweptAt < PROBE_SWEEP_MS) return;
    sweptAt = t;
    for (const [key, entry] of entries) if (!entry.running && t - entry.readAt > PROBE_SWEEP_MS) entries.delete(key);
  }

  function entryOf(key: K): Entry {
    let entry = entries.get(key);
    if (!entry) {
      entry = { generation: 0, good: null, failed: null, running: null, readAt: 0 };
      entries.set(key, entry);
    }
    return entry;
  }

  function start(subject: A, entry: Entry): Promise<void> {
    const generation = entry.generation;
    const running = withTimeout(
      Promise.resolve().then(() => probe(subject)),
      PROBE_TIMEOUT_MS,
    ).then(
      (value) => {
        if (entry.generation !== generation) return;
        entry.good = { value, at: now() };
        entry.failed = null;
      },
      (error: unknown) => {
        if (entry.generation !== generation) return;
        entry.failed = { error, at: now() };
        if (!slow(error)) entry.good = null;
      },
    );
    entry.running = running;
    void running.finally(() => {
      if (entry.running === running) entry.running = null;
    });
    return running;
  }

  function answer(entry: Entry): ProbeRead<T> {
    const { good, failed } = entry;
    if (good && now() - good.at < PROBE_STALE_MAX_MS) return { ok: true, value: good.value, at: good.at };
    return { ok: false, error: failed?.error ?? new UpstreamError('timeout', 'no answer yet') };
  }

  return {
    async read(key, subject) {
      let t = now();
      sweep(t);
      const entry = entryOf(key);
      // A second round only when `forget` ran while this reader waited: what it waited for answers nobody.
      for (let round = 0; ; round++) {
        const generation = entry.generation;
        if (round > 0) t = now();
        entry.readAt = t;
        const { good, failed } = entry;
        if (good && t - good.at < PROBE_FRESH_MS) return { ok: true, value: good.value, at: good.at };
        if (!entry.running && failed && t - failed.at < PROBE_FRESH_MS) return answer(entry);
        const running = entry.running ?? start(subject, entry);
        if (good && t - good.at < PROBE_STALE_MAX_MS) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            running,
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, PROBE_STALE_WAIT_MS);
            }),
          ]);
          clearTimeout(timer);
        } else {
          await running;
        }
        if (entry.generation === generation || round > 0) return answer(entry);
      }
    },

    forget(key) {
      for (const [k, entry] of entries) {
        if (key !== undefined && k !== key) continue;
        entry.generation++;
        entry.good = null;
        entry.failed = null;
        entry.running = null;
      }
    },
  };
}

/** `probes` keyed by node: one probe of a node answers for every service on it (VPS listings, a BMC). */
export function nodeProbes<T>(probe: (node: NodeRow) => Promise<T>, clock: () => Date): NodeProbes<T> {
  const byNode = probes<number, NodeRow, T>(probe, clock);
  return { read: (node) => byNode.read(node.id, node), forget: (nodeId) => byNode.forget(nodeId) };
}

/**
 * Drop what is cached about a service when a job on it settles (the bus's `service` message,
 * core/services/service-jobs.ts finishJob), in every process, and everything on `all` (messages may
 * have been missed): a list never shows the state from before an action. `keyOf` names the key
 * a service's answer is kept under; undefined (a service this process never listed: it may be
 * new on a node whose listing is cached) drops every key.
 */
export function forgetOnSettle<K>(
  bus: Bus,
  cache: { forget(key?: K): void },
  keyOf: (serviceId: number) => K | undefined,
): void {
  bus.subscribe((message) => {
    if (message.topic === 'all') cache.forget();
    else if (message.topic === 'service') cache.forget(keyOf(message.id));
  });
}

/** A listed service's state from one probe's answer: its utilisation while it runs, else why there is none. */
export function listedState(power: PowerState, measuredAt: Date, utilisation: Utilisation): LiveState {
  return power === 'running'
    ? { power, utilisation, gap: null, measuredAt }
    : { power, utilisation: null, gap: 'not_running', measuredAt };
}

/** `stateOf` of every service of a list, asked concurrently (the probes share what they can). */
export async function statesOf(
  list: Service[],
  stateOf: (service: Service) => Promise<LiveState>,
): Promise<Map<number, LiveState>> {
  const out = new Map<number, LiveState>();
  await Promise.all(list.map(async (service) => out.set(service.id, await stateOf(service))));
  return out;
}

/** The answer when the node does not answer a live read in time: 503, try again shortly. */
export function unreachable(error: unknown): AppError {
  return new AppError('node_unreachable', {
    retryAfter: 10,
    cause: error,
    message: 'The server node did not answer; try again shortly.',
  });
}

/** The graph actions' parameter check (every product): a known timeframe, else 422 bad_timeframe. */
export async function checkTimeframe(
  _ctx: unknown,
  params: Record<string, unknown>,
): Promise<{ timeframe: Timeframe }> {
  if (typeof params.timeframe !== 'string' || !(TIMEFRAMES as readonly string[]).includes(params.timeframe)) {
    throw new AppError('bad_timeframe', {
      message: `Timeframes are ${TIMEFRAMES.join(', ')}.`,
      fields: { timeframe: `must be one of ${TIMEFRAMES.join(', ')}` },
    });
  }
  return { timeframe: params.timeframe as Timeframe };
}
