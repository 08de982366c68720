// Resizing a virtual server to a larger plan (issue 37, CONTRACT §13). Which plans it may move to
// is decided here: another vps plan, sold now in the server's location, with no fewer CPU cores,
// no less memory and no smaller disk (a disk only grows), and either dearer or larger in one of
// them. What the move costs and its charge are the kit's (ActionContext.planChange: the pro-rata
// difference for the rest of the paid period, charged at once with its invoice; refunded if the
// job gives up). The job stops the VM (ACPI, forced after a minute), sets CPU and memory, grows
// the disk, and starts it; given up, CPU and memory go back and the VM is started again (a disk
// already grown stays grown: no hypervisor shrinks one).
//
// `resize` takes `plan_id` (the session surface: POST /services/ {action: "resize", id, plan_id})
// or `plan`, a label or id (the token surface: POST /instances/{id}/resize {plan});
// `resize_options` (GET /api/v1/client/vps/?service=&action=resize_options) lists the plans it
// may move to, each with what it would charge now.

import { type Kysely, sql } from 'kysely';
import { Type } from 'typebox';
import type { DB, Plan, Service } from '../../../db/tables.ts';
import type { VmResize } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import { formatPaise } from '../../money.ts';
import type { ActionContext, PlanChangeQuote, ProductAction } from '../../product-kit/actions.ts';
import { readStored } from '../../product-kit/data.ts';
import type { Step } from '../../product-kit/steps.ts';
import { isoWithOffset } from '../../time.ts';
import { type VpsSpecs, vpsSpecs } from './data.ts';
import { driver, type VpsJob, vmOrThrow } from './provision.ts';

const MAX_ID = 2_147_483_647;
const LABEL = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const specsOf = (plan: Pick<Plan, 'label' | 'specs'>): VpsSpecs =>
  readStored(vpsSpecs, plan.specs, `the specs of plan ${plan.label}`);

const RESOURCES = [
  ['vcpu', 'CPU cores', ''],
  ['ram_mb', 'memory', ' MB'],
  ['disk_gb', 'disk', ' GB'],
] as const;

/**
 * Why `to` is not a plan a server on `from` may move to (in `location`), or null. Pure: the
 * caller has found out whether `to` is sold in the server's location.
 */
export function resizeProblem(
  from: Pick<Plan, 'id' | 'label' | 'type' | 'price_paise' | 'specs'>,
  to: Pick<Plan, 'id' | 'label' | 'type' | 'price_paise' | 'specs' | 'active'>,
  soldHere: { yes: boolean; location: string },
): string | null {
  if (to.type !== 'vps') return `is a ${to.type} plan; a virtual server moves only to another virtual-server plan`;
  if (to.id === from.id) return 'is the current plan';
  if (!to.active) return 'is no longer sold';
  if (!soldHere.yes) return `is not sold in ${soldHere.location}, where the server is`;
  const a = specsOf(from);
  const b = specsOf(to);
  const smaller = RESOURCES.filter(([key]) => b[key] < a[key]).map(
    ([key, name, unit]) => `${name} ${b[key]}${unit} < ${a[key]}${unit}`,
  );
  if (smaller.length > 0) return `is smaller than the current plan (${smaller.join(', ')}); a server only grows`;
  const larger = RESOURCES.some(([key]) => b[key] > a[key]);
  if (!larger && BigInt(to.price_paise) <= BigInt(from.price_paise)) return 'is not larger than the current plan';
  return null;
}

/** The plan a request names, by id or label; null when none is. */
async function findPlan(db: Kysely<DB>, ref: number | string): Promise<Plan | null> {
  const query = db.selectFrom('plans').selectAll();
  const found =
    typeof ref === 'number'
      ? await query.where('id', '=', ref).executeTakeFirst()
      : await query.where('label', '=', ref).executeTakeFirst();
  return found ?? null;
}

