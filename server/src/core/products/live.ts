// Live state of a running service, never stored. A detail read (status, graph, console) asks
// the node on every request; the service layer (core/services/service-actions.ts) checks
// ownership, state and rate limits and then asks the product, which knows how to reach what runs
// the service. Lists read power and utilisation from one probe per node (NodeProbes below),
// shared by every request that asks within an interval, so a list costs the node nothing more
// however often it is polled and never counts against the per-account live-read allowance.

import type { Kysely } from 'kysely';
import type { DB, NodeRow, Service } from '../../db/tables.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import {
  type MetricPoint,
  type PowerState,
  TIMEFRAMES,
  type Timeframe,
  UpstreamError,
  type VmStatus,
} from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { Backends } from '../services/backends.ts';

export interface LiveEnv {
  db: Kysely<DB>;
  backends: Backends;
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

/** What a node's probe gave: its answer and when, or why there is none. */
export type ProbeRead<T> = { ok: true; value: T; at: number } | { ok: false; error: unknown };

export interface NodeProbes<T> {
  /** The node's latest answer under the rules of `nodeProbes`. Never throws. */
  read(node: NodeRow): Promise<ProbeRead<T>>;
  /** Forget what a node (or every node) said: the next read asks it again and waits for it. */
  forget(nodeId?: number): void;
}

/**
 * One probe per node per interval, however many requests ask (issue 18):
 * - an answer younger than PROBE_FRESH_MS is served as it is; the node is not asked;
 * - older, one probe is started (concurrent readers share it) and a reader waits for it; but when
 *   the node is slow and an answer younger than PROBE_STALE_MAX_MS is cached, a reader waits only
 *   PROBE_STALE_WAIT_MS and then gets that older answer with its time, rather than a slow answer
 *   (the probe goes on and fills the cache when it ends);
 * - a probe that fails is not retried for PROBE_FRESH_MS either: readers meanwhile get its error,
 *   or the cached answer when the failure was only slowness (a timeout). A node that refuses or
 *   resets drops what was cached: its old answer is not vouched for any more.
 * `forget` drops a node's answer and any probe under way (a job changed something on it).
 */
export function nodeProbes<T>(probe: (node: NodeRow) => Promise<T>, clock: () => Date): NodeProbes<T> {
  interface Entry {
    /** Bumped by `forget`: a probe started before answers nobody. */
    generation: number;
    good: { value: T; at: number } | null;
    failed: { error: unknown; at: number } | null;
    running: Promise<void> | null;
  }
  const entries = new Map<number, Entry>();
  const now = () => clock().getTime();
  const slow = (error: unknown) => error instanceof UpstreamError && error.kind === 'timeout';

  function entryOf(nodeId: number): Entry {
    let entry = entries.get(nodeId);
    if (!entry) {
      entry = { generation: 0, good: null, failed: null, running: null };
      entries.set(nodeId, entry);
    }
    return entry;
  }

  function start(node: NodeRow, entry: Entry): Promise<void> {
    const generation = entry.generation;
    const running = withTimeout(
      Promise.resolve().then(() => probe(node)),
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
    return { ok: false, error: failed?.error ?? new UpstreamError('timeout', 'the node has not answered yet') };
  }

  return {
    async read(node) {
      const entry = entryOf(node.id);
      // A second round only when `forget` ran while this reader waited: what it waited for answers nobody.
      for (let round = 0; ; round++) {
        const generation = entry.generation;
        const t = now();
        const { good, failed } = entry;
        if (good && t - good.at < PROBE_FRESH_MS) return { ok: true, value: good.value, at: good.at };
        if (!entry.running && failed && t - failed.at < PROBE_FRESH_MS) return answer(entry);
        const running = entry.running ?? start(node, entry);
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

    forget(nodeId) {
      for (const [id, entry] of entries) {
        if (nodeId !== undefined && id !== nodeId) continue;
        entry.generation++;
        entry.good = null;
        entry.failed = null;
        entry.running = null;
      }
    },
  };
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
