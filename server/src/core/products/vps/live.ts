// Live state of a virtual server. Status, graph and console ask its node each time. Lists ask
// each node once for all its VMs — power and utilisation in the one listing — under the rules of
// nodeProbes (../live.ts): one probe per node per interval however many lists ask, an older
// answer served with its time when the node is slow. A job that settles on a node drops what is
// cached of it, so a list never shows the state from before an action.

import type { NodeRow, Service } from '../../../db/tables.ts';
import type { PowerState, VmListed, VmRef } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import {
  forgetOnSettle,
  type LiveEnv,
  type LiveState,
  listedState,
  nodeProbes,
  PROBE_FRESH_MS,
  type ProductLive,
  statesOf,
} from '../../product-kit/live.ts';
import { vmRefOf } from './machine.ts';

/** Lists show power states at most this old while the node answers. */
export const POWER_CACHE_MS = PROBE_FRESH_MS;

const NOTHING: LiveState = { power: null, utilisation: null, gap: 'not_running', measuredAt: null };
const UNREACHABLE: LiveState = { power: 'unknown', utilisation: null, gap: 'node_unreachable', measuredAt: null };

export function createVpsLive(env: LiveEnv): ProductLive {
  const { drivers } = env;
  const probes = nodeProbes<Map<number, VmListed>>(
    (node) => drivers.driverFor(node, 'hypervisor').powerStates(),
    env.clock,
  );
  // Which node each listed service is on, so a job's message drops that node's answer only.
  const nodeOfService = new Map<number, number>();
  forgetOnSettle(env.bus, probes, (serviceId) => nodeOfService.get(serviceId));

  const gone = (service: Service) => service.status === 'terminated' || service.status === 'failed';

  async function stateOf(service: Service, nodes: NodeRow[]): Promise<LiveState> {
    const vm = vmRefOf(service);
    if (!vm || gone(service)) return NOTHING;
    const node = nodes.find((n) => n.id === service.node_id);
    if (!node) return UNREACHABLE;
    nodeOfService.set(service.id, node.id);
    const read = await probes.read(node);
    if (!read.ok) return UNREACHABLE;
    const measuredAt = new Date(read.at);
    const entry = read.value.get(vm.vmid);
    // Gone from the node, or its vmid now names another VM: nothing we can vouch for.
    if (!entry || entry.name !== vm.name) return { power: 'unknown', utilisation: null, gap: 'not_found', measuredAt };
    return listedState(entry.power, measuredAt, {
      cpu: entry.cpu,
      cpus: entry.cpus,
      memoryBytes: entry.memoryBytes,
      memoryTotalBytes: entry.memoryTotalBytes,
    });
  }

  const states = (list: Service[], nodes: NodeRow[]) => statesOf(list, (service) => stateOf(service, nodes));

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
      const hv = drivers.driverFor(node, 'hypervisor');
      const ref: VmRef = vm;
      return {
        status: () => hv.status(ref),
        metrics: (timeframe) => hv.metrics(ref, timeframe),
        console: (kind) => hv.console(ref, kind),
      };
    },

    states,

    async powerStates(list, nodes) {
      const out = new Map<number, PowerState | null>();
      for (const [id, state] of await states(list, nodes)) out.set(id, state.power);
      return out;
    },
  };
}
