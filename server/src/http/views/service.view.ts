// How services and jobs look, on every surface (session and token show the same fields).

import { type TSchema, Type } from 'typebox';
import { BackupScheduleSchema, scheduleView } from '../../core/backups/schedule.ts';
import type { LiveState } from '../../core/product-kit/live.ts';
import type { ProductRegistry } from '../../core/product-kit/registry.ts';
import type { ServiceDetail } from '../../core/services/service-directory.ts';
import { isoWithOffset } from '../../core/time.ts';
import { type BackupSchedule, type Job, type Location, PLAN_TYPES, type Plan, type Service } from '../../db/tables.ts';
import { PriceSchema, type Pricing, priceView } from './price.view.ts';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);

export const JobSchema = Type.Object({
  id: Type.Integer(),
  type: Type.Union(
    [
      Type.Literal('provision'),
      Type.Literal('power'),
      Type.Literal('reinstall'),
      Type.Literal('suspend'),
      Type.Literal('unsuspend'),
      Type.Literal('terminate'),
      Type.Literal('snapshot'),
      Type.Literal('resize'),
    ],
    {
      description:
        'what the job does; snapshot: a snapshot taken, restored or deleted; resize: a move to a larger plan (stop, resize, start)',
    },
  ),
  status: Type.String({ description: 'queued, running, succeeded or failed' }),
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  step: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
  created_at: Time,
  started_at: NullableTime,
  finished_at: NullableTime,
  resource: Type.Object({ type: Type.Literal('service'), id: Type.Integer() }),
});

export function jobView(job: Job) {
  return {
    id: job.id,
    type: job.type,
    status: job.status,
    progress: job.progress,
    step: job.step,
    error: job.error_code ? { code: job.error_code, message: job.error_message ?? '' } : null,
    created_at: isoWithOffset(job.created_at),
    started_at: job.started_at ? isoWithOffset(job.started_at) : null,
    finished_at: job.finished_at ? isoWithOffset(job.finished_at) : null,
    resource: { type: 'service' as const, id: job.service_id },
  };
}

/**
 * A live figure of what runs inside a machine (CPU or memory in use, uptime, traffic): null where
 * the product cannot know it (a bare-metal BMC sees the hardware, not the operating system).
 */
export function orUnknown<T extends TSchema>(schema: T, description?: string) {
  const why = 'null when the server cannot report it (bare metal)';
  return Type.Union([schema, Type.Null()], { description: description ? `${description}; ${why}` : why });
}

const PLAN_TYPE_LIST = PLAN_TYPES.join(', ');

export const POWER_STATES = ['running', 'stopped', 'starting', 'stopping', 'unknown'] as const;

export const ServiceSchema = Type.Object({
  id: Type.Integer(),
  label: Type.String({ description: 'the name; DELETE and reinstall confirmations must equal it' }),
  type: Type.String({ description: `the plan type: ${PLAN_TYPE_LIST}` }),
  status: Type.String({ description: 'pending, provisioning, active, suspended, failed or terminated' }),
  power: Type.Union([Type.String({ description: 'running, stopped, starting, stopping or unknown' }), Type.Null()]),
  plan: Type.Object({ id: Type.Integer(), label: Type.String(), name: Type.String() }),
  region: Type.Object({ code: Type.String(), name: Type.String() }),
  ipv4: Type.Union([Type.String(), Type.Null()]),
  ptr: Type.Union([Type.String(), Type.Null()], {
    description: 'the reverse DNS (PTR) name of ipv4, as set with the rdns action; null when none is set',
  }),
  hostname: Type.Union([Type.String(), Type.Null()]),
  os: Type.Union([Type.String(), Type.Null()]),
  domain: Type.Union([Type.String(), Type.Null()]),
  price: PriceSchema,
  paid_until: NullableTime,
  overdue: Type.Boolean({ description: 'paid_until has passed and the renewal is unpaid (CONTRACT §7)' }),
  suspend_reason: Type.Union([
    Type.String({ description: 'staff, client or overdue (only overdue is lifted by paying)' }),
    Type.Null(),
  ]),
  created_at: Time,
  activated_at: NullableTime,
  backup_schedule: Type.Union([BackupScheduleSchema, Type.Null()], {
    description: 'virtual servers: scheduled backups; null when never set',
  }),
  last_job: Type.Optional(Type.Union([JobSchema, Type.Null()])),
  live_as_of: Type.Optional(
    Type.Union([Time, Type.Null()], {
      description:
        'lists: when the node said the power shown — seconds ago, older (up to a minute) when the node is slow to ' +
        'answer; null when it was not asked',
    }),
  ),
});

