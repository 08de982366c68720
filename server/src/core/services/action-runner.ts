// The one dispatcher of product actions (core/product-kit/actions.ts describes the checks and
// their order): `run` for the actions of the shared routes, `runPanel` for a product's
// management route, `sso` for a panel sign-in. Every action reaches its handler through here, so
// the ownership / state / type checks cannot be forgotten by a route.
//
// Panel budgets (T3-M5): every panel action counts against its account's reads or writes a minute
// and every sign-in link against its SSO allowance (LIMITS panel_*), and a customer's action takes
// its node calls as a customer's from the node's shared budget (upstreams/budgets.ts): one that
// would wait too long for its node is 429 rate_limited with Retry-After, whatever the product.

import type { Kysely } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Service } from '../../db/tables.ts';
import { onBehalfOfClient } from '../../upstreams/budgets.ts';
import { recordActivity, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import * as nodes from '../nodes/node.repository.ts';
import type { ActionContext, ActionResult, ProductAction } from '../product-kit/actions.ts';
import type { LiveTarget } from '../product-kit/live.ts';
import type { Product } from '../product-kit/product.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import { startJob } from '../services/service-jobs.ts';
import type { Drivers } from './drivers.ts';
import type { LiveStates } from './live-states.ts';
import { planChangesOf } from './plan-change.ts';
import type { ServiceScope } from './service.repository.ts';
import type { ServiceDirectory } from './service-directory.ts';

/** The limit a panel action counts against: reads (GET actions) and writes apart. */
export const panelLimitOf = (action: ProductAction) =>
  action.method === 'read' ? ('panel_read_account' as const) : ('panel_write_account' as const);

/** Run a customer's request to a node: refused for the node's budget, it is a 429 on every surface. */
export const asClient = <T>(work: () => Promise<T>): Promise<T> =>
  onBehalfOfClient(
    work,
    (seconds) =>
      new AppError('rate_limited', {
        message: `The panel of this service is busy; try again in ${seconds} s.`,
        retryAfter: seconds,
      }),
  );

export interface RunOptions extends ServiceScope {
  /** The refusal of a name no product knows (each surface words its own). */
  unknown: () => AppError;
  /** See ActionContext.gate. */
  gate?: (service: Service) => Promise<void>;
  /** Whether the calling route exposes the action; one it does not is refused as unknown. */
  exposed?: (action: ProductAction) => boolean;
  /** See ActionContext.mintConsole. */
  mintConsole?: ActionContext['mintConsole'];
  /** See ActionContext.upload. */
  upload?: ActionContext['upload'];
  /** The route's check of the parameters' shape (422), run where the parameters are checked. */
  validate?: (params: Record<string, unknown>) => Record<string, unknown>;
}

export interface RunnerOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  drivers: Drivers;
  services: ServiceDirectory;
  limits: RateLimits;
  clock: () => Date;
  publicUrl: string;
  secretKey: Buffer;
  products: ProductRegistry;
  lives: LiveStates;
  /** The seller and series of the invoices of charges: a plan change's (./plan-change.ts), an add-on's. */
  invoicing: InvoicingConfig;
}

/** The activity log's `sso` event: never the URL, which is a session of the panel. */
async function ssoIssued(db: Kysely<DB>, at: Date, service: Service, who: Who): Promise<void> {
  await recordActivity(db, {
    accountId: service.account_id,
    type: 'sso',
    who,
    summary: `Sign-in link to the control panel of ${service.label} issued`,
    details: { service_id: service.id, label: service.label, service_type: service.type },
    at,
  });
}

/**
 * The checks of runPanel that need none of the action's parameters: ownership (404 not_owner) →
 * type (the product's wrongType, or not_supported) → state → the product's readiness. For a
 * route that must decide before it reads a request's body (an upload, T3-M4: nothing of a file
 * is read for a caller who may not send it); runPanel runs them again when the action runs.
 */
export async function authorisePanel(
  deps: { db: Kysely<DB>; services: ServiceDirectory; products: ProductRegistry },
  accountId: number,
  serviceId: number,
  product: Product,
  action: ProductAction,
): Promise<Service> {
  const service = await deps.services.own(accountId, serviceId);
  if (service.type !== product.type) {
    // A product that has no counterpart of the action says so, as `run` does (bare metal: snapshots).
    const why = deps.products.of(service.type).unsupported?.[action.name];
    if (why) throw new AppError('not_supported', { message: why });
    throw product.wrongType();
  }
  if (!action.states.includes(service.status)) throw action.refused?.(service) ?? product.refused(service);
  await product.ready?.(deps.db, service);
  return service;
}

