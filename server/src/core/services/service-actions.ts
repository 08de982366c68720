// What a client asks of a running service (spec 4.8): the actions of the service's product
// (core/products/<type>/actions.ts), run by one dispatcher that checks ownership, the action's
// parameters, the service's state and type in the order core/products/actions.ts describes;
// and the live power and utilisation of many services at once for lists (one cached probe per
// node, core/products/live.ts: a list never counts against the live-read allowance). Live reads
// give up after a few seconds rather than hang a request on a slow node.
//
// Panel budgets (T3-M5): every panel action counts against its account's reads or writes a minute
// and every sign-in link against its SSO allowance (LIMITS panel_*), and a customer's action takes
// its node calls as a customer's from the node's shared budget (upstreams/budgets.ts): one that
// would wait too long for its node is 429 rate_limited with Retry-After, whatever the product.

import type { Kysely } from 'kysely';
import type { TProperties } from 'typebox';
import type { DB, Job, NodeRow, Service } from '../../db/tables.ts';
import { onBehalfOfClient } from '../../upstreams/budgets.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import type { MetricPoint, PowerState, VmStatus } from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { startJob } from '../jobs/service-jobs.ts';
import * as nodes from '../nodes/node.repository.ts';
import {
  type ActionContext,
  type ActionResult,
  type ProductAction,
  type SessionRoute,
  sessionRoutes,
} from '../products/actions.ts';
import { findAction, type Product, productOf, products } from '../products/index.ts';
import type { LiveState, LiveTarget, ProductLive } from '../products/live.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Backends } from './backends.ts';
import type { ReadCache } from './list-cache.ts';
import type { ServiceScope, ServiceService } from './service.service.ts';

/** The limit a panel action counts against: reads (GET actions) and writes apart. */
export const panelLimitOf = (action: ProductAction) =>
  action.method === 'read' ? ('panel_read_account' as const) : ('panel_write_account' as const);

/** Run a customer's request to a node: refused for the node's budget, it is a 429 on every surface. */
const asClient = <T>(work: () => Promise<T>): Promise<T> =>
  onBehalfOfClient(
    work,
    (seconds) =>
      new AppError('rate_limited', {
        message: `The panel of this service is busy; try again in ${seconds} s.`,
        retryAfter: seconds,
      }),
  );

/** What a list shows of a service whose product reports no utilisation. */
const NOT_REPORTED: LiveState = { power: null, utilisation: null, gap: 'not_reported', measuredAt: null };

/** Every power signal some product knows (a product without it refuses it as it refuses live reads). */
export const SIGNALS = [...new Set(products().flatMap((p) => Object.keys(p.jobs.power)))];

/** The product actions a surface route exposes, in registry order. */
export function actionsOn(surface: 'session' | 'token', route: string) {
  return products().flatMap((p) =>
    p.actions.filter((a) =>
      surface === 'session' ? sessionRoutes(a).includes(route as SessionRoute) : a.surfaces.token === route,
    ),
  );
}

/** A route's one-line list of its actions: `start | reinstall ({os, confirm = label})`. */
export function listActions(surface: 'session' | 'token', route: string, separator: string): string {
  const names = [...new Set(actionsOn(surface, route).map((a) => (a.usage ? `${a.name} (${a.usage})` : a.name)))];
  return names.join(separator);
}

/** The route's action names as a sentence: `start, stop or reinstall`. */
export function actionNames(surface: 'session' | 'token', route: string): string {
  const names = [...new Set(actionsOn(surface, route).map((a) => a.name))];
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** The parameters of every action of a route, each optional (one body schema for the route). */
export function actionParams(surface: 'session' | 'token', route: string): TProperties {
  const properties: TProperties = {};
  for (const a of actionsOn(surface, route))
    for (const [key, schema] of Object.entries(a.params.properties)) properties[key] ??= schema;
  return properties;
}

/** What each action of a route does (both surfaces' OpenAPI descriptions), from the registry. */
export function describeActions(surface: 'session' | 'token', route: string): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const a of actionsOn(surface, route)) {
    if (seen.has(a.name)) continue;
    seen.add(a.name);
    parts.push(`${a.name}: ${a.description}.`);
  }
  return parts.join(' ');
}

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

