// The worker's side of a bare-metal server: provisioning as steps, power signals through
// `ComputerSystem.Reset`, and what suspending, lifting a suspension and terminating do to the
// machine. Provisioning claims the machine of the node the order was given (the order service
// never gives one node to two live services), inserts the OS image as virtual media with a
// one-time boot override and power-cycles into the installer, waits for the install to report
// done (BAREMETAL_INSTALL_TIMEOUT, counted from the power cycle however many attempts it takes),
// then ejects the media and removes the install parameters. Giving up wipes the machine (power
// off, eject, secure erase), which puts it back in stock; terminating does the same.
//
// Steps are idempotent: credentials are generated once and stored before the BMC sees them; an
// install an earlier attempt started is waited for, not started again.

import { sql } from 'kysely';
import type { BareMetal, InstallSpec } from '../../../upstreams/bare-metal.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import { AppError } from '../../errors.ts';
import { sealedCredentials } from '../../product-kit/credentials.ts';
import { readStored } from '../../product-kit/data.ts';
import type { JobEnv, ProductJobs } from '../../product-kit/jobs.ts';
import type { Step } from '../../product-kit/steps.ts';
import { recordEvent } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { baremetalConfig } from './data.ts';
import { type MachineRef, machineRefOf } from './machine.ts';

/** How long one attempt waits for an install before it hands over to the next (the job queue's expiry is 15 min). */
const ATTEMPT_WAIT_MS = 10 * 60_000;
/** How long an OS may take to power down on ACPI before the machine is forced off (as a VPS's stop). */
export const SHUTDOWN_GRACE_MS = 60_000;

/** What a bare-metal job works with; the steps fill in `spec` and `machine` as they go (read through specOf, machineOf). */
export interface BareMetalJob {
  env: JobEnv;
  /** The machine's BMC driver; null for a lifecycle job of a service that never got a machine. */
  bm: BareMetal | null;
  machine: MachineRef | null;
  /** The install to start, once the 'preparing' step has worked it out. */
  spec?: InstallSpec;
}

const driver = (c: BareMetalJob): BareMetal => {
  if (!c.bm) throw new Error('no driver for the node');
  return c.bm;
};

const specOf = (c: BareMetalJob): InstallSpec => {
  if (!c.spec) throw new Error('the install was not prepared');
  return c.spec;
};

