// Services as their owner sees and manages them (spec 4.8): list and detail, credentials
// (decrypted for the owner only), the activity feed, and staff-reviewed suspend/terminate
// requests (./service-requests.ts). Every read and write is scoped by the owner: another account's id is 404 not_owner,
// exactly like an id that does not exist. Power, status and metrics go through the service's
// product (service-actions.ts).

import { type Kysely, sql } from 'kysely';
import type { BackupSchedule, DB, Job, Location, Plan, Service } from '../../db/tables.ts';
import { scheduleFromJson } from '../backups/schedule.ts';
import { AppError } from '../errors.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import { lastJob } from '../services/service-jobs.ts';
import type { Clock } from '../time.ts';
import { openCredentials } from './credentials.ts';
import { listEvents } from './events.ts';
import type { ReadCache } from './list-cache.ts';
import * as services from './service.repository.ts';
import { createServiceRequests } from './service-requests.ts';

export interface ServiceDetail {
  service: Service;
  plan: Pick<Plan, 'id' | 'label' | 'name'>;
  location: Pick<Location, 'code' | 'name'>;
  ipv4: string | null;
  lastJob: Job | null;
  /** A renewal of it is unpaid. */
  overdue: boolean;
  /** Its scheduled backups (core/backups/), or null when they were never set. */
  backupSchedule: BackupSchedule | null;
}

export interface ServiceCredentials {
  username: string;
  password: string;
  ipv4: string | null;
  ssh: string | null;
}

export interface ListOptions extends services.ServiceScope {
  /** Terminated services too (left out unless asked). */
  includeTerminated?: boolean;
}

/** Why a service has no login details, by its status (a terminated one's were deleted with it). */
const NO_CREDENTIALS: Record<Service['status'], string> = {
  pending: 'This service has no credentials yet: it is still being provisioned.',
  provisioning: 'This service has no credentials yet: it is still being provisioned.',
  active: 'This service has no credentials.',
  suspended: 'This service has no credentials.',
  failed: 'This service has no credentials: its provisioning failed.',
  terminated: 'This service is terminated; its credentials were deleted with it.',
};

/** The tables a service list is read from (a committed write to one drops the cached lists). */
export const LIST_TABLES = ['services', 'plans', 'locations', 'ipv4_addresses', 'orders', 'backup_schedules'] as const;

export type ServicePage = { rows: ServiceDetail[]; total: number };

export function createServiceDirectory(options: {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: Clock;
  products: ProductRegistry;
  /** Where list pages are cached; none: every list reads the database. */
  listCache?: ReadCache<ServicePage>;
}) {
  const { db, secretKey, clock, listCache, products } = options;

  type Row = Service & {
    plan_label: string;
    plan_name: string;
    location_code: string;
    location_name: string;
    ipv4: string | null;
    overdue: boolean | number | string;
    backup_schedule: Record<string, unknown> | null;
  };

  function toDetail(row: Row, job: Job | null): ServiceDetail {
    const { plan_label, plan_name, location_code, location_name, ipv4, overdue, backup_schedule, ...service } = row;
    return {
      service,
      plan: { id: service.plan_id, label: plan_label, name: plan_name },
      location: { code: location_code, name: location_name },
      ipv4,
      lastJob: job,
      overdue: overdue === true || overdue === 1 || overdue === 't' || overdue === 'true',
      backupSchedule: backup_schedule ? scheduleFromJson(backup_schedule) : null,
    };
  }

  /** The caller's service in scope; 404 not_owner otherwise, exactly like a missing id. */
  async function own(accountId: number, serviceId: number, scope: services.ServiceScope = {}): Promise<Service> {
    const service = await services.findOwn(db, accountId, serviceId);
    if (!service || (scope.types && !scope.types.includes(service.type))) throw new AppError('not_owner');
    return service;
  }

  /** A page of the account's services in scope, read from the database. */
  async function listPage(
    accountId: number,
    page: number,
    perPage: number,
    options: ListOptions,
  ): Promise<ServicePage> {
    const scoped = () => {
      let query = services.ownWithContext(db, accountId);
      if (!options.includeTerminated) query = query.where('s.status', '<>', 'terminated');
      if (options.types) {
        query =
          options.types.length > 0 ? query.where('s.type', 'in', [...options.types]) : query.where(sql<boolean>`false`);
      }
      return query;
    };
    const rows = (await scoped()
      .select(sql<string>`count(*) over ()`.as('total'))
      .orderBy('s.id', 'desc')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute()) as (Row & { total: string })[];
    let total = Number(rows[0]?.total ?? 0);
    if (rows.length === 0 && page > 1) {
      // Past the last page: the window count has no row to ride on; count the same selection.
      const counted = await db
        .selectFrom(scoped().as('x'))
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      total = Number(counted.n);
    }
    return { rows: rows.map(({ total: _t, ...row }) => toDetail(row, null)), total };
  }

  return {
    own,

    /**
     * A page of the account's services in scope (terminated ones left out unless asked), newest
     * first, and how many there are: the filters are in the query, so pages and total agree.
     * Served from the list cache while nothing it shows changed (list-cache.ts); what it returns
     * is shared by every caller of the same page and must not be modified.
     */
    list(accountId: number, page: number, perPage: number, options: ListOptions = {}): Promise<ServicePage> {
      if (!listCache) return listPage(accountId, page, perPage, options);
      const key = `${page}:${perPage}:${options.includeTerminated ? 1 : 0}:${options.types?.join(',') ?? '*'}`;
      return listCache.read(accountId, key, () => listPage(accountId, page, perPage, options));
    },

    async detail(accountId: number, serviceId: number, scope: services.ServiceScope = {}): Promise<ServiceDetail> {
      const row = (await services.ownWithContext(db, accountId).where('s.id', '=', serviceId).executeTakeFirst()) as
        | Row
        | undefined;
      if (!row || (scope.types && !scope.types.includes(row.type))) throw new AppError('not_owner');
      return toDetail(row, (await lastJob(db, serviceId)) ?? null);
    },

    /** Login details of the service (secret: the caller must not cache or log them). */
    async credentials(accountId: number, serviceId: number): Promise<ServiceCredentials> {
      const service = await own(accountId, serviceId);
      const opened = openCredentials(secretKey, service);
      if (!opened) throw new AppError('no_vm', { message: NO_CREDENTIALS[service.status] });
      const ip = await db
        .selectFrom('ipv4_addresses')
        .select('address')
        .where('service_id', '=', service.id)
        .executeTakeFirst();
      return {
        username: opened.username,
        password: opened.password,
        ipv4: ip?.address ?? null,
        ssh: ip ? products.of(service.type).login(opened.username, ip.address) : null,
      };
    },

    async events(accountId: number, serviceId: number) {
      await own(accountId, serviceId);
      return listEvents(db, serviceId);
    },

    lastJob: (serviceId: number) => lastJob(db, serviceId),
    ...createServiceRequests({ db, clock }),
  };
}

export type ServiceDirectory = ReturnType<typeof createServiceDirectory>;
