// Live state of a running service: asked of its node on every request, never stored. The
// service layer (core/services/service-actions.ts) checks ownership, state and rate limits and
// then asks the product, which knows how to reach what runs the service.

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
}

/** What can be asked of one running service. Every call may throw UpstreamError. */
export interface LiveTarget {
  status(): Promise<VmStatus>;
  metrics(timeframe: Timeframe): Promise<MetricPoint[]>;
  console(kind: 'vnc' | 'serial'): Promise<UpstreamConsoleTicket>;
}

export interface ProductLive {
  /** The service's live handle; 409 (no_vm) when it has nothing running to ask. */
  target(service: Service, node: NodeRow | null): LiveTarget;
  /** Power of many services (null: none to show; `unknown`: the node did not answer in time). */
  powerStates(services: Service[], nodes: NodeRow[]): Promise<Map<number, PowerState | null>>;
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