/** ActionContext.startJob: a job of the service queued in a transaction of its own. */
function jobStarter(
  db: Kysely<DB>,
  jobs: RunnerOptions['jobs'],
  accountId: number,
  serviceId: number,
): ActionContext['startJob'] {
  return (type, jobParams) =>
    db
      .transaction()
      .execute((trx) =>
        startJob(trx, jobs, { accountId, serviceId, type, ...(jobParams ? { params: jobParams } : {}) }),
      );
}

export function createActionRunner(options: RunnerOptions) {
  const { db, jobs, drivers, services, limits, clock, publicUrl, secretKey, products, lives, invoicing } = options;

  const nodeOf = async (service: Service) =>
    service.node_id === null ? null : ((await nodes.findById(db, service.node_id)) ?? null);

  /** What runs the service, to be asked live; 409 when it has nothing running. */
  async function live(product: Product, service: Service): Promise<LiveTarget> {
    const state = lives.liveOf(product);
    if (!state) throw new AppError('not_supported', { message: `A ${product.type} service has nothing live to ask.` });
    return state.target(service, await nodeOf(service));
  }

  function contextOf(accountId: number, service: Service, own: Product, opts: Partial<RunOptions>): ActionContext {
    return {
      accountId,
      service,
      db,
      limits,
      startJob: jobStarter(db, jobs, accountId, service.id),
      live: () => live(own, service),
      drivers,
      node: () => nodeOf(service),
      publicUrl,
      secretKey,
      clock,
      planChange: planChangesOf({ db, jobs, invoicing, clock }, accountId, service.id),
      invoicing,
      upload: opts.upload ?? null,
      ...(opts.gate ? { gate: opts.gate } : {}),
      ...(opts.mintConsole ? { mintConsole: opts.mintConsole } : {}),
    };
  }

  /**
   * Run an action of a product's management route (CONTRACT §6), the action already chosen by
   * the route (its name and method checked there): ownership, type, state and readiness
   * (authorisePanel) → parameters (the action's `check`) → the handler, which asks the panel.
   */
  async function runPanel(
    accountId: number,
    serviceId: number,
    product: Product,
    action: ProductAction,
    params: Record<string, unknown>,
    opts: Omit<RunOptions, 'unknown' | 'exposed'> = {},
  ): Promise<{ service: Service; result: ActionResult }> {
    const service = await authorisePanel({ db, services, products }, accountId, serviceId, product, action);
    const ctx = contextOf(accountId, service, product, opts);
    const shaped = opts.validate ? opts.validate(params) : params;
    const checked = action.check ? await action.check(ctx, shaped) : shaped;
    // Counted once the request would reach the panel (a refusal before it costs the panel nothing).
    await limits.consume(panelLimitOf(action), `account:${accountId}`);
    return { service, result: await asClient(() => action.handler(ctx, checked)) };
  }

  /** Run the action `name` on the caller's service (see core/product-kit/actions.ts for the checks). */
  async function run(
    accountId: number,
    serviceId: number,
    name: string,
    params: Record<string, unknown>,
    opts: RunOptions,
  ): Promise<{ service: Service; result: ActionResult }> {
    const service = await services.own(accountId, serviceId, opts);
    const found = products.findAction(name, service.type);
    if (!found || (opts.exposed && !opts.exposed(found.action))) throw opts.unknown();
    const { product, action } = found;
    const own = products.of(service.type);
    const ctx = contextOf(accountId, service, own, opts);
    const checked = action.check ? await action.check(ctx, params) : params;
    const refuseState = () => {
      if (!action.states.includes(service.status)) throw action.refused?.(service) ?? product.refused(service);
    };
    const refuseType = () => {
      if (own === product) return;
      // Outside a product's own management route, another product's action is one this service
      // cannot do: 422 not_supported, whichever product the name belongs to (CONTRACT §2).
      throw new AppError('not_supported', {
        message: own.unsupported?.[name] ?? `A ${own.type} service has no ${name} action.`,
      });
    };
    if (action.method === 'mutate') {
      refuseState();
      refuseType();
    } else {
      refuseType();
      refuseState();
    }
    return { service, result: await asClient(() => action.handler(ctx, checked)) };
  }

  /**
   * A sign-in URL into the panel of the caller's active service (its product's `sso`); logged as
   * `who`'s when given (else it is only read for the service's credentials: where to sign in).
   */
  async function sso(accountId: number, serviceId: number, who?: Who) {
    const service = await services.own(accountId, serviceId);
    const product = products.of(service.type);
    if (typeof product.sso !== 'function')
      throw new AppError('not_supported', { message: `A ${service.type} service has no single sign-on.` });
    if (service.status !== 'active') throw product.refused(service);
    await limits.consume('panel_sso_account', `account:${accountId}`);
    const sso = product.sso.bind(product);
    const signOn = await asClient(() => sso(contextOf(accountId, service, product, {})));
    if (who) await ssoIssued(db, clock(), service, who);
    return signOn;
  }

  return { run, runPanel, sso };
}
