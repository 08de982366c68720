// Scheduled backups of a virtual server (issue 37, CONTRACT §13, docs/backups.md): the
// `backup_schedule` action (core/backups/backup-schedule.ts stores it and charges the add-on) and
// the `snapshot` job's `auto` change that the scheduler (core/backups/scheduler.ts) queues at the
// chosen hour: take `auto-YYYYMMDD-HHmm`, then delete the oldest automatic snapshots until only
// `keep` remain. Only snapshots the scheduler took (the `auto-` prefix, which manual snapshots
// may not use, and its description) are ever deleted. Automatic snapshots do not count against
// the plan's snapshot limit (that is the customer's own, for manual ones): `keep` bounds them.

import { Type } from 'typebox';
import type { Hypervisor, VmRef } from '../../../upstreams/hypervisor.ts';
import { checkScheduleInput, setBackupSchedule } from '../../backups/backup-schedule.ts';
import { AUTO_DESCRIPTION, isAutomatic, KEEP_MAX, ScheduleAnswer, scheduleView } from '../../backups/schedule.ts';
import { AppError } from '../../errors.ts';
import { formatPaise } from '../../money.ts';
import type { ProductAction } from '../../product-kit/actions.ts';
import { readStored } from '../../product-kit/data.ts';
import { vpsSpecs } from './data.ts';
import type { VpsJob } from './provision.ts';

/** The add-on's monthly price on the service's plan now (its `backup_price` spec), or null. */
async function priceOf(db: Parameters<ProductAction['handler']>[0]['db'], planId: number): Promise<bigint | null> {
  const plan = await db.selectFrom('plans').select(['label', 'specs']).where('id', '=', planId).executeTakeFirst();
  if (!plan) return null;
  const price = readStored(vpsSpecs, plan.specs, `the specs of plan ${plan.label}`).backup_price;
  return price === undefined ? null : BigInt(price);
}

export const backupScheduleAction: ProductAction = {
  name: 'backup_schedule',
  group: 'snapshots',
  method: 'mutate',
  params: Type.Object(
    {
      frequency: Type.Optional(Type.String({ maxLength: 16, description: 'backup_schedule: daily, weekly or off' })),
      hour: Type.Optional(
        Type.Integer({ description: 'backup_schedule: the hour it runs, 0-23, India Standard Time' }),
      ),
      keep: Type.Optional(
        Type.Integer({ description: `backup_schedule: how many automatic snapshots are kept, 1-${KEEP_MAX}` }),
      ),
      weekday: Type.Optional(
        Type.Integer({ description: 'backup_schedule, weekly: 0 (Sunday, the default) to 6 (Saturday), IST' }),
      ),
      dry_run: Type.Optional(
        Type.Boolean({ description: 'backup_schedule: answer what it would do and charge; nothing changes' }),
      ),
    },
    { additionalProperties: false },
  ),
  // A suspended server's schedule may be changed or turned off, not turned on.
  states: ['active', 'suspended'],
  description:
    "scheduled backups (a paid add-on, the plan's backup_price a month): {frequency: daily|weekly|off, hour 0-23 IST, " +
    'keep 1-14, weekday 0-6 for weekly (default Sunday), dry_run?}; turning it on charges the rest of the current ' +
    'period pro rata (402 when the wallet is short), renewals then include it, off stops that (no refund)',
  usage: '{frequency, hour, keep, weekday?}',
  surfaces: { session: 'services', token: { put: 'backup-schedule' } },
  answer: ScheduleAnswer,
  async check(_ctx, params) {
    checkScheduleInput(params);
    return params;
  },
  async handler(ctx, params) {
    const input = checkScheduleInput(params);
    const price = await priceOf(ctx.db, ctx.service.plan_id);
    const outcome = await setBackupSchedule(ctx, ctx.service, input, price);
    return {
      kind: 'data',
      message: outcome.message,
      data: {
        backup_schedule: outcome.schedule ? scheduleView(outcome.schedule) : null,
        price_per_month: outcome.monthlyPaise === null ? null : formatPaise(outcome.monthlyPaise),
        charged: formatPaise(outcome.chargedPaise),
        currency: 'INR',
        order_id: outcome.order?.public_id ?? null,
        dry_run: input.dryRun,
      },
    };
  },
  example: () => ({ frequency: 'daily', hour: 3, keep: 7 }),
};

/** The job's params of an `auto` change: the snapshot to take and how many automatic ones to keep. */
function autoParams(c: VpsJob): { name: string; keep: number } {
  const { name, keep } = c.env.job.params as { name?: unknown; keep?: unknown };
  if (typeof name !== 'string' || typeof keep !== 'number')
    throw new Error(`scheduled backup job ${c.env.job.id} has no name or keep`);
  return { name, keep };
}

/** The scheduled backup's run: take the snapshot (once, however often the job is tried), then prune. */
export function autoSnapshotJob(driver: (c: VpsJob) => Hypervisor, vmOf: (c: VpsJob) => VmRef) {
  return {
    step: 'taking the scheduled backup',
    async run(c: VpsJob): Promise<void> {
      const hv = driver(c);
      const vm = vmOf(c);
      const { name, keep } = autoParams(c);
      const same = (await hv.snapshots(vm)).find((s) => s.name === name);
      // Taken already: an earlier attempt of this job got that far.
      if (same && !isAutomatic(same))
        throw new AppError('conflict', { message: `A snapshot called ${name} exists already.` });
      if (!same) await hv.createSnapshot(vm, name, AUTO_DESCRIPTION);
      // Oldest first by name: auto-YYYYMMDD-HHmm sorts by when it was taken.
      const automatic = (await hv.snapshots(vm)).filter(isAutomatic).sort((a, b) => a.name.localeCompare(b.name));
      for (const old of automatic.slice(0, Math.max(0, automatic.length - keep))) await hv.deleteSnapshot(vm, old.name);
    },
    done: 'Scheduled backup taken',
  };
}
