// Live state of a bare-metal server. Status asks its machine's BMC each time: power from
// `ComputerSystem.PowerState`, CPUs and memory from the system's summary. A BMC sees the
// hardware, not the running OS, so CPU and memory *utilisation*, uptime and network counters are
// not known here: they are null (a real deployment would read them from an agent in the OS).
// Lists read power from one probe per machine (a bare-metal node is one BMC) under the rules of
// nodeProbes (../live.ts): one probe per interval however many lists ask, an older answer served
// with its time when the BMC is slow; utilisation is `not_reported`. A job that settles on the
// machine drops what is cached of it.

import type { NodeRow, Service } from '../../../db/tables.ts';
import type { PowerState, VmStatus } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import { readStored } from '../../product-kit/data.ts';
import {
  forgetOnSettle,
  type LiveEnv,
  type LiveState,
  nodeProbes,
  PROBE_FRESH_MS,
  type ProductLive,
  statesOf,
} from '../../product-kit/live.ts';
import { baremetalConfig } from './data.ts';
import { machineRefOf } from './machine.ts';

/** Lists show power states at most this old while the BMC answers. */
export const POWER_CACHE_MS = PROBE_FRESH_MS;

/** No machine to show (not installed yet, or gone): and a BMC never reports utilisation. */
const NOTHING: LiveState = { power: null, utilisation: null, gap: 'not_reported', measuredAt: null };
const UNREACHABLE: LiveState = { power: 'unknown', utilisation: null, gap: 'node_unreachable', measuredAt: null };

const GIB = 1024 ** 3;

const notSupported = (what: string) =>
  new AppError('not_supported', { message: `Bare-metal servers have no ${what} here.` });

export function createBareMetalLive(env: LiveEnv): ProductLive {
  const { drivers } = env;
  const probes = nodeProbes<PowerState>((node) => drivers.driverFor(node, 'bareMetal').power(), env.clock);
  // Which node (machine) each listed service is on, so a job's message drops that machine's answer only.
  const nodeOfService = new Map<number, number>();
  forgetOnSettle(env.bus, probes, (serviceId) => nodeOfService.get(serviceId));

  const gone = (service: Service) => service.status === 'terminated' || service.status === 'failed';

  async function stateOf(service: Service, nodes: NodeRow[]): Promise<LiveState> {
    if (!machineRefOf(service) || gone(service)) return NOTHING;
    const node = nodes.find((n) => n.id === service.node_id);
    if (!node) return UNREACHABLE;
    nodeOfService.set(service.id, node.id);
    const read = await probes.read(node);
    if (!read.ok) return UNREACHABLE;
    const power = read.value;
    // The BMC knows whether the machine is on, never what its OS uses.
    return {
      power,
      utilisation: null,
      gap: power === 'stopped' ? 'not_running' : 'not_reported',
      measuredAt: new Date(read.at),
    };
  }

  const states = (list: Service[], nodes: NodeRow[]) => statesOf(list, (service) => stateOf(service, nodes));

  return {
    target(service, node) {
      if (!machineRefOf(service) || gone(service) || service.status === 'provisioning') {
        throw new AppError('no_vm', {
          message:
            service.status === 'provisioning'
              ? 'The server is still being installed.'
              : 'This service has no bare-metal server.',
        });
      }
      const bm = drivers.driverFor(node, 'bareMetal');
      const specs = readStored(baremetalConfig, service.config, `the config of service ${service.id}`).specs ?? {};
      return {
        async status(): Promise<VmStatus> {
          const info = await bm.machine();
          // What the BMC cannot see (the OS's CPU and memory use, uptime, traffic) is null.
          return {
            power: info.power,
            cpu: null,
            cpus: info.cpus,
            memoryBytes: null,
            memoryTotalBytes: Math.round(info.memoryGiB * GIB),
            diskTotalBytes: typeof specs.disk_gb === 'number' ? specs.disk_gb * GIB : 0,
            uptimeSeconds: null,
            netInBytes: null,
            netOutBytes: null,
            locked: null,
          };
        },
        metrics: async () => {
          throw notSupported('metrics history');
        },
        console: async () => {
          throw notSupported('console');
        },
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
