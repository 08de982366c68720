// What a client asks of a running service (spec 4.8): the actions of the service's product
// (core/products/<type>/), run through the one dispatcher (./action-runner.ts), under the verbs
// the shared routes speak (power, reinstall, console, status, graph, terminate), and the live
// states of many services at once for lists (./live-states.ts). Live reads give up after a few
// seconds rather than hang a request on a slow node.

import type { Kysely } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Job, NodeRow, Service } from '../../db/tables.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import type { MetricPoint, PowerState, VmStatus } from '../../upstreams/hypervisor.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { ActionResult } from '../product-kit/actions.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import { startJob } from '../services/service-jobs.ts';
import { createActionRunner } from './action-runner.ts';
import type { Drivers } from './drivers.ts';
import type { ReadCache } from './list-cache.ts';
import { createLiveStates } from './live-states.ts';
import type { ServiceScope } from './service.repository.ts';
import type { ServiceDirectory } from './service-directory.ts';

function expect<K extends ActionResult['kind']>(result: ActionResult, kind: K): Extract<ActionResult, { kind: K }> {
  if (result.kind !== kind) throw new Error(`the action answered ${result.kind}, not ${kind}`);
  return result as Extract<ActionResult, { kind: K }>;
}

export function createServiceActions(options: {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  drivers: Drivers;
  services: ServiceDirectory;
  bus: Bus;
  limits: RateLimits;
  clock: () => Date;
  publicUrl: string;
  secretKey: Buffer;
  products: ProductRegistry;
  /** How an action's charges are taxed and invoiced (resize: ./plan-change.ts; add-ons). */
  invoicing: InvoicingConfig;
  /** Where the node rows a list's live states need are cached (key space of account 0); none: read each time. */
  nodeCache?: ReadCache<NodeRow[]>;
}) {
  const { db, jobs, drivers, services, bus, clock, products, nodeCache } = options;
  const lives = createLiveStates({ db, drivers, bus, clock, products, nodeCache });
  const { run, runPanel, sso } = createActionRunner({ ...options, lives });
  const { liveStates } = lives;
  const signals = products.signals;

  const badSignal = () =>
    new AppError('bad_signal', {
      message: `Power signals are ${signals.join(', ')}.`,
      fields: { action: `must be one of ${signals.join(', ')}` },
    });

  return {
    run,
    runPanel,
    sso,

    /** A power signal or reinstall (session POST /services/action/): the job it queued. */
    async power(accountId: number, serviceId: number, signal: string): Promise<Job> {
      if (signal === 'reinstall' || !signals.includes(signal)) {
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