export function createServiceActions(options: {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  backends: Backends;
  services: ServiceService;
  bus: Bus;
  limits: RateLimits;
  clock: () => Date;
  publicUrl: string;
  secretKey: Buffer;
  /** Where the node rows a list's live states need are cached (key space of account 0); none: read each time. */
  nodeCache?: ReadCache<NodeRow[]>;
}) {
  const { db, jobs, backends, services, limits, bus, clock, publicUrl, secretKey, nodeCache } = options;
  // Each product's live state, built on first use (its caches live as long as the process).
  const lives = new Map<Product, ProductLive>();
  function liveOf(product: Product): ProductLive | null {
    if (!product.live) return null;
    let live = lives.get(product);
    if (!live) {
      live = product.live({ db, backends, bus, clock });
      lives.set(product, live);
    }
    return live;
  }

  async function nodeOf(service: Service) {
    return service.node_id === null ? null : ((await nodes.findById(db, service.node_id)) ?? null);
  }

  /** What runs the service, to be asked live; 409 when it has nothing running. */
  async function live(product: Product, service: Service): Promise<LiveTarget> {
    const state = liveOf(product);
    if (!state) throw new AppError('not_supported', { message: `A ${product.type} service has nothing live to ask.` });
    return state.target(service, await nodeOf(service));
  }

  function contextOf(accountId: number, service: Service, own: Product, opts: RunOptions): ActionContext {
    return {
      accountId,
      service,
      db,
      limits,
      startJob: (type, jobParams) =>
        db.transaction().execute((trx) =>
          startJob(trx, jobs, {
            accountId,
            serviceId: service.id,
            type,
            ...(jobParams ? { params: jobParams } : {}),
          }),
        ),
      live: () => live(own, service),
      backends,
      node: () => nodeOf(service),
      publicUrl,
      secretKey,
      clock,
      upload: opts.upload ?? null,
      ...(opts.gate ? { gate: opts.gate } : {}),
      ...(opts.mintConsole ? { mintConsole: opts.mintConsole } : {}),
    };
  }

  /**
   * Run an action of a product's management route (CONTRACT §6), the action already chosen by
   * the route (its name and method checked there): ownership (404 not_owner) → type (the
   * product's wrongType) → state (the action's or the product's refusal) → parameters (the
   * action's `check`) → the handler, which asks the panel.
   */
  async function runPanel(
    accountId: number,
    serviceId: number,
    product: Product,
    action: ProductAction,
    params: Record<string, unknown>,
    opts: Omit<RunOptions, 'unknown' | 'exposed'> = {},
  ): Promise<{ service: Service; result: ActionResult }> {
    const service = await services.own(accountId, serviceId);
    if (service.type !== product.type) {
      // A product that has no counterpart of the action says so, as `run` does (bare metal: snapshots).
      const why = productOf(service.type).unsupported?.[action.name];
      if (why) throw new AppError('not_supported', { message: why });
      throw product.wrongType();
    }
    if (!action.states.includes(service.status)) throw action.refused?.(service) ?? product.refused(service);
    await product.ready?.(db, service);
    const ctx = contextOf(accountId, service, product, { ...opts, unknown: () => product.wrongType() });
    const shaped = opts.validate ? opts.validate(params) : params;
    const checked = action.check ? await action.check(ctx, shaped) : shaped;
    // Counted once the request would reach the panel (a refusal before it costs the panel nothing).
    await limits.consume(panelLimitOf(action), `account:${accountId}`);
    return { service, result: await asClient(() => action.handler(ctx, checked)) };
  }

  /** Run the action `name` on the caller's service (see core/products/actions.ts for the checks). */
  async function run(
    accountId: number,
    serviceId: number,
    name: string,
    params: Record<string, unknown>,
    opts: RunOptions,
  ): Promise<{ service: Service; result: ActionResult }> {
    const service = await services.own(accountId, serviceId, opts);
    const found = findAction(name, service.type);
    if (!found || (opts.exposed && !opts.exposed(found.action))) throw opts.unknown();
    const { product, action } = found;
    const own = productOf(service.type);
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

  const badSignal = () =>
    new AppError('bad_signal', {
      message: `Power signals are ${SIGNALS.join(', ')}.`,
      fields: { action: `must be one of ${SIGNALS.join(', ')}` },
    });

  function expect<K extends ActionResult['kind']>(result: ActionResult, kind: K): Extract<ActionResult, { kind: K }> {
    if (result.kind !== kind) throw new Error(`the action answered ${result.kind}, not ${kind}`);
    return result as Extract<ActionResult, { kind: K }>;
  }

  /**
   * Power and utilisation of many services at once, for lists: from each node's cached probe
   * (its product's `states`), never a live read per service; a product without `states` shows
   * power only.
   */
  async function liveStates(list: Service[]): Promise<Map<number, LiveState>> {
    const out = new Map<number, LiveState>();
    const nodeIds = [...new Set(list.map((s) => s.node_id).filter((id): id is number => id !== null))];
    nodeIds.sort((a, b) => a - b);
    const nodeRows =
      nodeIds.length === 0
        ? []
        : nodeCache
          ? await nodeCache.read(0, nodeIds.join(','), () => nodes.findByIds(db, nodeIds))
          : await nodes.findByIds(db, nodeIds);
    const byProduct = new Map<Product, Service[]>();
    for (const service of list) {
      const product = productOf(service.type);
      byProduct.set(product, [...(byProduct.get(product) ?? []), service]);
    }
    await Promise.all(
      [...byProduct].map(async ([product, group]) => {
        const live = liveOf(product);
        if (live?.states) {
          const states = await live.states(group, nodeRows);
          for (const service of group) out.set(service.id, states.get(service.id) ?? NOT_REPORTED);
          return;
        }
        const powers = live ? await live.powerStates(group, nodeRows) : new Map<number, PowerState | null>();
        for (const service of group) out.set(service.id, { ...NOT_REPORTED, power: powers.get(service.id) ?? null });
      }),
    );
    return out;
  }

  /** A sign-in URL into the panel of the caller's active service (its product's `sso`). */
  async function sso(accountId: number, serviceId: number) {
    const service = await services.own(accountId, serviceId);
    const product = productOf(service.type);
    if (typeof product.sso !== 'function')
      throw new AppError('not_supported', { message: `A ${service.type} service has no single sign-on.` });
    if (service.status !== 'active') throw product.refused(service);
    await limits.consume('panel_sso_account', `account:${accountId}`);
    const sso = product.sso.bind(product);
    return asClient(() => sso(contextOf(accountId, service, product, { unknown: () => product.wrongType() })));
  }

  return {
    run,
    runPanel,
    sso,

    /** A power signal or reinstall (session POST /services/action/): the job it queued. */
    async power(accountId: number, serviceId: number, signal: string): Promise<Job> {
      if (signal === 'reinstall' || !SIGNALS.includes(signal)) {
        await services.own(accountId, serviceId);
        throw badSignal();
      }
      const { result } = await run(accountId, serviceId, signal, {}, { unknown: badSignal });
      return expect(result, 'job').job;
    },

    async reinstall(accountId: number, serviceId: number, input: { os: unknown; confirm: unknown }): Promise<Job> {
      const { result } = await run(accountId, serviceId, 'reinstall', input, { unknown: badSignal });
      return expect(result, 'job').job;
    },

    /**
     * A console ticket on the node for a running service (the caller wraps it in one of ours).
     * `gate` runs once the service is known to be the caller's and able to have a console, just
     * before the node is asked (the caller's limits: a refused request never reaches the node).
     */
    async console(
      accountId: number,
      serviceId: number,
      kind: 'vnc' | 'serial',
      gate?: (service: Service) => Promise<void>,
    ): Promise<{ service: Service; upstream: UpstreamConsoleTicket }> {
      const name = kind === 'vnc' ? 'vnc' : 'console';
      const { service, result } = await run(
        accountId,
        serviceId,
        name,
        {},
        { unknown: badSignal, ...(gate ? { gate } : {}) },
      );
      return { service, upstream: expect(result, 'console').upstream };
    },

    /** Terminate at once (token surface DELETE): `confirm` must equal the label. */
    async terminate(accountId: number, serviceId: number, confirm: string, scope: ServiceScope = {}): Promise<Job> {
      const service = await services.own(accountId, serviceId, scope);
      if (service.status === 'terminated')
        throw new AppError('no_vm', {
          message: 'The instance is already terminated; there is nothing left to delete.',
        });
      if (confirm !== service.label) {
        throw new AppError('confirmation_mismatch', {
          message: `Send the instance's label (${service.label}) as confirm to terminate it.`,
          fields: { confirm: 'must equal the instance label' },
        });
      }
      return db.transaction().execute((trx) => startJob(trx, jobs, { accountId, serviceId, type: 'terminate' }));
    },

    async status(accountId: number, serviceId: number): Promise<{ service: Service; status: VmStatus }> {
      const { service, result } = await run(accountId, serviceId, 'status', {}, { unknown: badSignal });
      return { service, status: expect(result, 'status').status };
    },

    async graph(accountId: number, serviceId: number, timeframe: string): Promise<MetricPoint[]> {
      const { result } = await run(accountId, serviceId, 'graph', { timeframe }, { unknown: badSignal });
      return expect(result, 'metrics').points;
    },

    liveStates,

    /** Live power of many services at once; `unknown` where the node does not answer in time. */
    async powerStates(list: Service[]): Promise<Map<number, PowerState | null>> {
      const out = new Map<number, PowerState | null>();
      for (const [id, state] of await liveStates(list)) out.set(id, state.power);
      return out;
    },
  };
}

export type ServiceActions = ReturnType<typeof createServiceActions>;

/** What the power actions and reinstall do (both surfaces' OpenAPI descriptions), from the registry. */
export const POWER_DESCRIPTION = describeActions('session', 'action');

/**
 * The checks of runPanel that need none of the action's parameters: ownership (404 not_owner) →
 * type (the product's wrongType, or not_supported) → state → the product's readiness. For a
 * route that must decide before it reads a request's body (an upload, T3-M4: nothing of a file
 * is read for a caller who may not send it); runPanel runs them again when the action runs.
 */
export async function authorisePanel(
  deps: { db: Kysely<DB>; services: ServiceService },
  accountId: number,
  serviceId: number,
  product: Product,
  action: ProductAction,
): Promise<Service> {
  const service = await deps.services.own(accountId, serviceId);
  if (service.type !== product.type) {
    const why = productOf(service.type).unsupported?.[action.name];
    if (why) throw new AppError('not_supported', { message: why });
    throw product.wrongType();
  }
  if (!action.states.includes(service.status)) throw action.refused?.(service) ?? product.refused(service);
  await product.ready?.(deps.db, service);
  return service;
}
