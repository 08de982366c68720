// What a client asks of a running service through its backend (spec 4.8): power signals and
// reinstalls (queued as jobs, one at a time per service), and live reads (power state,
// metrics) that give up after a few seconds rather than hang a request on a slow node. Live reads
// reach the node every time, so each account has an allowance of them a minute (LIMITS
// live_status_account, live_graph_account), counted on both surfaces alike.

import type { Kysely } from 'kysely';
import type { DB, Job, NodeRow, Service } from '../../db/tables.ts';
import {
  type MetricPoint,
  type PowerState,
  TIMEFRAMES,
  type Timeframe,
  UpstreamError,
  type VmRef,
  type VmStatus,
} from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { startJob } from '../jobs/service-jobs.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Backends } from './backends.ts';
import type { ServiceService } from './service.service.ts';

export const SIGNALS = ['start', 'stop', 'restart', 'kill'] as const;
export type Signal = (typeof SIGNALS)[number];

/** What each action does (both surfaces' OpenAPI descriptions). */
export const POWER_DESCRIPTION =
  'start: power on. stop: graceful ACPI shutdown, forced off if the guest is still up after 60 s. ' +
  'restart: ACPI reboot, hard reset if the guest ignores it. kill: hard power-off at once (the server stays off). ' +
  'reinstall: {os, confirm = the label}; both required, the disk is replaced and a new root password set.';

/** How long a live read may take before the answer is `unknown` (lists) or 503 (detail). */
export const PROBE_TIMEOUT_MS = 2_500;

/**
 * Lists show power states at most this old. A list asks each node once for all its VMs (not
 * once per server), and concurrent lists share that one request; a job that settles anywhere
 * drops what is cached, so a list never shows the state from before an action.
 */
export const POWER_CACHE_MS = 3_000;

type NodeListing = Map<number, { name: string; power: PowerState }>;

function vmOf(service: Service): VmRef | null {
  const external = service.external as { node?: string; vmid?: number; name?: string } | null;
  return external && typeof external.vmid === 'number' && external.node && external.name
    ? { node: external.node, vmid: external.vmid, name: external.name }
    : null;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
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
  const { db, jobs, backends, services, limits } = options;
  const listings = new Map<number, { at: number; listing: Promise<NodeListing> }>();
  options.bus.subscribe((message) => {
    if (message.topic === 'service' || message.topic === 'all') listings.clear();
  });

  /** The node's power listing, shared by concurrent callers and kept POWER_CACHE_MS. */
  function listingOf(node: NodeRow | undefined): Promise<NodeListing> {
    if (!node) return Promise.reject(new AppError('hypervisor_not_configured'));
    const cached = listings.get(node.id);
    if (cached && Date.now() - cached.at < POWER_CACHE_MS) return cached.listing;
    const listing = withTimeout(backends.hypervisor(node).powerStates(), PROBE_TIMEOUT_MS);
    const entry = { at: Date.now(), listing };
    listings.set(node.id, entry);
    // A failed probe is not kept: the next list asks again.
    listing.catch(() => {
      if (listings.get(node.id) === entry) listings.delete(node.id);
    });
    return listing;
  }

  async function nodeOf(service: Service) {
    return service.node_id === null
      ? null
      : ((await db.selectFrom('nodes').selectAll().where('id', '=', service.node_id).executeTakeFirst()) ?? null);
  }

  /** The VM of a service that must have one, with its driver. */
  async function live(service: Service): Promise<{ vm: VmRef; hv: ReturnType<Backends['hypervisor']> }> {
    const vm = vmOf(service);
    if (service.type !== 'vps')
      throw new AppError('hypervisor_not_configured', { message: 'This service is not a virtual server.' });
    if (!vm || service.status === 'terminated' || service.status === 'failed') {
      throw new AppError('no_vm', {
        message:
          service.status === 'provisioning'
            ? 'The virtual machine is still being created.'
            : 'This service has no virtual machine.',
      });
    }
    return { vm, hv: backends.hypervisor(await nodeOf(service)) };
  }

  function mutable(service: Service): void {
    if (service.status === 'suspended') throw new AppError('suspended');
    if (service.status !== 'active') throw new AppError('no_vm', { message: `The service is ${service.status}.` });
  }

  return {
    async power(accountId: number, serviceId: number, signal: string): Promise<Job> {
      const service = await services.own(accountId, serviceId);
      if (!(SIGNALS as readonly string[]).includes(signal)) {
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
      const { vm, hv } = await live(service);
      if (gate) await gate(service);
      try {
        return { service, upstream: await withTimeout(hv.console(vm, kind), PROBE_TIMEOUT_MS * 2) };
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
      const { vm, hv } = await live(service);
      await limits.consume('live_status_account', `account:${accountId}`);
      try {
        return { service, status: await withTimeout(hv.status(vm), PROBE_TIMEOUT_MS) };
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
      const { vm, hv } = await live(service);
      await limits.consume('live_graph_account', `account:${accountId}`);
      try {
        return await withTimeout(hv.metrics(vm, timeframe as Timeframe), PROBE_TIMEOUT_MS * 2);
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
      await Promise.all(
        list.map(async (service) => {
          const vm = vmOf(service);
          if (!vm || service.type !== 'vps' || service.status === 'terminated' || service.status === 'failed') {
            out.set(service.id, null);
            return;
          }
          try {
            const listing = await listingOf(nodes.find((n) => n.id === service.node_id));
            const entry = listing.get(vm.vmid);
            // Gone from the node, or its vmid now names another VM: nothing we can vouch for.
            out.set(service.id, entry && entry.name === vm.name ? entry.power : 'unknown');
          } catch {
            out.set(service.id, 'unknown');
          }
        }),
      );
      return out;
    },
  };
}

export type ServiceActions = ReturnType<typeof createServiceActions>;
