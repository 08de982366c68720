// Snapshots of a virtual server (issue 16, CONTRACT §9): list, create, restore and delete,
// through the node's driver (Hypervisor snapshots…; on Proxmox each a task that holds the VM's
// lock, awaited). The read asks the node at once; the three changes are jobs of the service (one
// at a time, like power and reinstall) of type `snapshot`, the change in `params.action` (create,
// restore, delete; ./provision.ts hands them to the worker). A plan holds at most `snapshots`
// of them (its spec; 3 when the plan does not say), 409 limit_reached past it, checked when the
// job is asked for and again when it runs. Restoring stops the VM, rolls its disks and config
// back and starts it again if it was running, as Proxmox does.
//
// Automatic snapshots (scheduled backups, ./backups.ts) are listed with `automatic: true` and do
// not count against the limit, which is the customer's for manual ones; the `auto-` prefix of
// their names is reserved.
//
// A snapshot's id is its name on the node: names are unique per VM, and another VM's snapshot
// (another account's) is simply not among this one's, so it answers exactly like a missing one.

import { Type } from 'typebox';
import { type Hypervisor, snapshotNameProblem, type VmRef, type VmSnapshot } from '../../../upstreams/hypervisor.ts';
import { AUTO_PREFIX, isAutomatic } from '../../backups/schedule.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext, ProductAction } from '../../product-kit/actions.ts';
import { readStored } from '../../product-kit/data.ts';
import { PROBE_TIMEOUT_MS, unreachable, withTimeout } from '../../product-kit/live.ts';
import { isoWithOffset } from '../../time.ts';
import { DEFAULT_SNAPSHOT_LIMIT, snapshotParams, vpsSpecs } from './data.ts';
import { vmRefOf } from './machine.ts';
import type { VpsJob } from './provision.ts';

/**
 * C0 and C1 controls (line breaks, ESC, the one-character CSI U+009B, DEL) and the bidi
 * embeddings, overrides and isolates. A description is shown in the dashboard, on the node and in
 * the owner's terminal (`hostplane snapshots list`), and any token with `instances.write` may set
 * one: an escape sequence there could write the owner's clipboard or forge table rows.
 */
const UNSAFE_TEXT = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

/** Why a snapshot description is refused, or null. */
export function descriptionProblem(description: string): string | null {
  return UNSAFE_TEXT.test(description)
    ? 'must not contain control characters (line breaks, escape sequences) or text-direction overrides'
    : null;
}

/** The product actions of the snapshot changes, by the `snapshot` job's `params.action`. */
export const SNAPSHOT_ACTIONS = {
  create: 'snapshot_create',
  restore: 'snapshot_restore',
  delete: 'snapshot_delete',
} as const;
export type SnapshotChange = keyof typeof SNAPSHOT_ACTIONS;

/** Every state in which a service has a VM to ask. */
const HAS_VM = ['active', 'suspended'] as const;

const SnapshotId = Type.String({ maxLength: 64, description: 'the snapshot id (its name)' });

/** How a snapshot looks to a client, on every surface (times as every other, CONTRACT §3). */
export function snapshotView(s: VmSnapshot) {
  const at = s.createdAt === null ? null : new Date(s.createdAt);
  return {
    id: s.name,
    name: s.name,
    description: s.description,
    created_at: at && !Number.isNaN(at.getTime()) ? isoWithOffset(at) : null,
    parent: s.parent,
    automatic: isAutomatic(s),
  };
}

/** The snapshots the plan's limit counts: the manual ones. */
const manual = (list: VmSnapshot[]) => list.filter((s) => !isAutomatic(s));

/** The plan's snapshot limit: its `snapshots` spec, read from the plan now (staff may change it). */
async function limitOf(ctx: Pick<ActionContext, 'db' | 'service'>): Promise<number> {
  const plan = await ctx.db
    .selectFrom('plans')
    .select(['label', 'specs'])
    .where('id', '=', ctx.service.plan_id)
    .executeTakeFirst();
  if (!plan) return DEFAULT_SNAPSHOT_LIMIT;
  return readStored(vpsSpecs, plan.specs, `the specs of plan ${plan.label}`).snapshots ?? DEFAULT_SNAPSHOT_LIMIT;
}

