// Product actions: what a client may ask of one of its services, declared once per product and
// run through one dispatcher (core/services/service-actions.ts `run`). The routes that expose
// them — the session surface's multiplexed POST /services/action/ and its GET status/graph, the
// token surface's /instances/{id}/{action} and /stats — are generated from these tables, their
// OpenAPI entries too, and server/test/products-actions.test.ts runs every action through the
// same battery (ownership, CSRF, wrong type, wrong state).
//
// Checks, in order: ownership (404 not_owner, exactly like a missing id) → the action's name
// (unknown: 422 bad_signal) → the action's own `check` of its parameters, when it has one →
// for a mutation the service's state, then its type; for a read its type, then its state →
// the handler. (The order of state and type is the one these routes have always had.)

import type { Kysely } from 'kysely';
import type { TObject } from 'typebox';
import type { DB, Job, JobType, Service, ServiceStatus } from '../../db/tables.ts';
import type { ConsoleTicket, MetricPoint, VmStatus } from '../../upstreams/hypervisor.ts';
import type { AppError } from '../errors.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { LiveTarget } from './live.ts';

export type ActionMethod = 'read' | 'mutate';

/** Where an action is exposed. */
export interface ActionSurfaces {
  /** Session surface: in POST /services/action/ ('action'), or its own GET route. */
  session?: 'action' | 'status' | 'graph';
  /** Token surface: in POST /instances/{id}/{action} ('action'), or GET /instances/{id}/stats. */
  token?: 'action' | 'stats';
}

export interface ActionContext {
  accountId: number;
  service: Service;
  db: Kysely<DB>;
  limits: RateLimits;
  /** Queue a job of the service (409 locked or reinstall_running while another one runs). */
  startJob(type: JobType, params?: Record<string, unknown>): Promise<Job>;
  /** What runs the service, asked live (409 no_vm when nothing runs). */
  live(): Promise<LiveTarget>;
  /** Runs just before the node is asked (the caller's own limits: consoles). */
  gate?: (service: Service) => Promise<void>;
}

export type ActionResult =
  | { kind: 'job'; job: Job; message: string }
  | { kind: 'status'; status: VmStatus }
  | { kind: 'metrics'; points: MetricPoint[] }
  | { kind: 'console'; upstream: ConsoleTicket };

export interface ProductAction {
  readonly name: string;
  readonly method: ActionMethod;
  /** What the action takes besides the service (TypeBox; the routes' schemas are built from it). */
  readonly params: TObject;
  /** The service statuses it runs in; any other is refused (`refused`, else the product's `refused`). */
  readonly states: readonly ServiceStatus[];
  readonly description: string;
  /** How its parameters read in a route's one-line summary, e.g. `{os, confirm = label}`. */
  readonly usage?: string;
  readonly surfaces: ActionSurfaces;
  /** A console action: the ticket kind (the token surface answers with one of our tickets). */
  readonly console?: 'vnc' | 'serial';
  /** Checks of its parameters that come before the state (422). */
  check?(ctx: ActionContext, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The refusal for a state outside `states`, when it is not the product's. */
  refused?(service: Service): AppError;
  handler(ctx: ActionContext, params: Record<string, unknown>): Promise<ActionResult>;
  /** Parameters that pass `check` for this service (the test battery). */
  example?(service: Service): Record<string, unknown>;
}
