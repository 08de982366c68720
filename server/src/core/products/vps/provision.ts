// The worker's side of a virtual server: provisioning and reinstalling as steps, power signals,
// snapshot changes, and what suspending, lifting a suspension and terminating do on the node.
// Every step is idempotent (the VM is found by its deterministic name before anything is
// created; the root password is generated once and stored before the node sees it), so an
// attempt after a crash or a lost answer continues where the last one was. A VM found by that
// name is taken (configured, started) only when it is this service's (../extids.ts).

import type { Hypervisor, VmRef, VmSpec } from '../../../upstreams/hypervisor.ts';
import { sealedCredentials } from '../../product-kit/credentials.ts';
import { readStored } from '../../product-kit/data.ts';
import { assertAdoptable, type FoundResource, isOurs } from '../../product-kit/extids.ts';
import type { JobEnv, ProductJobs } from '../../product-kit/jobs.ts';
import type { Step } from '../../product-kit/steps.ts';
import { openCredentials } from '../../services/credentials.ts';
import { recordEvent } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { openUserData } from '../../services/user-data.ts';
import { reinstallParams, vpsConfig, vpsSpecs } from './data.ts';
import { vmName, vmRefOf } from './machine.ts';

const NAMESERVERS = ['1.1.1.1', '8.8.8.8'];

/** What a VPS job works with; the steps fill in `spec` and `vm` as they go (read through specOf, vmOrThrow). */
export interface VpsJob {
  env: JobEnv;
  /** The node's driver; null for a lifecycle job of a service that never got a VM. */
  hv: Hypervisor | null;
  vm: VmRef | null;
  /** The VM to make, once the 'preparing' step has worked it out. */
  spec?: VmSpec;
}

export const driver = (c: VpsJob): Hypervisor => {
  if (!c.hv) throw new Error('no driver for the node');
  return c.hv;
};

const specOf = (c: VpsJob): VmSpec => {
  if (!c.spec) throw new Error('the VM spec was not prepared');
  return c.spec;
};

const configOf = (env: JobEnv) => readStored(vpsConfig, env.service.config, `the config of service ${env.service.id}`);

/** The OS template a reinstall job puts on the server. */
const reinstallOs = (env: JobEnv): string =>
  readStored(reinstallParams, env.job.params, `the params of reinstall job ${env.job.id}`).os;

async function vmSpec(env: JobEnv, osSlug: string, password: string): Promise<VmSpec> {
  const { service, plan } = env;
  const os = await env.db.selectFrom('os_templates').selectAll().where('slug', '=', osSlug).executeTakeFirst();
  if (!os) throw new Error(`OS template ${osSlug} no longer exists`);
  const ip = await env.db
    .selectFrom('ipv4_addresses')
    .select(['address', 'prefix', 'gateway'])
    .where('service_id', '=', service.id)
    .executeTakeFirst();
  if (!ip) throw new Error(`service ${service.id} holds no IPv4 address`);
  const specs = readStored(vpsSpecs, plan.specs, `the specs of plan ${plan.label}`);
  const config = configOf(env);
  // Only a new server's first boot runs it (a reinstall finds none: markActive cleared it).
  const userData = openUserData(env.secretKey, service);
  return {
    name: vmName(env.installation.id, service),
    templateVmid: os.template_vmid,
    cores: specs.vcpu,
    memoryMb: specs.ram_mb,
    diskGb: Math.max(specs.disk_gb, os.min_disk_gb),
    cloudInit: {
      hostname: config.hostname ?? service.label,
      user: 'root',
      password,
      sshKeys: config.ssh_keys ?? [],
      ipv4: { address: ip.address, prefix: ip.prefix, gateway: ip.gateway },
      nameservers: NAMESERVERS,
      ...(userData === null ? {} : { userData }),
    },
    tags: ['hostplane', `svc-${service.id}`, `acct-${service.account_id}`],
  };
}

/** A VM the node holds under the service's name, as ../extids.ts judges it. */
function foundVm(env: JobEnv, vm: VmRef): FoundResource {
  const recorded = vmRefOf(env.service);
  return {
    label: `VM ${vm.vmid} on ${vm.node}`,
    name: vm.name,
    recorded: recorded !== null && recorded.vmid === vm.vmid && recorded.node === vm.node,
    identity: { name: vm.name, vmid: vm.vmid },
  };
}

const start: Step<VpsJob> = {
  name: 'starting',
  progress: 80,
  run: (c) => driver(c).start(vmOrThrow(c)),
};

