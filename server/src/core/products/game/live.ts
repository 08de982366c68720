// Live state of a game server, for the routes every product shares (session services list,
// status and graph; token instances and stats): the panel's resources read as a VmStatus. Lists
// read power and utilisation from one probe per server under the rules of `probes` (../live.ts):
// the panel's client API has no listing of every server's state on a node (`GET /api/client`
// lists servers without resources; Wings' per-node listing is not reachable with a panel key), so
// the key is the server, and each server is asked at most once per interval however many lists
// ask, an older answer served with its time when the panel is slow. A job that settles on the
// service drops what is cached of it. The panel keeps no history of resources, so `graph`
// answers from the samples this process took while it was asked (status reads and list probes,
// at most one a minute kept per server, for a day), plus a fresh one: a short, honest series
// rather than an invented one.

import type { NodeRow, Service } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import type { GamePanel, GamePowerState, GameResources, GameServerRef } from '../../../upstreams/game-panel.ts';
import type { MetricPoint, PowerState, Timeframe, VmStatus } from '../../../upstreams/hypervisor.ts';
import {
  forgetOnSettle,
  probes as keyedProbes,
  type LiveEnv,
  type LiveState,
  type LiveTarget,
  listedState,
  PROBE_FRESH_MS,
  type ProductLive,
  statesOf,
} from '../../product-kit/live.ts';
import { gameRefused, serverRefOf } from './server.ts';

/** Lists show power states at most this old while the panel answers. */
export const POWER_CACHE_MS = PROBE_FRESH_MS;
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

/** What a server's limits say (the panel's details); kept until a job on the service settles. */
interface Limits {
  memoryLimitBytes: number;
  /** % of one core; 0 = unlimited. */
  cpuLimit: number;
}

/** One list probe of one server: its resources, the limits they are measured against. */
interface Probed {
  resources: GameResources;
  limits: Limits;
}

const NOTHING: LiveState = { power: null, utilisation: null, gap: 'not_running', measuredAt: null };
const SUSPENDED: LiveState = { power: 'stopped', utilisation: null, gap: 'not_running', measuredAt: null };
const UNREACHABLE: LiveState = { power: 'unknown', utilisation: null, gap: 'node_unreachable', measuredAt: null };
const NOT_FOUND: LiveState = { power: 'unknown', utilisation: null, gap: 'not_found', measuredAt: null };

const rate = (now: number, before: number | undefined, seconds: number | null) =>
  seconds !== null && before !== undefined && now >= before ? (now - before) / seconds : null;

/** One graph point from a sample and the one before it (rates need both). */
function point(s: Sample, previous: Sample | undefined): MetricPoint {
  const seconds = previous ? Math.max(1, s.time - previous.time) : null;
  return {
    time: s.time,
    cpu: s.cpuLimit > 0 ? s.resources.cpuAbsolute / s.cpuLimit : null,
    memoryBytes: s.resources.memoryBytes,
    memoryTotalBytes: s.memoryLimitBytes,
    netInBytesPerSecond: rate(s.resources.networkRxBytes, previous?.resources.networkRxBytes, seconds),
    netOutBytesPerSecond: rate(s.resources.networkTxBytes, previous?.resources.networkTxBytes, seconds),
    diskReadBytesPerSecond: null,
    diskWriteBytesPerSecond: null,
  };
}

/** The samples this process took of each server (at most one a minute, for a day): what `graph` answers from. */
interface SampleBook {
  record(serviceId: number, sample: Sample): void;
  /** The server's graph over `timeframe`, from what was kept. */
  series(serviceId: number, timeframe: Timeframe): MetricPoint[];
}

function sampleBook(): SampleBook {
  const samples = new Map<number, Sample[]>();
  return {
    record(serviceId, sample) {
      const list = samples.get(serviceId) ?? [];
      const last = list.at(-1);
      if (!last || sample.time - last.time >= SAMPLE_EVERY_MS / 1000) list.push(sample);
      if (list.length > SAMPLES_KEPT) list.splice(0, list.length - SAMPLES_KEPT);
      samples.set(serviceId, list);
    },
    series(serviceId, timeframe) {
      const since = Math.floor(Date.now() / 1000) - TIMEFRAME_SECONDS[timeframe];
      const list = (samples.get(serviceId) ?? []).filter((s) => s.time >= since);
      return list.map((s, i) => point(s, list[i - 1]));
    },
  };
}

