// The process's metrics: one module-level registry per process, scraped as Prometheus text at
// GET /metrics (http/metrics.routes.ts says where). Code that has something to count calls the
// record* functions here; they only bump in-memory numbers (no database, no I/O).
// What is read rather than counted (the job queues' depth, the database pool) is asked for when
// scraped, through the sources a running process hands to watchProcess().
//
// Every label has a bounded set of values: route patterns (never raw URLs), status codes, job
// queues and types, node hosts (the nodes staff configured), and the declared rate-limit names.

import type pg from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LimitName } from '../core/ratelimit/limits.ts';
import { RequestSeries } from './request-series.ts';

export const registry = new Registry();

// ---- HTTP requests (server.ts, one onResponse hook) ----

const requests = new RequestSeries();
requests.register(registry, {
  counter: 'hostplane_http_requests_total',
  histogram: 'hostplane_http_request_duration_seconds',
});

/** One answered request: `route` is the matched route's pattern, undefined when none matched. */
export function recordRequest(method: string, route: string | undefined, status: number, seconds: number): void {
  requests.record(method, route, status, seconds);
}

// ---- jobs: every queue's attempts (core/jobs/queue.ts), service jobs by type (worker/job-run.ts) ----

const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

const jobAttempts = new Counter({
  name: 'hostplane_job_attempts_total',
  help: 'Job attempts run by this process, by queue and outcome (completed, or failed: retried or given up by the queue)',
  labelNames: ['queue', 'outcome'] as const,
  registers: [registry],
});
const jobAttemptSeconds = new Histogram({
  name: 'hostplane_job_attempt_duration_seconds',
  help: 'Duration of job attempts in seconds, by queue and outcome',
  labelNames: ['queue', 'outcome'] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export function recordJobAttempt(queue: string, outcome: 'completed' | 'failed', seconds: number): void {
  jobAttempts.inc({ queue, outcome });
  jobAttemptSeconds.observe({ queue, outcome }, seconds);
}

/**
 * How a service job's attempt ended: succeeded and failed settle the job (failed after undoing a
 * provisioning's steps and refunding); retry leaves it to be tried again; skipped had nothing to do.
 */
export type ServiceJobOutcome = 'succeeded' | 'failed' | 'retry' | 'skipped';

const serviceJobs = new Counter({
  name: 'hostplane_service_jobs_total',
  help: 'Service job attempts (provision, reinstall, power, snapshot, suspend, unsuspend, terminate) by type and outcome',
  labelNames: ['type', 'outcome'] as const,
  registers: [registry],
});
const serviceJobSeconds = new Histogram({
  name: 'hostplane_service_job_duration_seconds',
  help: 'Duration of service job attempts in seconds, by type and outcome',
  labelNames: ['type', 'outcome'] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export function recordServiceJob(type: string, outcome: ServiceJobOutcome, seconds: number): void {
  serviceJobs.inc({ type, outcome });
  serviceJobSeconds.observe({ type, outcome }, seconds);
}

// ---- upstream HTTP calls (upstreams/http.ts) ----

/**
 * What an upstream call's failure was: no usable answer (the kinds of UpstreamError the HTTP
 * client raises), or an answer saying the node failed (5xx), refused our credentials (401/403)
 * or wants us to slow down (429). Other 4xx answers are the drivers' business (a VM that is not
 * there yet is often what a driver asks to find out), not errors of the node.
 */
export type UpstreamFailure =
  | 'unreachable'
  | 'timeout'
  | 'protocol'
  | 'rejected'
  | 'http_5xx'
  | 'http_auth'
  | 'http_429';

/** The failure an answer's status means, if any. */
export function failureOfStatus(status: number): UpstreamFailure | null {
  if (status >= 500) return 'http_5xx';
  if (status === 401 || status === 403) return 'http_auth';
  if (status === 429) return 'http_429';
  return null;
}

const upstreamSeconds = new Histogram({
  name: 'hostplane_upstream_request_duration_seconds',
  help: 'Duration of HTTP calls to upstream nodes (hypervisors, panels, BMCs) in seconds, by node host:port',
  labelNames: ['node'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});
const upstreamErrors = new Counter({
  name: 'hostplane_upstream_errors_total',
  help: 'Failed HTTP calls to upstream nodes, by node host:port and kind (unreachable, timeout, protocol, rejected; answered http_5xx, http_auth, http_429)',
  labelNames: ['node', 'kind'] as const,
  registers: [registry],
});

/** One upstream call, answered or not; `failure` when it failed. */
export function recordUpstreamCall(node: string, seconds: number, failure: UpstreamFailure | null): void {
  upstreamSeconds.observe({ node }, seconds);
  if (failure !== null) upstreamErrors.inc({ node, kind: failure });
}

// ---- rate limits (core/ratelimit/: declared by rate-limits.ts, refusals by limit-state.ts) ----

const refusals = new Counter({
  name: 'hostplane_ratelimit_refusals_total',
  help: 'Times a rate limit refused, by limit name (answered 429, but for verify_resend which skips a mail)',
  labelNames: ['limit'] as const,
  registers: [registry],
});
/** Called once with every declared limit, so each series exists from the start (a rate over it starts at zero). */
export function declareLimits(names: readonly string[]): void {
  for (const limit of names) refusals.inc({ limit }, 0);
}

export function recordRefusal(limit: LimitName): void {
  refusals.inc({ limit });
}

// ---- read when scraped: job queue depth, database pool ----

export interface QueueDepth {
  queue: string;
  /** Waiting and due now. */
  ready: number;
  /** Waiting for a later start (retry backoff, scheduled). */
  deferred: number;
  active: number;
}

/** What a running process lets the scrape read: its database pool and its job queue. */
export interface MetricSources {
  pool: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount' | 'options'>;
  /** Cheap and cached by the queue (core/jobs/queue.ts), as scrapes may come often. */
  queueDepth(): Promise<QueueDepth[]>;
}

let sources: MetricSources | null = null;
let processMetrics = false;

/**
 * Let scrapes read this process's pool and queue, and start the default process metrics (CPU,
 * memory, event-loop lag, GC) once. Returns a function that stops reading them (the last
 * caller's sources win: a process has one; tests build several apps, one after another).
 */
export function watchProcess(watched: MetricSources): () => void {
  sources = watched;
  if (!processMetrics) {
    processMetrics = true;
    collectDefaultMetrics({ register: registry });
  }
  return () => {
    if (sources === watched) sources = null;
  };
}

new Gauge({
  name: 'hostplane_job_queue_depth',
  help: "Jobs per queue by state (ready, deferred, active), as of the queue monitor's last count (every 15 s)",
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    if (sources === null) return;
    let depths: QueueDepth[];
    try {
      depths = await sources.queueDepth();
    } catch {
      // The database is away: the scrape still answers, without these (absent, not stale).
      this.reset();
      return;
    }
    this.reset();
    for (const d of depths) {
      this.set({ queue: d.queue, state: 'ready' }, d.ready);
      this.set({ queue: d.queue, state: 'deferred' }, d.deferred);
      this.set({ queue: d.queue, state: 'active' }, d.active);
    }
  },
});

const poolGauge = (name: string, help: string, read: (pool: MetricSources['pool']) => number): void => {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      if (sources !== null) this.set(read(sources.pool));
    },
  });
};
poolGauge('hostplane_db_pool_connections', 'Connections the database pool holds open', (p) => p.totalCount);
poolGauge('hostplane_db_pool_idle_connections', 'Open connections no query is using', (p) => p.idleCount);
poolGauge('hostplane_db_pool_waiting_clients', 'Queries waiting for a connection', (p) => p.waitingCount);
poolGauge('hostplane_db_pool_max_connections', 'The pool size', (p) => p.options.max ?? 0);