export interface ServiceExtras {
  plan: Pick<Plan, 'id' | 'label' | 'name'>;
  location: Pick<Location, 'code' | 'name'>;
  ipv4?: string | null;
  power?: (typeof POWER_STATES)[number] | null;
  lastJob?: Job | null;
  /** A renewal is unpaid (ServiceDetail.overdue). */
  overdue?: boolean;
  /** Its scheduled backups (ServiceDetail.backupSchedule). */
  backupSchedule?: BackupSchedule | null;
}

/** What a service's view needs of the app: the products (their fields) and how prices are shown. */
export interface ServiceViewContext {
  products: ProductRegistry;
  config: { invoicing: Pricing };
}

export function serviceView(context: ServiceViewContext, service: Service, extras: ServiceExtras) {
  const fields = context.products.of(service.type).view(service);
  return {
    id: service.id,
    label: service.label,
    type: service.type,
    status: service.status,
    power: extras.power ?? null,
    plan: { id: extras.plan.id, label: extras.plan.label, name: extras.plan.name },
    region: { code: extras.location.code, name: extras.location.name },
    ipv4: extras.ipv4 ?? null,
    ptr: service.ptr ?? null,
    hostname: fields.hostname,
    os: fields.os,
    domain: fields.domain,
    price: priceView(service.price_paise, context.config.invoicing),
    paid_until: service.period_end ? isoWithOffset(service.period_end) : null,
    overdue: extras.overdue ?? false,
    suspend_reason: service.status === 'suspended' ? (service.suspend_reason ?? 'staff') : null,
    created_at: isoWithOffset(service.created_at),
    activated_at: service.activated_at ? isoWithOffset(service.activated_at) : null,
    backup_schedule: extras.backupSchedule ? scheduleView(extras.backupSchedule) : null,
    ...(extras.lastJob !== undefined ? { last_job: extras.lastJob ? jobView(extras.lastJob) : null } : {}),
  };
}

/** Views of listed services by their (cached) row, with the live state they were made with. */
const listed = new WeakMap<ServiceDetail, { power: ServiceExtras['power']; at: number | null; view: ListedView }>();

type ListedView = ReturnType<typeof serviceView> & { live_as_of: string | null };

/**
 * The view of a service in a list (no last job), with the power its node last said and when
 * (`live_as_of`: a slow node's older answer is served with its time). A list's rows come from the
 * list cache (core/services/list-cache.ts) as the same objects until something in them changes,
 * and a node is probed once per interval, so the view (its dates formatted once) is made once per
 * row and probe rather than per request. The view returned is shared: never modify it.
 */
export function listedServiceView(
  context: ServiceViewContext,
  detail: ServiceDetail,
  live: LiveState | null,
): ListedView {
  const power = live?.power ?? null;
  const at = live?.measuredAt?.getTime() ?? null;
  const hit = listed.get(detail);
  if (hit && hit.power === power && hit.at === at) return hit.view;
  const view: ListedView = Object.assign(
    serviceView(context, detail.service, {
      plan: detail.plan,
      location: detail.location,
      ipv4: detail.ipv4,
      overdue: detail.overdue,
      backupSchedule: detail.backupSchedule,
      power,
    }),
    { live_as_of: at === null ? null : isoWithOffset(new Date(at)) },
  );
  listed.set(detail, { power, at, view });
  return view;
}
