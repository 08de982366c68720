// What a product is to the rest of the platform: the interface every product folder
// (core/products/<type>/) implements. Orders, services, catalog and the worker speak to a product
// through it only, found in the registry core/deps.ts composes (./registry.ts); what a virtual
// server is (a VM on a node, an IPv4 address, an OS template) lives in core/products/vps/.
//
// A product owns:
// - its order rules: what an order's `config` may hold and which of the shared field checks
//   apply (core/orders/order-input.ts runs them, so every problem is reported at once), what it
//   resolves from the catalog (vps: the OS template), and what it reserves in the ordering
//   transaction (vps: an IPv4 address; the node slot is taken by the order service on `nodeKind`);
// - its plan specs (checked when staff add a plan);
// - the fields it adds to the service view and to the credentials;
// - its jobs (./steps.ts: provisioning as steps with undo; the lifecycle hooks), see ./jobs.ts;
// - its live state (./live.ts) and its actions (./actions.ts), from which the routes are made.

import type { Kysely, Transaction } from 'kysely';
import type { TObject } from 'typebox';
import type { DB, Location, NodeKind, PlanType, Service } from '../../db/tables.ts';
import type { AppError } from '../errors.ts';
import type { CheckedConfig, OrderProblems } from '../orders/order-problems.ts';
import type { ActionContext, ProductAction } from './actions.ts';
import type { ProductJobs } from './jobs.ts';
import type { ProductLiveFactory } from './live.ts';

/** What an order of this product may say, and what placing one takes (core/orders/). */
export interface ProductOrder<R = unknown> {
  /** The keys an order's `config` may hold; any other is `bad_config_<key>`. */
  readonly keys: readonly string[];
  /** Whether an order names a domain (required) or must not (refused). */
  readonly domain: 'required' | 'refused';
  /** Whether `reserve` takes an IPv4 address (the catalog shows `no_ipv4` when the pool is empty). */
  readonly reservesIpv4: boolean;
  /** When set, `config.eula` must be true, and this says why. */
  readonly eulaRequired?: string;
  /**
   * What the order needs from the catalog beyond plan and region (vps: the OS template, the
   * default one when none is named); problems are added to `problems`, nothing is thrown.
   */
  resolve(trx: Kysely<DB>, config: CheckedConfig, problems: OrderProblems): Promise<R>;
  /** For an unknown plan: check the values given against the catalog, as `resolve` would. */
  checkGiven(trx: Kysely<DB>, config: CheckedConfig, problems: OrderProblems): Promise<void>;
  /** Throw 409 unavailable when what `resolve` found cannot be sold now (after the plan and region checks). */
  available(resolved: R): void;
  /** The product's part of `services.config`. */
  serviceConfig(config: CheckedConfig, label: string, resolved: R): { hostname: string | null; os: string | null };
  /**
   * Reserve what the service holds from the moment it is paid, in the ordering transaction
   * (vps: one IPv4 address of the location); throws 409 unavailable when none is left.
   */
  reserve(trx: Transaction<DB>, serviceId: number, location: Location): Promise<{ ipv4: string | null }>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds products of every context type
export interface Product<R = any, C = any> {
  readonly type: PlanType;
  /** The kind of node that runs this product's services. */
  readonly nodeKind: NodeKind;
  /**
   * Each node is one thing a service holds whole (bare metal: the node is the machine): it carries
   * at most one live service whatever its capacity says (0 still takes it out of stock), and a
   * failed service whose clean-up is pending keeps it until the clean-up has wiped it.
   */
  readonly exclusiveNode?: boolean;
  /**
   * What a plan's `specs` hold (TypeBox, additionalProperties false): whole numbers and numbers
   * with their bounds, slugs; an optional key with a `default` may be left out of a plan.
   */
  readonly specs: TObject;
  /**
   * Checks of a plan's specs against the catalog, once their shape is right (game: the game
   * exists): problems by spec key, empty when there are none.
   */
  checkSpecs?(db: Kysely<DB>, specs: unknown): Promise<Record<string, string>>;
  readonly order: ProductOrder<R>;
  /** Give back what `order.reserve` took (a failed or terminated service), in the caller's transaction. */
  release(trx: Transaction<DB>, serviceId: number): Promise<void>;
  /** The fields this product sets in the service view (both surfaces). */
  view(service: Service): { hostname: string | null; os: string | null; domain: string | null };
  /** How to log in, shown with the credentials (vps: an ssh command line); null when there is none. */
  login(username: string, ipv4: string): string | null;
  /** Provisioning, reinstall, power and the lifecycle hooks, run by the worker. */
  readonly jobs: ProductJobs<C>;
  /** Live state (power, stats, graph, console); null: the product has none. */
  readonly live: ProductLiveFactory | null;
  /** What a client may ask of a service of this product (./actions.ts). */
  readonly actions: readonly ProductAction[];
  /** The refusal of an action of this product on a service of another type. */
  wrongType(): AppError;
  /** The refusal of an action for the service's state (an action may have its own). */
  refused(service: Service): AppError;
  /**
   * A state check that needs the database (game: a reinstall running is `server_installing`),
   * after the `states` check of the management route; throws the refusal.
   */
  ready?(db: Kysely<DB>, service: Service): Promise<void>;
  /**
   * Actions of other products this one has no counterpart of, with why (422 not_supported
   * instead of the other product's wrong-type refusal; game: `vnc`).
   */
  readonly unsupported?: Readonly<Record<string, string>>;
  /**
   * Single sign-on (CONTRACT §6 `sso`): `console` for one of our console tickets (vps), or a
   * sign-in into the service's panel (a one-time URL, or the panel's page and, where the panel
   * has no one-time sign-in, the `username` to sign in as); absent: none (422 not_supported).
   */
  readonly sso?:
    | 'console'
    | ((ctx: ActionContext) => Promise<{ url: string; expires_at: string | null; note: string; username?: string }>);
}
