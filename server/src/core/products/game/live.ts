// Live state of a game server, for the routes every product shares (session services list,
// status and graph; token instances and stats): the panel's resources read as a VmStatus. The
// panel keeps no history of resources, so `graph` answers from the samples this process took
// while it was asked (status reads and list probes, at most one a minute kept per server, for a
// day), plus a fresh one: a short, honest series rather than an invented one.

import type { Service } from '../../../db/tables.ts';
import type { GamePowerState, GameResources, GameServerRef } from '../../../upstreams/game-panel.ts';
import type { MetricPoint, PowerState, Timeframe, VmStatus } from '../../../upstreams/hypervisor.ts';
import { type LiveEnv, PROBE_TIMEOUT_MS, type ProductLive, withTimeout } from '../live.ts';
import { gameRefused, serverRefOf } from './server.ts';

/** Lists show power states at most this old. */
export const POWER_CACHE_MS = 3_000;
const SAMPLE_EVERY_MS = 60_000;
const SAMPLES_KEPT = 24 * 60;
const TIMEFRAME_SECONDS: Record<Timeframe, number> = {
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 30 * 86_400,
  year: 365 * 86_400,
};

export function powerOf(state: GamePowerState): PowerState {
  return state === 'offline' ? 'stopped' : state;
}

interface Sample {
  time: number;
  resources: GameResources;
  memoryLimitBytes: number;
  cpuLimit: number;
}

export function createGameLive(env: LiveEnv): ProductLive {
  const { backends } = env;
  const power = new Map<number, { at: number; state: Promise<PowerState> }>();
  const samples = new Map<number, Sample[]>();
  env.bus.subscribe((message) => {
    if (message.topic === 'service' || message.topic === 'all') power.clear();
  });

  function record(serviceId: number, sample: Sample): void {
    const list = samples.get(serviceId) ?? [];
    const last = list.at(-1);
    if (!last || sample.time - last.time >= SAMPLE_EVERY_MS / 1000) list.push(sample);
    if (list.length > SAMPLES_KEPT) list.splice(0, list.length - SAMPLES_KEPT);
    samples.set(serviceId, list);
  }

  const point = (s: Sample, previous: Sample | undefined): MetricPoint => {
    const seconds = previous ? Math.max(1, s.time - previous.time) : null;
    const rate = (now: number, before: number | undefined) =>
      seconds !== null && before !== undefined && now >= before ? (now - before) / seconds : null;
    return {
      time: s.time,
      cpu: s.cpuLimit > 0 ? s.resources.cpuAbsolute / s.cpuLimit : null,
      memoryBytes: s.resources.memoryBytes,
      memoryTotalBytes: s.memoryLimitBytes,
      netInBytesPerSecond: rate(s.resources.networkRxBytes, previous?.resources.networkRxBytes),
      netOutBytesPerSecond: rate(s.resources.networkTxBytes, previous?.resources.networkTxBytes),
      diskReadBytesPerSecond: null,
      diskWriteBytesPerSecond: null,
    };
  };

  return {
    target(service: Service, node) {
      const found = serverRefOf(service);
      if (!found || service.status !== 'active') throw gameRefused(service);
      const ref: GameServerRef = found;
      const panel = backends.gamePanel(node);
      async function sample(): Promise<Sample> {
        const [details, resources] = await Promise.all([panel.details(ref), panel.resources(ref)]);
        const s: Sample = {
          time: Math.floor(Date.now() / 1000),
          resources,
          memoryLimitBytes: details.limits.memory * 1024 * 1024,
          cpuLimit: details.limits.cpu,
        };
        record(service.id, s);
        return s;
      }
      return {
        async status(): Promise<VmStatus> {
          const { resources, memoryLimitBytes, cpuLimit } = await sample();
          return {
            power: powerOf(resources.state),
            // Unlimited CPU (limit 0): there is no fraction of a limit to report.
            cpu: cpuLimit > 0 ? resources.cpuAbsolute / cpuLimit : null,
            cpus: Math.max(1, Math.ceil(cpuLimit / 100)),
            memoryBytes: resources.memoryBytes,
            memoryTotalBytes: memoryLimitBytes,
            diskTotalBytes: resources.diskBytes,
            uptimeSeconds: Math.floor(resources.uptimeMs / 1000),
            netInBytes: resources.networkRxBytes,
            netOutBytes: resources.networkTxBytes,
            locked: null,
          };
        },
        async metrics(timeframe) {
          await sample();
          const since = Math.floor(Date.now() / 1000) - TIMEFRAME_SECONDS[timeframe];
          const list = (samples.get(service.id) ?? []).filter((s) => s.time >= since);
          return list.map((s, i) => point(s, list[i - 1]));
        },
        async console() {
          const credentials = await panel.consoleCredentials(ref);
          return { kind: 'game' as const, server: ref, ...credentials };
        },
      };
    },

    async powerStates(list, nodes) {
      const out = new Map<number, PowerState | null>();
      await Promise.all(
        list.map(async (service) => {
          const ref = serverRefOf(service);
          if (!ref || !['active', 'suspended'].includes(service.status)) {
            out.set(service.id, null);
            return;
          }
          if (service.status === 'suspended') {
            out.set(service.id, 'stopped');
            return;
          }
          const cached = power.get(service.id);
          if (cached && Date.now() - cached.at < POWER_CACHE_MS) {
            out.set(service.id, await cached.state.catch(() => 'unknown' as const));
            return;
          }
          const node = nodes.find((n) => n.id === service.node_id);
          const state = (async () => {
            const panel = backends.gamePanel(node);
            const resources = await withTimeout(panel.resources(ref), PROBE_TIMEOUT_MS);
            return powerOf(resources.state);
          })();
          const entry = { at: Date.now(), state };
          power.set(service.id, entry);
          state.catch(() => {
            if (power.get(service.id) === entry) power.delete(service.id);
          });
          out.set(service.id, await state.catch(() => 'unknown' as const));
        }),
      );
      return out;
    },
  };
}
