// What a client asks of a running service through its backend (spec 4.8): power signals and
// reinstalls (queued as jobs, one at a time per service), and live reads (power state,
// metrics) that give up after a few seconds rather than hang a request on a slow node. Live reads
// reach the node every time, so each account has an allowance of them a minute (LIMITS
// live_status_account, live_graph_account), counted on both surfaces alike.

import type { Kysely } from 'kysely';
import type { DB, Job, Service } from '../../db/tables.ts';
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
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { startJob } from '../jobs/service-jobs.ts';
import { type Product, productOf, products } from '../products/index.ts';
import { type LiveTarget, PROBE_TIMEOUT_MS, type ProductLive, withTimeout } from '../products/live.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Backends } from './backends.ts';
import type { ServiceService } from './service.service.ts';

/** Every power signal some product knows (a product without it refuses it as it refuses live reads). */
export const SIGNALS = [...new Set(products().flatMap((p) => Object.keys(p.jobs.power)))];
export type Signal = string;

/** What each action does (both surfaces' OpenAPI descriptions). */
export const POWER_DESCRIPTION =
  'start: power on. stop: graceful ACPI shutdown, forced off if the guest is still up after 60 s. ' +
  'restart: ACPI reboot, hard reset if the guest ignores it. kill: hard power-off at once (the server stays off). ' +
  'reinstall: {os, confirm = the label}; both required, the disk is replaced and a new root password set.';

function unreachable(error: unknown): AppError {
  return new AppError('node_unreachable', {
    retryAfter: 10,
    cause: error,
    message: 'The server node did not answer; try again shortly.',
  });
}

