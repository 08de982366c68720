// The `service.provision` job: provision a new service, or reinstall one. Every step is
// idempotent (the VM is found by its deterministic name before anything is created; the root
// password is generated once and stored before the node sees it), so a job that runs again
// after a crash or a lost answer continues where it was. Retryable upstream trouble is retried
// with backoff; a permanent failure (or the last attempt) compensates: the half-made VM is
// removed, the IPv4 address released, the service marked failed, the charge refunded as a new
// ledger row, and the client told.

import type { Deps } from '../core/deps.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { formatPaise } from '../core/money.ts';
import { notify } from '../core/notifications/notification.service.ts';
import { addMonth } from '../core/orders/order.service.ts';
import { recordEvent } from '../core/services/events.ts';
import { openCredentials, sealCredentials } from '../core/services/service.service.ts';
import { post } from '../core/wallet/ledger.ts';
import type { Service } from '../db/tables.ts';
import type { Hypervisor, VmSpec } from '../upstreams/hypervisor.ts';
import {
  describeFailure,
  finishJob,
  generatePassword,
  type LoadedJob,
  loadJob,
  markRunning,
  noteRetry,
  progress,
  shouldRetry,
  vmName,
  vmRefOf,
} from './job-run.ts';

const NAMESERVERS = ['1.1.1.1', '8.8.8.8'];

async function credentialsOf(
  deps: Deps,
  service: Service,
  fresh: boolean,
): Promise<{ username: string; password: string }> {
  const existing = fresh ? null : openCredentials(deps.secretKey, service);
  if (existing) return existing;
  const credentials = { username: 'root', password: generatePassword() };
  await deps.database.db
    .updateTable('services')
    .set({ credentials_sealed: sealCredentials(deps.secretKey, service.id, credentials) })
    .where('id', '=', service.id)
    .execute();
  return credentials;
}

async function vmSpec(deps: Deps, loaded: LoadedJob, osSlug: string, password: string): Promise<VmSpec> {
  const { service, plan } = loaded;
  const os = await deps.database.db
    .selectFrom('os_templates')
    .selectAll()
    .where('slug', '=', osSlug)
    .executeTakeFirst();
  if (!os) throw new Error(`OS template ${osSlug} no longer exists`);
  const ip = await deps.database.db
    .selectFrom('ipv4_addresses')
    .select(['address', 'prefix', 'gateway'])
    .where('service_id', '=', service.id)
    .executeTakeFirst();
  if (!ip) throw new Error(`service ${service.id} holds no IPv4 address`);
  const specs = plan.specs as { vcpu: number; ram_mb: number; disk_gb: number };
  const config = service.config as { hostname?: string; ssh_keys?: string[] };
  return {
    name: vmName(service),
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
    },
    tags: ['hostplane', `svc-${service.id}`, `acct-${service.account_id}`],
  };
}

async function provision(deps: Deps, loaded: LoadedJob, hv: Hypervisor): Promise<void> {
  const { job, service } = loaded;
  const db = deps.database.db;
  await progress(deps, job, 5, 'preparing');
  const credentials = await credentialsOf(deps, service, false);
  const spec = await vmSpec(deps, loaded, (service.config as { os: string }).os, credentials.password);
  await progress(deps, job, 20, 'creating the virtual machine');
  const vm = await hv.createVm(spec);
  if (vmRefOf(service)?.vmid !== vm.vmid) {
    await db
      .updateTable('services')
      .set({ external: JSON.stringify(vm) })
      .where('id', '=', service.id)
      .execute();
    await recordEvent(db, service.id, 'vm_created', `Virtual machine ${vm.vmid} created on ${vm.node}`, {
      vmid: vm.vmid,
    });
  }
  await progress(deps, job, 80, 'starting');
  await hv.start(vm);
  const now = deps.clock();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('services')
      .set({ status: 'active', activated_at: now, period_end: addMonth(now) })
      .where('id', '=', service.id)
      .execute();
    await finishJob(trx, job.id, now, undefined, deps.bus);
    await recordEvent(trx, service.id, 'active', `${service.label} is up`);
    await notify(trx, service.account_id, {
      kind: 'service_active',
      title: `${service.label} is ready`,
      body: `Your ${loaded.plan.name} ${service.label} is running. Its login details are on the service page.`,
      data: { service: service.id },
    });
  });
}

