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
import type { TObject, TProperties } from 'typebox';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Invoice, Job, JobType, NodeRow, Order, Plan, Service, ServiceStatus } from '../../db/tables.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import type { MetricPoint, VmStatus } from '../../upstreams/hypervisor.ts';
import type { Proration } from '../billing/proration.ts';
import type { AppError } from '../errors.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Drivers } from '../services/drivers.ts';
import type { LiveTarget } from './live.ts';

export type ActionMethod = 'read' | 'mutate';

export type SessionRoute = 'action' | 'status' | 'graph' | 'panel' | 'services';

/** The session routes that expose an action. */
export function sessionRoutes(action: ProductAction): readonly SessionRoute[] {
  const routes = action.surfaces.session;
  if (routes === undefined) return [];
  return typeof routes === 'string' ? [routes] : routes;
}

/** Where an action is exposed. */
export interface ActionSurfaces {
  /**
   * Session surface: in POST /services/action/ ('action'), its own GET route ('status',
   * 'graph'), or the product's multiplexed management route ('panel': /api/v1/client/game/ and
   * /web/, CONTRACT §6: a read is a GET with its parameters in the query, a mutation a POST with
   * a JSON body), or the service's own POST /services/ ('services': `{action, id, …}` beside
   * renew and the staff requests; CONTRACT §13 resize, rdns, backup_schedule), answered with the
   * action's data, or 202 with its job.
   */
  session?: SessionRoute | readonly SessionRoute[];
  /**
   * Token surface: in POST /instances/{id}/{action} ('action'), GET /instances/{id}/stats, or a
   * route of its own, PUT /instances/{id}/<put> with the parameters as the body (answered with
   * the action's data).
   */
  token?: 'action' | 'stats' | { put: string };
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
  /** Wraps a node's console session in one of our one-time tickets (console actions of the panel route). */
  mintConsole?: (upstream: UpstreamConsoleTicket) => Promise<IssuedConsoleTicket>;
  /** A file the request streamed to a temporary file (an upload action's multipart body). */
  upload?: { path: string; filename: string; bytes: number } | null;
  /** The driver of the node that runs the service (the panel actions ask it directly). */
  drivers: Drivers;
  /** The node row of the service (null: none assigned). */
  node(): Promise<NodeRow | null>;
  /** The absolute base URL clients reach us at (PUBLIC_URL). */
  publicUrl: string;
  /** Seals credentials the action changes (web: the account password). Never sent anywhere. */
  secretKey: Buffer;
  clock: () => Date;
  /** Moving the service to another plan of its product: what it costs now, and doing it (resize). */
  planChange: PlanChanges;
  /** How charges are taxed and invoiced (an action that charges the wallet: a paid add-on). */
  invoicing: InvoicingConfig;
}

/** What moving a service to `plan` costs at this moment (core/services/plan-change.ts). */
export interface PlanChangeQuote {
  plan: Plan;
  /** The pro-rata difference before tax (core/billing/proration.ts). */
  proration: Proration;
  /** What the wallet is debited now, with GST as every charge is (billing/charge.ts); 0: nothing. */
  totalPaise: bigint;
  /** The GST in `totalPaise`. */
  taxPaise: bigint;
}

export interface PlanChanges {
  /** The quote for `plan` now; 409 when the service owes a renewal or has no paid period. */
  quote(plan: Plan): Promise<PlanChangeQuote>;
  /**
   * In one transaction: charge the quote (402 insufficient_funds when the wallet cannot pay; the
   * order of kind `resize` with its tax invoice), move the service to `plan` and its price for
   * future renewals, and queue `job` (409 locked while another job runs). Nothing changes unless
   * all of it does. The job's params gain what undoing it takes (`from_plan_id`, …).
   */
  apply(
    plan: Plan,
    job: { type: JobType; params?: Record<string, unknown> },
  ): Promise<{ job: Job; quote: PlanChangeQuote; order: Order | null; invoice: Invoice | null }>;
}

/** One of our console tickets, as a client receives it (CONTRACT §6). */
export interface IssuedConsoleTicket {
  ticket: string;
  url: string;
  expires_at: string;
}

export type ActionResult =
  | { kind: 'job'; job: Job; message: string }
  | { kind: 'status'; status: VmStatus }
  | { kind: 'metrics'; points: MetricPoint[] }
  | { kind: 'console'; upstream: UpstreamConsoleTicket }
  /** A panel action's answer: the envelope's message and its fields (`status`: 200 unless said). */
  | { kind: 'data'; message: string; data: Record<string, unknown>; status?: number };

export interface ProductAction {
  readonly name: string;
  /** Its group in the product's route (spec 4.9: info, console, files, …), for the documentation. */
  readonly group?: string;
  readonly method: ActionMethod;
  /** What the action takes besides the service (TypeBox; the routes' schemas are built from it). */
  readonly params: TObject;
  /** The service statuses it runs in; any other is refused (`refused`, else the product's `refused`). */
  readonly states: readonly ServiceStatus[];
  readonly description: string;
  /** How its parameters read in a route's one-line summary, e.g. `{os, confirm = label}`. */
  readonly usage?: string;
  readonly surfaces: ActionSurfaces;
  /** Its answer carries a one-time link, ticket or file: sent with `Cache-Control: no-store`. */
  readonly noStore?: boolean;
  /** A console action: the ticket kind (the token surface answers with one of our tickets). */
  readonly console?: 'vnc' | 'serial';
  /** Takes one file as a multipart body (streamed to a temporary file first), at most this many bytes. */
  readonly upload?: { field: string; maxBytes: number };
  /**
   * A check of the raw parameters that comes before their shape is checked (a game file action:
   * a NUL in a path is 400 path_traversal, not a 422 about the string).
   */
  screen?(params: Record<string, unknown>): void;
  /** Checks of its parameters that come before the state (422). */
  check?(ctx: ActionContext, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The refusal for a state outside `states`, when it is not the product's. */
  refused?(service: Service): AppError;
  handler(ctx: ActionContext, params: Record<string, unknown>): Promise<ActionResult>;
  /**
   * The fields of its `data` answer, on the routes that send the data as it is (session
   * 'services', a token `put` route): their response schemas are built from it.
   */
  readonly answer?: TProperties;
  /** Parameters that pass `check` for this service (the test battery). */
  example?(service: Service): Record<string, unknown>;
}