export function createServiceActions(options: {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  backends: Backends;
  services: ServiceService;
  bus: Bus;
  limits: RateLimits;
}) {
  const { db, jobs, backends, services, limits, bus } = options;
  // Each product's live state, built on first use (its caches live as long as the process).
  const lives = new Map<Product, ProductLive>();
  function liveOf(product: Product): ProductLive | null {
    if (!product.live) return null;
    let live = lives.get(product);
    if (!live) {
      live = product.live({ db, backends, bus });
      lives.set(product, live);
    }
    return live;
  }

  async function nodeOf(service: Service) {
    return service.node_id === null
      ? null
      : ((await db.selectFrom('nodes').selectAll().where('id', '=', service.node_id).executeTakeFirst()) ?? null);
  }

  /** What runs the service, to be asked live; 409 when its product has no live state or it has nothing running. */
  async function live(service: Service): Promise<LiveTarget> {
    const product = liveOf(productOf(service.type));
    if (!product) throw new AppError('hypervisor_not_configured', { message: 'This service is not a virtual server.' });
    return product.target(service, await nodeOf(service));
  }

  function mutable(service: Service): void {
    if (service.status === 'suspended') throw new AppError('suspended');
    if (service.status !== 'active') throw new AppError('no_vm', { message: `The service is ${service.status}.` });
  }

  return {
    async power(accountId: number, serviceId: number, signal: string): Promise<Job> {
      const service = await services.own(accountId, serviceId);
      if (!SIGNALS.includes(signal)) {
        throw new AppError('bad_signal', {
          message: `Power signals are ${SIGNALS.join(', ')}.`,
          fields: { action: `must be one of ${SIGNALS.join(', ')}` },
        });
      }
      mutable(service);
      await live(service);
      return db
        .transaction()
        .execute((trx) => startJob(trx, jobs, { accountId, serviceId, type: 'power', params: { signal } }));
    },

    async reinstall(accountId: number, serviceId: number, input: { os: unknown; confirm: unknown }): Promise<Job> {
      const service = await services.own(accountId, serviceId);
      const confirmed = input.confirm === service.label;
      if (typeof input.os !== 'string' || input.os.trim() === '') {
        // Missing is a request-shape problem, reported with every other one; unknown is bad_os.
        throw AppError.fields({
          os: 'is required',
          ...(confirmed ? {} : { confirm: 'must equal the service label' }),
        });
      }
      if (!confirmed) {
        throw new AppError('confirmation_mismatch', {
          message: `Type the service's label (${service.label}) in confirm to reinstall it.`,
          fields: { confirm: 'must equal the service label' },
        });
      }
      const os = await db
        .selectFrom('os_templates')
        .select('slug')
        .where('slug', '=', input.os.trim().toLowerCase())
        .where('active', '=', true)
        .executeTakeFirst();
      if (!os) throw new AppError('bad_os', { fields: { os: 'is not an OS template of the catalog' } });
      mutable(service);
      await live(service);
      return db
        .transaction()
        .execute((trx) => startJob(trx, jobs, { accountId, serviceId, type: 'reinstall', params: { os: os.slug } }));
    },

    /**
     * A console ticket on the node for a running VM (the caller wraps it in one of ours).
     * `gate` runs once the service is known to be the caller's and able to have a console, just
     * before the node is asked (the caller's limits: a refused request never reaches the node).
     */
    async console(
      accountId: number,
      serviceId: number,
      kind: 'vnc' | 'serial',
      gate?: (service: Service) => Promise<void>,
    ) {
      const service = await services.own(accountId, serviceId);
      mutable(service);
      const target = await live(service);
      if (gate) await gate(service);
      try {
        return { service, upstream: await withTimeout(target.console(kind), PROBE_TIMEOUT_MS * 2) };
      } catch (error) {
        if (error instanceof UpstreamError && /not running/.test(error.message)) {
          throw new AppError('conflict', { message: 'Start the server before opening its console.' });
        }
        throw unreachable(error);
      }
    },

    /** Terminate at once (token surface DELETE): `confirm` must equal the label. */
    async terminate(accountId: number, serviceId: number, confirm: string): Promise<Job> {
      const service = await services.own(accountId, serviceId);
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
      const service = await services.own(accountId, serviceId);
      const target = await live(service);
      await limits.consume('live_status_account', `account:${accountId}`);
      try {
        return { service, status: await withTimeout(target.status(), PROBE_TIMEOUT_MS) };
      } catch (error) {
        throw unreachable(error);
      }
    },

    async graph(accountId: number, serviceId: number, timeframe: string): Promise<MetricPoint[]> {
      const service = await services.own(accountId, serviceId);
      if (!(TIMEFRAMES as readonly string[]).includes(timeframe)) {
        throw new AppError('bad_timeframe', {
          message: `Timeframes are ${TIMEFRAMES.join(', ')}.`,
          fields: { timeframe: `must be one of ${TIMEFRAMES.join(', ')}` },
        });
      }
      const target = await live(service);
      await limits.consume('live_graph_account', `account:${accountId}`);
      try {
        return await withTimeout(target.metrics(timeframe as Timeframe), PROBE_TIMEOUT_MS * 2);
      } catch (error) {
        throw unreachable(error);
      }
    },

    /** Live power of many services at once; `unknown` where the node does not answer in time. */
    async powerStates(list: Service[]): Promise<Map<number, PowerState | null>> {
      const out = new Map<number, PowerState | null>();
      const nodeIds = [...new Set(list.map((s) => s.node_id).filter((id): id is number => id !== null))];
      const nodes =
        nodeIds.length === 0 ? [] : await db.selectFrom('nodes').selectAll().where('id', 'in', nodeIds).execute();
      const byProduct = new Map<Product, Service[]>();
      for (const service of list) {
        const product = productOf(service.type);
        byProduct.set(product, [...(byProduct.get(product) ?? []), service]);
      }
      await Promise.all(
        [...byProduct].map(async ([product, group]) => {
          const live = liveOf(product);
          const states = live ? await live.powerStates(group, nodes) : new Map<number, PowerState | null>();
          for (const service of group) out.set(service.id, states.get(service.id) ?? null);
        }),
      );
      return out;
    },
  };
}

export type ServiceActions = ReturnType<typeof createServiceActions>;