function limitReached(limit: number): AppError {
  return new AppError('limit_reached', {
    message: `This plan keeps at most ${limit} snapshots; delete one first.`,
    details: { limit },
  });
}

const missing = (id: string) =>
  new AppError('not_found', { message: `No snapshot ${JSON.stringify(id.slice(0, 64))} on this server.` });

/** The node's driver and the VM of the service (409 no_vm when it has none yet). */
async function machine(ctx: ActionContext): Promise<{ hv: Hypervisor; vm: VmRef }> {
  // The live target refuses a service without a VM (no_vm), as every live read does.
  await ctx.live();
  const vm = vmRefOf(ctx.service);
  if (!vm) throw new AppError('no_vm', { message: 'This service has no virtual machine.' });
  return { hv: ctx.drivers.driverFor(await ctx.node(), 'hypervisor'), vm };
}

/** The VM's snapshots, asked of the node now (503 when it does not answer in time). */
async function listed(ctx: ActionContext): Promise<VmSnapshot[]> {
  const { hv, vm } = await machine(ctx);
  try {
    return await withTimeout(hv.snapshots(vm), PROBE_TIMEOUT_MS * 2);
  } catch (error) {
    throw unreachable(error);
  }
}

function idOf(params: Record<string, unknown>, field: string): string {
  const id = params[field];
  if (typeof id !== 'string' || id.trim() === '') throw AppError.fields({ [field]: 'is required' });
  return id.trim();
}

/** A snapshot of the service by id, or 404 exactly like a snapshot of another server. */
async function existing(ctx: ActionContext, id: string): Promise<VmSnapshot> {
  const found = (await listed(ctx)).find((s) => s.name === id);
  if (!found) throw missing(id);
  return found;
}

