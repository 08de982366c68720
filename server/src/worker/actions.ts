// The `service.action` job: power signals, and the suspensions and terminations staff approve.
// Each waits for the node to finish; a failure after the retries leaves the service as it was
// and the job `failed` with the reason.

import type { Deps } from '../core/deps.ts';
import type { JobContext } from '../core/jobs/queue.ts';
import { notify } from '../core/notifications/notification.service.ts';
import { recordEvent } from '../core/services/events.ts';
import type { Hypervisor, VmRef } from '../upstreams/hypervisor.ts';
import {
  describeFailure,
  finishJob,
  type LoadedJob,
  loadJob,
  markRunning,
  noteRetry,
  progress,
  shouldRetry,
  vmRefOf,
} from './job-run.ts';

export type PowerSignal = 'start' | 'stop' | 'restart' | 'kill';

const SIGNALS: Record<PowerSignal, { run: (hv: Hypervisor, vm: VmRef) => Promise<void>; done: string }> = {
  start: { run: (hv, vm) => hv.start(vm), done: 'Started' },
  // A graceful ACPI shutdown, forced after a minute if the guest ignores it.
  stop: { run: (hv, vm) => hv.shutdown(vm, 60), done: 'Stopped' },
  // An ACPI reboot, reset if the guest ignores it.
  restart: { run: (hv, vm) => hv.reboot(vm), done: 'Restarted' },
  // Pull the plug: off at once, no shutdown asked of the guest. The server stays off.
  kill: { run: (hv, vm) => hv.stop(vm), done: 'Powered off (hard)' },
};

async function act(deps: Deps, loaded: LoadedJob, hv: Hypervisor, vm: VmRef | null): Promise<void> {
  const { job, service } = loaded;
  const db = deps.database.db;
  const now = () => deps.clock();
  await progress(deps, job, 10, job.type);
  switch (job.type) {
    case 'power': {
      const signal = (job.params as { signal: PowerSignal }).signal;
      if (!vm) throw new Error('the service has no VM');
      await SIGNALS[signal].run(hv, vm);
      await db.transaction().execute(async (trx) => {
        await finishJob(trx, job.id, now(), undefined, deps.bus);
        await recordEvent(trx, service.id, `power_${signal}`, SIGNALS[signal].done);
      });
      return;
    }
    case 'suspend': {
      if (vm) await hv.stop(vm);
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('services')
          .set({ status: 'suspended', suspended_at: now() })
          .where('id', '=', service.id)
          .execute();
        await finishJob(trx, job.id, now(), undefined, deps.bus);
        await recordEvent(trx, service.id, 'suspended', 'Suspended: the server is stopped and cannot be started');
        await notify(trx, service.account_id, {
          kind: 'service_suspended',
          title: `${service.label} is suspended`,
          body: `${service.label} has been suspended.`,
          data: { service: service.id },
        });
      });
      return;
    }
    case 'unsuspend': {
      if (vm) await hv.start(vm);
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('services')
          .set({ status: 'active', suspended_at: null })
          .where('id', '=', service.id)
          .execute();
        await finishJob(trx, job.id, now(), undefined, deps.bus);
        await recordEvent(trx, service.id, 'unsuspended', 'Suspension lifted; the server is starting');
        await notify(trx, service.account_id, {
          kind: 'service_unsuspended',
          title: `${service.label} is no longer suspended`,
          body: `The suspension of ${service.label} was lifted and it has been started again.`,
          data: { service: service.id },
        });
      });
      return;
    }
    case 'terminate': {
      if (vm) await hv.destroy(vm);
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('ipv4_addresses')
          .set({ status: 'free', service_id: null, allocated_at: null })
          .where('service_id', '=', service.id)
          .execute();
        await trx
          .updateTable('services')
          .set({ status: 'terminated', terminated_at: now(), credentials_sealed: null })
          .where('id', '=', service.id)
          .execute();
        await finishJob(trx, job.id, now(), undefined, deps.bus);
        await recordEvent(
          trx,
          service.id,
          'terminated',
          'Terminated: the server and its disks were deleted and its IPv4 address released',
        );
        await notify(trx, service.account_id, {
          kind: 'service_terminated',
          title: `${service.label} was terminated`,
          body: `${service.label} and its data were deleted.`,
          data: { service: service.id },
        });
      });
      return;
    }
    default:
      throw new Error(`unexpected job type ${job.type} on the action queue`);
  }
}

export async function runActionJob(deps: Deps, jobId: number, context: JobContext): Promise<void> {
  const loaded = await loadJob(deps.database.db, jobId);
  if (!loaded) return;
  await markRunning(deps, loaded.job);
  try {
    const vm = vmRefOf(loaded.service);
    // A service that never got a VM (failed provisioning) can still be suspended or terminated.
    const hv =
      vm || loaded.job.type === 'power' ? deps.backends.hypervisor(loaded.node) : (null as unknown as Hypervisor);
    await act(deps, loaded, hv, vm);
  } catch (error) {
    if (shouldRetry(error, context)) {
      await noteRetry(deps, loaded, error, context);
      throw error;
    }
    const failure = describeFailure(error);
    context.logger.warn({ err: error, job: jobId, detail: failure.detail }, 'service job failed');
    await deps.database.db.transaction().execute(async (trx) => {
      await finishJob(trx, jobId, deps.clock(), failure, deps.bus);
      await recordEvent(
        trx,
        loaded.service.id,
        `${loaded.job.type}_failed`,
        `${loaded.job.type} failed: ${failure.message}`,
        { code: failure.code },
      );
    });
  }
}
