// Live state of a virtual server: asked of its node each time. Lists ask each node once for
// all its VMs (not once per server), and concurrent lists share that one request for
// POWER_CACHE_MS; a job that settles anywhere drops what is cached, so a list never shows the
// state from before an action.

import type { NodeRow, Service } from '../../../db/tables.ts';
import type { PowerState, VmRef } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import { type LiveEnv, PROBE_TIMEOUT_MS, type ProductLive, withTimeout } from '../live.ts';
import { vmRefOf } from './machine.ts';

/** Lists show power states at most this old. */
export const POWER_CACHE_MS = 3_000;

type NodeListing = Map<number, { name: string; power: PowerState }>;

export function createVpsLive(env: LiveEnv): ProductLive {
  const { backends } = env;
  const listings = new Map<number, { at: number; listing: Promise<NodeListing> }>();
  env.bus.subscribe((message) => {
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

  const gone = (service: Service) => service.status === 'terminated' || service.status === 'failed';

  return {
    target(service, node) {
      const vm = vmRefOf(service);
      if (!vm || gone(service)) {
        throw new AppError('no_vm', {
          message:
            service.status === 'provisioning'
              ? 'The virtual machine is still being created.'
              : 'This service has no virtual machine.',
        });
      }
      const hv = backends.hypervisor(node);
      const ref: VmRef = vm;
      return {
        status: () => hv.status(ref),
        metrics: (timeframe) => hv.metrics(ref, timeframe),
        console: (kind) => hv.console(ref, kind),
      };
    },

    async powerStates(list, nodes) {
      const out = new Map<number, PowerState | null>();
      await Promise.all(
        list.map(async (service) => {
          const vm = vmRefOf(service);
          if (!vm || gone(service)) {
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
