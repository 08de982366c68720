// Placing and renewing orders (spec 4.7, 4.8 renew; CONTRACT §3, §5). `place` runs inside the
// caller's transaction (the idempotency layer owns it): it checks the plan, region and config,
// takes a node slot and what the plan's product reserves (virtual servers: an IPv4 address)
// under locks, debits the wallet (the plan's price, plus GST when prices exclude it:
// billing/charge.ts), and writes the order, the service, the provisioning job and its first event. Anything refused
// rolls all of it back, so nothing is ever charged for an order that was not accepted.

import { type Kysely, sql, type Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import { pageOf } from '../../db/page.ts';
import type { DB, Job, Location, Order, Plan, Service } from '../../db/tables.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import type { Billing } from '../billing/billing.service.ts';
import { chargeFor, monthlyCharge } from '../billing/charge.ts';
import { issueInvoice } from '../billing/invoices.ts';
import { AppError } from '../errors.ts';
import { publicId } from '../ids.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { formatPaise } from '../money.ts';
import * as nodes from '../nodes/node.repository.ts';
import type { Product } from '../product-kit/product.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { startJob } from '../services/service-jobs.ts';
import { sealUserData, withoutUserData } from '../services/user-data.ts';
import type { Clock } from '../time.ts';
import { post } from '../wallet/ledger.ts';
import { emitWebhook } from '../webhooks/outbox.ts';
import { orderData } from '../webhooks/payloads.ts';
import { checkOrderConfig, type OrderInput } from './order-input.ts';
import { type CheckedConfig, type FieldNaming, OrderProblems } from './order-problems.ts';

export interface Placed {
  order: Order;
  service: Service;
  job: Job;
  plan: Plan;
  location: Location;
  /** The IPv4 address the product reserved for the service (virtual servers), already allocated. */
  ipv4: string | null;
}

async function findPlan(trx: Kysely<DB>, ref: number | string): Promise<Plan | undefined> {
  const query = trx.selectFrom('plans').selectAll();
  return typeof ref === 'number'
    ? query.where('id', '=', ref).executeTakeFirst()
    : query.where('label', '=', ref.trim().toLowerCase()).executeTakeFirst();
}

const LABEL_TAKEN = 'is already the name of one of your services';

const usable = (trx: Kysely<DB>, product: Product, location: Location) =>
  nodes.usableIn(trx, location.id, product.nodeKind);

/**
 * The services holding a node. For a product whose nodes are held whole (bare metal: the node is
 * the machine) a failed service still waiting for its clean-up holds it too: the machine is not
 * wiped yet, so it must not go to the next order.
 */
async function usedOn(trx: Kysely<DB>, product: Product, nodeId: number): Promise<number> {
  if (!product.exclusiveNode) return services.countOnNode(trx, nodeId);
  const row = await trx
    .selectFrom('services')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('node_id', '=', nodeId)
    .where((eb) =>
      eb.or([
        eb('status', 'not in', ['terminated', 'failed']),
        eb.and([eb('status', '=', 'failed'), sql<boolean>`config->>'cleanup_pending' = 'true'`]),
      ]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many services a node may carry: one at most when the product holds nodes whole. */
const capacityOf = (product: Product, node: { capacity: number }) =>
  product.exclusiveNode ? Math.min(node.capacity, 1) : node.capacity;

/** Whether some node has room, without locking (the answer may change before commit). */
async function hasRoom(trx: Kysely<DB>, product: Product, location: Location): Promise<boolean> {
  for (const node of await usable(trx, product, location))
    if ((await usedOn(trx, product, node.id)) < capacityOf(product, node)) return true;
  return false;
}

/**
 * Lock and return a node with room, least loaded first. Each count runs after its node's lock is
 * held, so it sees every order committed before; orders placing on one node serialise here,
 * which is why this is the transaction's last step. (Bare metal: two orders for the last free
 * machine both wait for its row; the second counts the first's service once it commits and is
 * refused, its whole transaction — the debit too — rolled back.)
 */
async function takeNodeSlot(trx: Transaction<DB>, product: Product, location: Location): Promise<number | null> {
  const loads = [];
  for (const node of await usable(trx, product, location)) {
    await nodes.lock(trx, node.id);
    const used = await usedOn(trx, product, node.id);
    if (used < capacityOf(product, node)) loads.push({ id: node.id, used });
  }
  loads.sort((a, b) => a.used - b.used || a.id - b.id);
  return loads[0]?.id ?? null;
}

export interface OrderServiceOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  clock: Clock;
  billing: Pick<Billing, 'renew'>;
  products: ProductRegistry;
  /** The seller and series of the tax invoice each paid order gets (issue 35). */
  invoicing: InvoicingConfig;
  /** Seals an order's cloud-init user data with its service (core/services/user-data.ts). */
  secretKey: Buffer;
}

/**
 * Everything about an order that needs no lock: plan, config, region, OS and whether the
 * account already uses the label. Every field problem is reported at once, named per `naming`;
 * then availability (409).
 */
async function resolve(
  products: ProductRegistry,
  trx: Kysely<DB>,
  input: OrderInput,
  naming: FieldNaming,
  accountId: number,
): Promise<{ plan: Plan; product: Product; location: Location; config: CheckedConfig; resolved: unknown }> {
  const problems = new OrderProblems();
  const found = await findPlan(trx, input.plan);
  if (!found)
    problems.add(
      typeof input.plan === 'number' ? 'plan_id' : 'plan',
      'is not a plan of the catalog',
      'validation_failed',
    );
  const product = found ? products.of(found.type) : null;
  const config = checkOrderConfig(product, input.config, input.domain, problems);
  const regions = found
    ? await trx
        .selectFrom('plan_locations')
        .innerJoin('locations', 'locations.id', 'plan_locations.location_id')
        .selectAll('locations')
        .where('plan_locations.plan_id', '=', found.id)
        .orderBy('locations.id')
        .execute()
    : [];
  let location = config.region === null ? undefined : regions.find((l) => l.code === config.region);
  if (found && config.region !== null && !location && regions.length > 0)
    problems.add('region', `must be one of ${regions.map((r) => r.code).join(', ')}`);
  let resolved: unknown = null;
  if (product) resolved = await product.order.resolve(trx, config, problems);
  else for (const p of products.all) await p.order.checkGiven(trx, config, problems);
  if (found && config.serverName !== null && (await services.ownLabelTaken(trx, accountId, config.serverName)))
    problems.add('server_name', LABEL_TAKEN);
  problems.throwIfAny(naming);
  // An unknown plan is always among the problems: here it is known.
  const plan = found as Plan;
  if (!plan.active) throw AppError.unavailable('plan_inactive', 'This plan is no longer sold.');
  location ??= regions.find((l) => l.active) ?? regions[0];
  if (!location) throw AppError.unavailable('region_closed', 'This plan is not sold anywhere at the moment.');
  if (!location.active) throw AppError.unavailable('region_closed', `${location.name} is not taking orders.`);
  const known = product as Product;
  known.order.available(resolved);
  return { plan, product: known, location, config, resolved };
}

/** Place a paid order inside `trx` (see the header). */
async function place(
  options: OrderServiceOptions,
  trx: Transaction<DB>,
  accountId: number,
  input: OrderInput,
  naming: FieldNaming,
  who: Who,
): Promise<Placed> {
  const { jobs, clock, products } = options;
  const { plan, product, location, config, resolved } = await resolve(products, trx, input, naming, accountId);
  const orderId = publicId('order');
  // No name given or derivable: one from the order's id (random, so practically never taken).
  const label = config.serverName ?? `${plan.type}-${orderId.slice(-6)}`;
  // Fail fast, before any money moves, when no node has room; the locked check comes last.
  if (!(await hasRoom(trx, product, location)))
    throw AppError.unavailable('no_capacity', `No capacity for ${plan.name} in ${location.name} right now.`);
  const now = clock();
  // The price, or the price plus GST when prices exclude it: the debit, the order and its invoice.
  const charge = await chargeFor(trx, options.invoicing, accountId, plan.price_paise);
  const order = await trx
    .insertInto('orders')
    .values({
      public_id: orderId,
      account_id: accountId,
      plan_id: plan.id,
      kind: 'new',
      status: 'paid',
      amount_paise: charge.totalPaise,
      config: JSON.stringify(withoutUserData(input.config)),
      domain: config.domain,
      location_id: location.id,
      paid_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const debit = await post(trx, accountId, {
    kind: 'order',
    amountPaise: -charge.totalPaise,
    referenceType: 'order',
    referenceId: order.id,
    note: `${plan.name} (${order.public_id})`,
    at: now,
  });
  const service = await services
    .insert(trx, {
      account_id: accountId,
      plan_id: plan.id,
      order_id: order.id,
      type: plan.type,
      label,
      status: 'provisioning',
      location_id: location.id,
      price_paise: plan.price_paise,
      config: JSON.stringify({
        ...product.order.serviceConfig(config, label, resolved),
        ssh_keys: config.sshKeys,
        domain: config.domain,
        eula: config.eula,
        specs: plan.specs,
      }),
    })
    .catch((error: unknown) => {
      // A concurrent order took the label after the check above: the index decides, same answer.
      if ((error as { constraint?: string }).constraint === 'services_label_key') {
        const problems = new OrderProblems();
        problems.add('server_name', LABEL_TAKEN);
        problems.throwIfAny(naming);
      }
      throw error;
    });
  if (config.userData !== null)
    await services.setUserData(trx, service.id, sealUserData(options.secretKey, service.id, config.userData));
  const paidOrder = await trx
    .updateTable('orders')
    .set({ transaction_id: debit.id, service_id: service.id })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await emitWebhook(trx, accountId, ['order.created', 'order.paid'], orderData(paidOrder), now);
  const { ipv4 } = await product.order.reserve(trx, service.id, location);
  const job = await startJob(trx, jobs, { accountId, serviceId: service.id, type: 'provision' });
  // Last, so the node row — shared by every order in the location — stays locked only until commit.
  const nodeId = await takeNodeSlot(trx, product, location);
  if (nodeId === null)
    throw AppError.unavailable('no_capacity', `No capacity for ${plan.name} in ${location.name} right now.`);
  await services.setNode(trx, service.id, nodeId);
  await issueInvoice(trx, options.invoicing, {
    accountId,
    orderId: order.id,
    amountPaise: charge.totalPaise,
    description: `${plan.name}: ${label}, one month (order ${order.public_id})`,
    at: now,
  });
  await recordEvent(
    trx,
    service.id,
    'order_placed',
    `Order ${order.public_id} paid: ₹${formatPaise(charge.totalPaise)}`,
    {
      order: order.public_id,
      transaction: debit.public_id,
    },
  );
  await recordActivity(trx, {
    accountId,
    type: 'order_placed',
    who,
    summary: `Ordered ${plan.name} (${label}): ₹${formatPaise(plan.price_paise)} paid from your wallet (order ${order.public_id})`,
    details: {
      order: order.public_id,
      service_id: service.id,
      label,
      plan: plan.name,
      amount: formatPaise(plan.price_paise),
      transaction: debit.public_id,
    },
    at: now,
  });
  return {
    order: paidOrder,
    service: { ...service, node_id: nodeId },
    job,
    plan,
    location,
    ipv4,
  };
}

export function createOrderService(options: OrderServiceOptions) {
  const { db, billing } = options;
  return {
    /**
     * Place a paid order inside `trx` (see the header). `naming` says how the caller's body
     * names the order's fields (for the errors).
     */
    place: (
      trx: Transaction<DB>,
      accountId: number,
      input: OrderInput,
      naming: FieldNaming = 'nested',
      who: Who = byClient(null),
    ): Promise<Placed> => place(options, trx, accountId, input, naming, who),

    /**
     * Renew a service (CONTRACT §7): its unpaid renewal orders are paid first, oldest first, or
     * one more month from paid_until is charged; the billing cycle's payments do it, under the
     * same locks as `pay` and the cycle.
     */
    renew: (
      accountId: number,
      serviceId: number,
      who: Who = byClient(null),
    ): Promise<{ order: Order; service: Service }> => billing.renew(accountId, serviceId, who),

    async list(accountId: number, page: number, perPage: number) {
      const own = db.selectFrom('orders').where('account_id', '=', accountId);
      return pageOf(own, (q) => q.selectAll().orderBy('id', 'desc'), page, perPage);
    },

    async get(accountId: number, orderId: number): Promise<Order> {
      const order = await db
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', orderId)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (!order) throw new AppError('not_owner');
      return order;
    },

    /** Orders awaiting payment (renewals left unpaid). */
    unpaid: (accountId: number) =>
      db
        .selectFrom('orders')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('status', '=', 'unpaid')
        .orderBy('id', 'desc')
        .execute(),

    /** What the account's renewing services take from the wallet a month (with GST), in paise. */
    monthlyRunRate: (accountId: number): Promise<bigint> => monthlyCharge(db, options.invoicing, accountId),
  };
}

export type OrderService = ReturnType<typeof createOrderService>;