/** Whether `plan` is sold in the service's location, and that location's name. */
async function soldIn(db: Kysely<DB>, plan: Pick<Plan, 'id'>, service: Service) {
  const row = await db
    .selectFrom('locations')
    .leftJoin('plan_locations', (join) =>
      join.onRef('plan_locations.location_id', '=', 'locations.id').on('plan_locations.plan_id', '=', plan.id),
    )
    .select(['locations.name', 'locations.active', 'plan_locations.plan_id'])
    .where('locations.id', '=', service.location_id)
    .executeTakeFirstOrThrow();
  return { yes: row.plan_id !== null && row.active, location: row.name };
}

const currentPlan = (ctx: Pick<ActionContext, 'db' | 'service'>) =>
  ctx.db.selectFrom('plans').selectAll().where('id', '=', ctx.service.plan_id).executeTakeFirstOrThrow();

/** A quote as clients see it (amounts as decimal strings, CONTRACT §3). */
function quoteView(q: PlanChangeQuote) {
  const specs = specsOf(q.plan);
  return {
    id: q.plan.id,
    label: q.plan.label,
    name: q.plan.name,
    specs: { vcpu: specs.vcpu, ram_mb: specs.ram_mb, disk_gb: specs.disk_gb, bandwidth_tb: specs.bandwidth_tb },
    price: { monthly: formatPaise(q.plan.price_paise), currency: 'INR' },
    difference: { monthly: formatPaise(q.proration.diffPaise), currency: 'INR' },
    charge_now: { amount: formatPaise(q.totalPaise), tax: formatPaise(q.taxPaise), currency: 'INR' },
    remaining_seconds: Number(q.proration.remainingSeconds),
    period_seconds: Number(q.proration.periodSeconds),
  };
}

/** The shape of a plan reference: `plan_id` (a number) or `plan` (a label, or an id as text). */
function planRef(params: Record<string, unknown>): { ref: number | string; field: 'plan_id' | 'plan' } {
  const { plan_id: id, plan } = params;
  if (id !== undefined && plan !== undefined) throw AppError.fields({ plan: 'give plan_id or plan, not both' });
  if (id !== undefined) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > MAX_ID)
      throw AppError.fields({ plan_id: 'must be a plan id' });
    return { ref: id, field: 'plan_id' };
  }
  if (typeof plan !== 'string' || plan.trim() === '') throw AppError.fields({ plan_id: 'is required' });
  const text = plan.trim().toLowerCase();
  if (/^\d{1,10}$/.test(text) && Number(text) <= MAX_ID) return { ref: Number(text), field: 'plan' };
  return { ref: LABEL.test(text) ? text : '', field: 'plan' };
}

const HAS_VM_ACTIVE = ['active'] as const;