async function reinstall(deps: Deps, loaded: LoadedJob, hv: Hypervisor): Promise<void> {
  const { job, service } = loaded;
  const db = deps.database.db;
  const osSlug = (job.params as { os: string }).os;
  const vm = vmRefOf(service);
  if (!vm) throw new Error('the service has no VM to reinstall');
  await progress(deps, job, 5, 'preparing');
  // A new password for the new system, kept before the node sees it so a re-run reuses it.
  let credentials = openCredentials(deps.secretKey, service);
  if (job.attempts === 0 || !credentials) credentials = await credentialsOf(deps, service, true);
  const spec = await vmSpec(deps, loaded, osSlug, credentials.password);
  await progress(deps, job, 20, 'replacing the disk');
  await hv.reinstall(vm, spec);
  await progress(deps, job, 80, 'starting');
  await hv.start(vm);
  const now = deps.clock();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('services')
      .set((eb) => ({
        config: eb.fn('jsonb_set', [eb.ref('config'), eb.val('{os}'), eb.val(JSON.stringify(osSlug))]) as never,
      }))
      .where('id', '=', service.id)
      .execute();
    await finishJob(trx, job.id, now, undefined, deps.bus);
    await recordEvent(trx, service.id, 'reinstalled', `Reinstalled with ${osSlug}; the root password changed`);
  });
}

/** Give up: undo what exists upstream, and for a new service refund it. */
async function compensate(deps: Deps, loaded: LoadedJob, hv: Hypervisor | null, error: unknown): Promise<void> {
  const { job, service } = loaded;
  const db = deps.database.db;
  const failure = describeFailure(error);
  const now = deps.clock();
  if (job.type === 'reinstall') {
    await db.transaction().execute(async (trx) => {
      await finishJob(trx, job.id, now, failure, deps.bus);
      await recordEvent(trx, service.id, 'reinstall_failed', `Reinstall failed: ${failure.message}`);
    });
    return;
  }
  // Best effort: a VM left half-made would otherwise keep an address and a node slot.
  if (hv) {
    try {
      const vm = await hv.findVm(vmName(service));
      if (vm) await hv.destroy(vm);
    } catch (cleanup) {
      deps.logger.warn({ err: cleanup, service: service.id }, 'could not remove the VM of a failed service');
    }
  }
  await db.transaction().execute(async (trx) => {
    const order = await trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', service.order_id as number)
      .forUpdate()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('ipv4_addresses')
      .set({ status: 'free', service_id: null, allocated_at: null })
      .where('service_id', '=', service.id)
      .execute();
    await trx.updateTable('services').set({ status: 'failed' }).where('id', '=', service.id).execute();
    await finishJob(trx, job.id, now, failure, deps.bus);
    await recordEvent(trx, service.id, 'failed', `Provisioning failed: ${failure.message}`, { code: failure.code });
    if (order.status === 'paid') {
      const refund = await post(trx, service.account_id, {
        kind: 'refund',
        amountPaise: BigInt(order.amount_paise),
        referenceType: 'order',
        referenceId: order.id,
        note: `Refund of ${order.public_id}: provisioning failed`,
      });
      await trx
        .updateTable('orders')
        .set({ status: 'refunded', refund_transaction_id: refund.id })
        .where('id', '=', order.id)
        .execute();
      await recordEvent(trx, service.id, 'refunded', `₹${formatPaise(order.amount_paise)} refunded to the wallet`, {
        transaction: refund.public_id,
      });
    }
    await notify(trx, service.account_id, {
      kind: 'service_failed',
      title: `${service.label} could not be set up`,
      body: `We could not set up ${service.label}: ${failure.message} The ₹${formatPaise(order.amount_paise)} you paid is back in your wallet.`,
      data: { service: service.id, order: order.public_id },
    });
  });
}

export async function runProvisionJob(deps: Deps, jobId: number, context: JobContext): Promise<void> {
  const loaded = await loadJob(deps.database.db, jobId);
  if (!loaded) return;
  if (loaded.service.status !== 'provisioning' && loaded.job.type === 'provision') {
    await finishJob(deps.database.db, jobId, deps.clock(), undefined, deps.bus);
    return;
  }
  await markRunning(deps, loaded.job);
  let hv: Hypervisor | null = null;
  try {
    hv = deps.backends.hypervisor(loaded.node);
    if (loaded.job.type === 'reinstall') await reinstall(deps, loaded, hv);
    else await provision(deps, loaded, hv);
  } catch (error) {
    if (shouldRetry(error, context)) {
      await noteRetry(deps, loaded, error, context);
      throw error;
    }
    context.logger.warn({ err: error, job: jobId }, 'service job failed for good; compensating');
    await compensate(deps, loaded, hv, error);
  }
}
