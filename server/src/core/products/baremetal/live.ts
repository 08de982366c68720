// Live state of a bare-metal server, asked of its machine's BMC each time: power from
// `ComputerSystem.PowerState`, CPUs and memory from the system's summary. A BMC sees the
// hardware, not the running OS, so CPU and memory *utilisation*, uptime and network counters are
// not known here: they are null (a real deployment would read them from an agent in the OS).
// Lists ask each machine once and share the answer for POWER_CACHE_MS; a job that settles
// anywhere drops what is cached.

import type { NodeRow, Service } from '../../../db/tables.ts';
import type { PowerState, VmStatus } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import { type LiveEnv, PROBE_TIMEOUT_MS, type ProductLive, withTimeout } from '../live.ts';
import { machineRefOf } from './machine.ts';

/** Lists show power states at most this old. */
export const POWER_CACHE_MS = 3_000;

const GIB = 1024 ** 3;

const notSupported = (what: string) =>
  new AppError('not_supported', { message: `Bare-metal servers have no ${what} here.` });

export function createBareMetalLive(env: LiveEnv): ProductLive {
  const { backends } = env;
  const powers = new Map<number, { at: number; power: Promise<PowerState> }>();
  env.bus.subscribe((message) => {
    if (message.topic === 'service' || message.topic === 'all') powers.clear();
  });

  /** The machine's power, shared by concurrent callers and kept POWER_CACHE_MS. */
  function powerOf(node: NodeRow): Promise<PowerState> {
    const cached = powers.get(node.id);
    if (cached && Date.now() - cached.at < POWER_CACHE_MS) return cached.power;
    const power = withTimeout(backends.bareMetal(node).power(), PROBE_TIMEOUT_MS);
    const entry = { at: Date.now(), power };
    powers.set(node.id, entry);
    // A failed probe is not kept: the next list asks again.
    power.catch(() => {
      if (powers.get(node.id) === entry) powers.delete(node.id);
    });
    return power;
  }

  const gone = (service: Service) => service.status === 'terminated' || service.status === 'failed';

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
      const bm = backends.bareMetal(node);
      const specs = (service.config as { specs?: { disk_gb?: number } }).specs ?? {};
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

    async powerStates(list, nodes) {
      const out = new Map<number, PowerState | null>();
      await Promise.all(
        list.map(async (service) => {
          if (!machineRefOf(service) || gone(service)) {
            out.set(service.id, null);
            return;
          }
          const node = nodes.find((n) => n.id === service.node_id);
          try {
            out.set(service.id, node ? await powerOf(node) : 'unknown');
          } catch {
            out.set(service.id, 'unknown');
          }
        }),
      );
      return out;
    },
  };
}