export const resizeActions: readonly ProductAction[] = [
  {
    name: 'resize',
    method: 'mutate',
    params: Type.Object(
      {
        plan_id: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'resize: the larger plan' })),
        plan: Type.Optional(Type.String({ maxLength: 64, description: 'resize: the larger plan, its label or id' })),
      },
      { additionalProperties: false },
    ),
    states: HAS_VM_ACTIVE,
    description:
      '{plan_id | plan}: move to a larger plan of the same location (no fewer cores, no less memory, no smaller ' +
      'disk); the price difference for the rest of the paid period is charged now (pro rata, with GST; 402 ' +
      'insufficient_funds when the wallet is short), then the server is stopped, resized and started; 202 with ' +
      'the job. A smaller, equal, other-type, other-region or retired plan is 422 saying why',
    usage: '{plan_id | plan}',
    surfaces: { session: 'services', token: 'action' },
    check: async (_ctx, params) => planRef(params),
    async handler(ctx, params) {
      await ctx.live();
      const { ref, field } = params as ReturnType<typeof planRef>;
      const target = ref === '' ? null : await findPlan(ctx.db, ref);
      if (!target) throw AppError.fields({ [field]: 'is not a plan of the catalog' });
      const from = await currentPlan(ctx);
      const problem = resizeProblem(from, target, await soldIn(ctx.db, target, ctx.service));
      if (problem) throw AppError.fields({ [field]: problem }, `Plan ${target.label} ${problem}.`);
      const { job, quote, invoice } = await ctx.planChange.apply(target, { type: 'resize' });
      const charged =
        quote.totalPaise > 0n
          ? `₹${formatPaise(quote.totalPaise)} charged for the rest of the period (invoice ${invoice?.number})`
          : 'nothing to pay for the rest of the period';
      return { kind: 'job', job, message: `Resizing ${ctx.service.label} to ${target.name}: ${charged}.` };
    },
    example: () => ({ plan: 'vps-4c-8g' }),
  },
  {
    name: 'resize_options',
    group: 'resize',
    method: 'read',
    params: Type.Object({}, { additionalProperties: false }),
    states: HAS_VM_ACTIVE,
    description:
      'the larger plans this server may move to, each with what resizing to it charges now (the pro-rata ' +
      'difference for the rest of the paid period, GST included)',
    surfaces: { session: 'panel' },
    async handler(ctx) {
      const from = await currentPlan(ctx);
      const candidates = await ctx.db
        .selectFrom('plans')
        .innerJoin('plan_locations', 'plan_locations.plan_id', 'plans.id')
        .selectAll('plans')
        .where('plan_locations.location_id', '=', ctx.service.location_id)
        .where('plans.type', '=', 'vps')
        .where('plans.active', '=', true)
        .orderBy(sql`price_paise`)
        .orderBy('plans.id')
        .execute();
      const location = await ctx.db
        .selectFrom('locations')
        .select(['name', 'active'])
        .where('id', '=', ctx.service.location_id)
        .executeTakeFirstOrThrow();
      const sold = { yes: location.active, location: location.name };
      const plans = [];
      for (const plan of candidates.filter((p) => resizeProblem(from, p, sold) === null)) {
        plans.push(quoteView(await ctx.planChange.quote(plan)));
      }
      const fromSpecs = specsOf(from);
      return {
        kind: 'data',
        message: plans.length === 0 ? 'No larger plan is sold here.' : `${plans.length} larger plans.`,
        data: {
          current: {
            id: from.id,
            label: from.label,
            name: from.name,
            specs: { vcpu: fromSpecs.vcpu, ram_mb: fromSpecs.ram_mb, disk_gb: fromSpecs.disk_gb },
            price: { monthly: formatPaise(ctx.service.price_paise), currency: 'INR' },
          },
          paid_until: ctx.service.period_end ? isoWithOffset(ctx.service.period_end) : null,
          plans,
        },
      };
    },
  },
];

/** The resize a plan's specs ask of the VM. */
const target = (specs: VpsSpecs): VmResize => ({ cores: specs.vcpu, memoryMb: specs.ram_mb, diskGb: specs.disk_gb });

/** What the VM had before (the job's `from_specs`, plan-change.ts), for the undo. */
function before(c: VpsJob): VmResize {
  return target(readStored(vpsSpecs, c.env.job.params.from_specs, `the from_specs of resize job ${c.env.job.id}`));
}

export const resizeJob: { steps: readonly Step<VpsJob>[]; done: string } = {
  steps: [
    {
      name: 'stopping the server',
      progress: 10,
      run: (c) => driver(c).shutdown(vmOrThrow(c), 60),
      undo: (c) => driver(c).start(vmOrThrow(c)),
    },
    {
      name: 'resizing CPU, memory and disk',
      progress: 40,
      run: (c) => driver(c).resize(vmOrThrow(c), target(specsOf(c.env.plan))),
      // CPU and memory go back; a disk already grown stays (the driver never shrinks one).
      undo: (c) => driver(c).resize(vmOrThrow(c), before(c)),
    },
    { name: 'starting', progress: 80, run: (c) => driver(c).start(vmOrThrow(c)) },
  ],
  done: 'Resized to',
};