export const provisionSteps: readonly Step<VpsJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const credentials = await sealedCredentials(c.env, c.env.service, 'root');
      const { os } = configOf(c.env);
      // Every order names one (./order.ts refuses to take it without).
      if (!os) throw new Error(`service ${c.env.service.id} names no OS template`);
      c.spec = await vmSpec(c.env, os, credentials.password);
    },
  },
  {
    name: 'creating the virtual machine',
    progress: 20,
    async run(c) {
      const { env } = c;
      const { service } = env;
      const spec = specOf(c);
      // createVm would configure a VM it finds by the name: judge it first (nothing is changed on
      // one that is not ours).
      const existing = await driver(c).findVm(spec.name);
      if (existing) await assertAdoptable(c.env, foundVm(c.env, existing));
      const vm = await driver(c).createVm(spec);
      const known = vmRefOf(service);
      if (known?.vmid === vm.vmid) {
        // Recorded by an earlier attempt: its MAC addresses too, unless that attempt predates them.
        if (String(known.macs) !== String(vm.macs)) {
          await services.setExternal(env.db, service.id, JSON.stringify(vm));
        }
      } else {
        await services.setExternal(env.db, service.id, JSON.stringify(vm));
        await recordEvent(env.db, service.id, 'vm_created', `Virtual machine ${vm.vmid} created on ${vm.node}`, {
          vmid: vm.vmid,
        });
      }
      c.vm = vm;
    },
    // A VM left half-made would otherwise keep a node slot (found by name: the attempt that made
    // it may have died before recording it; one it refused to adopt is left alone). A failure is
    // reported to the runner, which keeps the service for a later cleanup.
    async undo(c) {
      const vm = await driver(c).findVm(vmName(c.env.installation.id, c.env.service));
      if (vm && (await isOurs(c.env, foundVm(c.env, vm)))) await driver(c).destroy(vm);
    },
  },
  start,
];

const reinstallSteps: readonly Step<VpsJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const { env } = c;
      const { service, job } = env;
      // A new password for the new system, kept before the node sees it so a re-run reuses it.
      let credentials = openCredentials(env.secretKey, service);
      if (job.attempts === 0 || !credentials) credentials = await sealedCredentials(c.env, c.env.service, 'root', true);
      c.spec = await vmSpec(c.env, reinstallOs(env), credentials.password);
    },
  },
  {
    name: 'replacing the disk',
    progress: 20,
    async run(c) {
      // A fresh clone: new MAC addresses.
      const vm = await driver(c).reinstall(vmOrThrow(c), specOf(c));
      await services.setExternal(c.env.db, c.env.service.id, JSON.stringify(vm));
      c.vm = vm;
    },
  },
  start,
];

export const vpsJobs: ProductJobs<VpsJob> = {
  open(env) {
    const vm = vmRefOf(env.service);
    // A service that never got a VM (failed provisioning) can still be suspended or terminated.
    const needsNode = vm !== null || ['provision', 'reinstall', 'power', 'snapshot', 'resize'].includes(env.job.type);
    const hv = needsNode ? env.drivers.driverFor(env.node, 'hypervisor') : null;
    if ((env.job.type === 'reinstall' || env.job.type === 'resize') && !vm)
      throw new Error(`the service has no VM to ${env.job.type}`);
    return { env, vm, hv };
  },
  provision: provisionSteps,
  reinstall: {
    steps: reinstallSteps,
    async done(trx, c) {
      const osSlug = reinstallOs(c.env);
      await services.setConfigField(trx, c.env.service.id, 'os', osSlug);
      await recordEvent(trx, c.env.service.id, 'reinstalled', `Reinstalled with ${osSlug}; the root password changed`);
    },
  },
  power: {
    start: { run: (c) => driver(c).start(vmOrThrow(c)), done: 'Started' },
    // A graceful ACPI shutdown, forced after a minute if the guest ignores it.
    stop: { run: (c) => driver(c).shutdown(vmOrThrow(c), 60), done: 'Stopped' },
    // An ACPI reboot, reset if the guest ignores it.
    restart: { run: (c) => driver(c).reboot(vmOrThrow(c)), done: 'Restarted' },
    // Pull the plug: off at once, no shutdown asked of the guest. The server stays off.
    kill: { run: (c) => driver(c).stop(vmOrThrow(c)), done: 'Powered off (hard)' },
    // A hard power cycle (reset): off and on again at once; a stopped server is started.
    power_cycle: { run: (c) => driver(c).reset(vmOrThrow(c)), done: 'Power-cycled (hard)' },
  },
  async suspend(c) {
    if (c.vm) await driver(c).stop(c.vm);
  },
  async unsuspend(c) {
    if (c.vm) await driver(c).start(c.vm);
  },
  async terminate(c) {
    if (c.vm) await driver(c).destroy(c.vm);
  },
};

export function vmOrThrow(c: VpsJob): VmRef {
  if (!c.vm) throw new Error('the service has no VM');
  return c.vm;
}