const configOf = (env: JobEnv) =>
  readStored(baremetalConfig, env.service.config, `the config of service ${env.service.id}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function installSpec(env: JobEnv, password: string): Promise<InstallSpec> {
  const { service } = env;
  const config = configOf(env);
  const os = await env.db
    .selectFrom('os_templates')
    .select(['slug', 'image_url'])
    .where('slug', '=', config.os ?? '')
    .executeTakeFirst();
  if (!os?.image_url) {
    throw new AppError('bad_os', { message: `The OS ${config.os ?? '(none)'} has no install image for bare metal.` });
  }
  const ip = await env.db
    .selectFrom('ipv4_addresses')
    .select(['address', 'prefix', 'gateway'])
    .where('service_id', '=', service.id)
    .executeTakeFirst();
  if (!ip) throw new Error(`service ${service.id} holds no IPv4 address`);
  return {
    imageUrl: os.image_url,
    hostname: config.hostname ?? service.label,
    sshKeys: config.ssh_keys ?? [],
    password,
    ipv4: { address: ip.address, prefix: ip.prefix, gateway: ip.gateway },
  };
}

/** The service's activity says the install started at `startedAt` (once per install, whichever attempt gets there). */
async function installStarted(env: JobEnv, startedAt: string): Promise<void> {
  const recorded = await env.db
    .selectFrom('service_events')
    .select('id')
    .where('service_id', '=', env.service.id)
    .where('kind', '=', 'install_started')
    .where(sql<string>`data->>'started_at'`, '=', startedAt)
    .executeTakeFirst();
  if (recorded) return;
  const { os } = configOf(env);
  await recordEvent(env.db, env.service.id, 'install_started', `Installing ${os} from virtual media`, {
    os,
    started_at: startedAt,
  });
}

/** Record the machine (and when its install started) in `services.external`. */
async function remember(c: BareMetalJob, machine: MachineRef): Promise<void> {
  await services.setExternal(c.env.db, c.env.service.id, JSON.stringify(machine));
  c.machine = machine;
}

const machineOf = (c: BareMetalJob): MachineRef => {
  if (!c.machine) throw new Error('the service has no machine');
  return c.machine;
};

/** Poll the machine until its install is done; failed or past the deadline fails the job for good. */
async function waitInstalled(c: BareMetalJob): Promise<void> {
  const { env } = c;
  const started = machineOf(c).install_started_at;
  const limitMs = env.baremetalInstallTimeoutSeconds * 1000;
  const deadline = (started ? Date.parse(started) : env.clock().getTime()) + limitMs;
  const handOver = Date.now() + ATTEMPT_WAIT_MS;
  const poll = Math.min(Math.max(env.timing.pollIntervalMs ?? 2000, 10) * 5, 5000);
  for (;;) {
    const state = await driver(c).installState();
    if (state === 'done') return;
    if (state === 'failed') {
      throw new UpstreamError('rejected', 'the installer reported that the install failed', { retryable: false });
    }
    if (state === 'idle') {
      // The machine shows no install: it lost it (a reset of the BMC, a power loss before boot).
      throw new UpstreamError('rejected', 'the machine shows no install under way', { retryable: true });
    }
    if (env.clock().getTime() > deadline) {
      throw new UpstreamError(
        'timeout',
        `the install did not report done within ${env.baremetalInstallTimeoutSeconds} s (BAREMETAL_INSTALL_TIMEOUT)`,
        { retryable: false },
      );
    }
    // This attempt has waited long enough for the queue: the next one goes on waiting.
    if (Date.now() > handOver) throw new UpstreamError('timeout', 'the install is still running');
    await sleep(poll);
  }
}

export const provisionSteps: readonly Step<BareMetalJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const credentials = await sealedCredentials(c.env, c.env.service, 'root');
      c.spec = await installSpec(c.env, credentials.password);
    },
  },
  {
    name: 'claiming the machine',
    progress: 10,
    async run(c) {
      const { env } = c;
      const { service, node } = env;
      const info = await driver(c).machine();
      if (c.machine?.serial === info.serialNumber) {
        // Claimed by an earlier attempt, perhaps before MAC addresses were recorded.
        if (String(c.machine.macs) !== String(info.macs)) await remember(c, { ...c.machine, macs: info.macs });
        return;
      }
      await remember(c, {
        node: node?.name ?? '',
        serial: info.serialNumber,
        system: info.id,
        install_started_at: null,
        macs: info.macs,
      });
      await recordEvent(
        env.db,
        service.id,
        'machine_claimed',
        `Machine ${info.serialNumber} (${info.model || 'bare metal'}, ${info.cpus} CPUs, ${info.memoryGiB} GiB) assigned`,
        { serial: info.serialNumber },
      );
    },
  },
  {
    name: 'starting the install',
    progress: 20,
    async run(c) {
      const { env } = c;
      const machine = machineOf(c);
      if (machine.install_started_at !== null) {
        // An earlier attempt started it: wait for that install rather than start it over. That
        // attempt may have lost the BMC before it recorded the install (the machine booted the
        // installer, the answer never came): record it now.
        const state = await driver(c).installState();
        if (state === 'installing' || state === 'done') return installStarted(env, machine.install_started_at);
      }
      // Counted from now: the deadline covers this install, not one an earlier attempt lost.
      const startedAt = env.clock().toISOString();
      await remember(c, { ...machine, install_started_at: startedAt });
      await driver(c).startInstall(specOf(c));
      await installStarted(env, startedAt);
    },
    // Power off, eject, secure erase: the machine back in stock. Safe on a machine nothing was
    // done to. A failure is reported to the runner, which keeps the service for a later cleanup
    // (and the machine out of stock meanwhile).
    async undo(c) {
      await driver(c).wipe();
    },
  },
  { name: 'installing the operating system', progress: 40, run: waitInstalled },
  {
    name: 'starting the installed system',
    progress: 90,
    run: (c) => driver(c).finishInstall(),
  },
];

const notSupported = () =>
  new AppError('not_supported', { message: 'A bare-metal server cannot be reinstalled here; order a new one.' });

export const baremetalJobs: ProductJobs<BareMetalJob> = {
  open(env) {
    const machine = machineRefOf(env.service);
    // A service that never got a machine (failed provisioning) can still be suspended or terminated.
    const needsNode = machine !== null || env.job.type === 'provision' || env.job.type === 'power';
    const bm = needsNode ? env.drivers.driverFor(env.node, 'bareMetal') : null;
    return { env, bm, machine };
  },
  provision: provisionSteps,
  reinstall: {
    steps: [
      {
        name: 'reinstalling',
        progress: 5,
        run: async () => {
          throw notSupported();
        },
      },
    ],
    done: async () => {},
  },
  power: {
    start: { run: (c) => driver(c).reset('On'), done: 'Powered on' },
    // ACPI first; the plug after a minute if the OS ignores it.
    stop: { run: (c) => driver(c).shutdown(SHUTDOWN_GRACE_MS), done: 'Stopped' },
    // The OS reboots itself (ACPI); a hung OS needs power_cycle.
    restart: { run: (c) => driver(c).reset('GracefulRestart'), done: 'Restarted' },
    kill: { run: (c) => driver(c).reset('ForceOff'), done: 'Powered off (hard)' },
    // Off and on again at once (ForceRestart where the BMC has no PowerCycle).
    power_cycle: { run: (c) => driver(c).reset('PowerCycle'), done: 'Power-cycled' },
  },
  async suspend(c) {
    if (c.machine) await driver(c).reset('ForceOff');
  },
  async unsuspend(c) {
    if (c.machine) await driver(c).reset('On');
  },
  // Off, media ejected, disks securely erased: back in stock once the lifecycle marks it terminated.
  async terminate(c) {
    if (c.bm) await driver(c).wipe();
  },
};