export const snapshotActions: readonly ProductAction[] = [
  {
    name: 'snapshots',
    group: 'snapshots',
    method: 'read',
    params: Type.Object({}, { additionalProperties: false }),
    states: HAS_VM,
    description: "the server's disk snapshots, oldest first, with the plan's limit",
    surfaces: { session: 'panel' },
    refused: (service) => new AppError('no_vm', { message: `The service is ${service.status}.` }),
    async handler(ctx) {
      const [list, limit] = await Promise.all([listed(ctx), limitOf(ctx)]);
      const auto = list.length - manual(list).length;
      return {
        kind: 'data',
        message: `${manual(list).length} of ${limit} snapshots${auto > 0 ? ` (and ${auto} automatic)` : ''}.`,
        data: { snapshots: list.map(snapshotView), limit },
      };
    },
  },
  {
    name: SNAPSHOT_ACTIONS.create,
    group: 'snapshots',
    method: 'mutate',
    params: Type.Object(
      {
        name: Type.String({ maxLength: 64, description: 'a letter, then letters, digits, _ or -; 2 to 40' }),
        description: Type.Optional(
          Type.String({ maxLength: 500, description: 'free text; no control or text-direction characters' }),
        ),
      },
      { additionalProperties: false },
    ),
    states: ['active'],
    description: 'take a disk snapshot (the server keeps running; RAM is not saved); 202 with the job',
    usage: '{name, description?}',
    surfaces: { session: 'panel' },
    async check(_ctx, params) {
      const name = idOf(params, 'name');
      const problem =
        snapshotNameProblem(name) ??
        (name.toLowerCase().startsWith(AUTO_PREFIX) ? `must not start with ${AUTO_PREFIX} (scheduled backups)` : null);
      if (problem) throw AppError.fields({ name: problem });
      const description = typeof params.description === 'string' ? params.description : '';
      const unsafe = descriptionProblem(description);
      if (unsafe) throw AppError.fields({ description: unsafe });
      return { name, description };
    },
    async handler(ctx, params) {
      const [list, limit] = await Promise.all([listed(ctx), limitOf(ctx)]);
      if (list.some((s) => s.name === params.name)) {
        throw new AppError('conflict', {
          message: `A snapshot called ${params.name} exists already.`,
          fields: { name: 'is taken on this server' },
        });
      }
      if (manual(list).length >= limit) throw limitReached(limit);
      const job = await ctx.startJob('snapshot', { action: 'create', ...params });
      return { kind: 'job', job, message: `Snapshot ${params.name} is being taken.` };
    },
    example: () => ({ name: 'battery' }),
  },
  {
    name: SNAPSHOT_ACTIONS.restore,
    group: 'snapshots',
    method: 'mutate',
    params: Type.Object({ snapshot_id: SnapshotId }, { additionalProperties: false }),
    states: ['active'],
    description:
      'roll the disks and config back to a snapshot: the server is stopped, restored and started again if it ran; 202 with the job',
    usage: '{snapshot_id}',
    surfaces: { session: 'panel' },
    check: async (_ctx, params) => ({ snapshot_id: idOf(params, 'snapshot_id') }),
    async handler(ctx, params) {
      const snapshot = await existing(ctx, params.snapshot_id as string);
      const job = await ctx.startJob('snapshot', { action: 'restore', name: snapshot.name });
      return { kind: 'job', job, message: `Restoring snapshot ${snapshot.name}.` };
    },
    example: () => ({ snapshot_id: 'battery' }),
  },
  {
    name: SNAPSHOT_ACTIONS.delete,
    group: 'snapshots',
    method: 'mutate',
    params: Type.Object({ snapshot_id: SnapshotId }, { additionalProperties: false }),
    // A suspended server's snapshots still count against its plan: deleting one is allowed.
    states: HAS_VM,
    description: 'delete a snapshot; 202 with the job',
    usage: '{snapshot_id}',
    surfaces: { session: 'panel' },
    check: async (_ctx, params) => ({ snapshot_id: idOf(params, 'snapshot_id') }),
    async handler(ctx, params) {
      const snapshot = await existing(ctx, params.snapshot_id as string);
      const job = await ctx.startJob('snapshot', { action: 'delete', name: snapshot.name });
      return { kind: 'job', job, message: `Deleting snapshot ${snapshot.name}.` };
    },
    example: () => ({ snapshot_id: 'battery' }),
  },
];

/** What the worker does for each snapshot change (the `snapshot` job's `params.action`). */
export function snapshotJobs(
  driver: (c: VpsJob) => Hypervisor,
  vmOf: (c: VpsJob) => VmRef,
): Record<SnapshotChange, { step: string; run(c: VpsJob): Promise<void>; done: string }> {
  const paramsOf = (c: VpsJob) =>
    readStored(snapshotParams, c.env.job.params, `the params of snapshot job ${c.env.job.id}`);
  const nameOf = (c: VpsJob) => paramsOf(c).name;
  return {
    create: {
      step: 'taking the snapshot',
      async run(c: VpsJob) {
        const hv = driver(c);
        const vm = vmOf(c);
        const { name, description } = paramsOf(c);
        // Again here: two requests may both have seen room before either job ran.
        const list = await hv.snapshots(vm);
        if (!list.some((s) => s.name === name)) {
          const limit = await limitOf({ db: c.env.db, service: c.env.service });
          if (manual(list).length >= limit) throw limitReached(limit);
        }
        await hv.createSnapshot(vm, name, description ?? '');
      },
      done: 'Snapshot taken',
    },
    restore: {
      step: 'restoring the snapshot',
      run: (c: VpsJob) => driver(c).rollbackSnapshot(vmOf(c), nameOf(c)),
      done: 'Snapshot restored',
    },
    delete: {
      step: 'deleting the snapshot',
      run: (c: VpsJob) => driver(c).deleteSnapshot(vmOf(c), nameOf(c)),
      done: 'Snapshot deleted',
    },
  };
}