/** Limits by service: read once from the panel's details, not on every probe (they change only by a job). */
function limitsCache() {
  const limits = new Map<number, Promise<Limits>>();
  return {
    of(serviceId: number, panel: GamePanel, ref: GameServerRef): Promise<Limits> {
      let known = limits.get(serviceId);
      if (!known) {
        known = panel
          .details(ref)
          .then((d) => ({ memoryLimitBytes: d.limits.memory * 1024 * 1024, cpuLimit: d.limits.cpu }));
        limits.set(serviceId, known);
        // A failed read is not kept: the next probe asks again.
        known.catch(() => {
          if (limits.get(serviceId) === known) limits.delete(serviceId);
        });
      }
      return known;
    },
    forget(serviceId?: number): void {
      if (serviceId === undefined) limits.clear();
      else limits.delete(serviceId);
    },
  };
}

/** An active server's live handle: each read asks the panel now, and is kept as a sample. */
function liveTarget(service: Service, panel: GamePanel, ref: GameServerRef, book: SampleBook): LiveTarget {
  async function sample(): Promise<Sample> {
    const [details, resources] = await Promise.all([panel.details(ref), panel.resources(ref)]);
    const s: Sample = {
      time: Math.floor(Date.now() / 1000),
      resources,
      memoryLimitBytes: details.limits.memory * 1024 * 1024,
      cpuLimit: details.limits.cpu,
    };
    book.record(service.id, s);
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
      return book.series(service.id, timeframe);
    },
    async console() {
      const credentials = await panel.consoleCredentials(ref);
      return { kind: 'game' as const, server: ref, ...credentials };
    },
  };
}

export function createGameLive(env: LiveEnv): ProductLive {
  const { drivers } = env;
  const book = sampleBook();
  const limits = limitsCache();
  const probes = keyedProbes<number, { service: Service; node: NodeRow; ref: GameServerRef }, Probed>(
    async ({ service, node, ref }) => {
      const panel = drivers.driverFor(node, 'gamePanel');
      const [resources, known] = await Promise.all([panel.resources(ref), limits.of(service.id, panel, ref)]);
      book.record(service.id, { time: Math.floor(Date.now() / 1000), resources, ...known });
      return { resources, limits: known };
    },
    env.clock,
  );
  forgetOnSettle(
    env.bus,
    {
      forget: (serviceId?: number) => {
        probes.forget(serviceId);
        limits.forget(serviceId);
      },
    },
    (serviceId) => serviceId,
  );

  async function stateOf(service: Service, nodes: NodeRow[]): Promise<LiveState> {
    const ref = serverRefOf(service);
    if (!ref || !['active', 'suspended'].includes(service.status)) return NOTHING;
    // A suspended server is stopped by the panel and cannot be started: nothing to ask.
    if (service.status === 'suspended') return SUSPENDED;
    const node = nodes.find((n) => n.id === service.node_id);
    if (!node) return UNREACHABLE;
    const read = await probes.read(service.id, { service, node, ref });
    if (!read.ok) {
      return read.error instanceof UpstreamError && read.error.kind === 'not_found' ? NOT_FOUND : UNREACHABLE;
    }
    const measuredAt = new Date(read.at);
    const { resources, limits: known } = read.value;
    // As status reads it: a fraction of the CPU limit; unlimited (0) has no fraction to report.
    return listedState(powerOf(resources.state), measuredAt, {
      cpu: known.cpuLimit > 0 ? resources.cpuAbsolute / known.cpuLimit : null,
      cpus: Math.max(1, Math.ceil(known.cpuLimit / 100)),
      memoryBytes: resources.memoryBytes,
      memoryTotalBytes: known.memoryLimitBytes,
    });
  }

  const states = (list: Service[], nodes: NodeRow[]) => statesOf(list, (service) => stateOf(service, nodes));

  return {
    target(service: Service, node) {
      const ref = serverRefOf(service);
      if (!ref || service.status !== 'active') throw gameRefused(service);
      return liveTarget(service, drivers.driverFor(node, 'gamePanel'), ref, book);
    },

    states,

    async powerStates(list, nodes) {
      const out = new Map<number, PowerState | null>();
      for (const [id, state] of await states(list, nodes)) out.set(id, state.power);
      return out;
    },
  };
}
