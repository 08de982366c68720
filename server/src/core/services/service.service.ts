// Services as their owner sees and manages them (spec 4.8): list and detail, credentials
// (decrypted for the owner only), the activity feed, and staff-reviewed suspend/terminate
// requests. Every read and write is scoped by the owner: another account's id is 404 not_owner,
// exactly like an id that does not exist. Power, status and metrics go through the service's
// product (service-actions.ts).

import { type Kysely, sql } from 'kysely';
import type { DB, Job, Location, Plan, PlanType, Service, ServiceRequest } from '../../db/tables.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { lastJob } from '../jobs/service-jobs.ts';
import { notify } from '../notifications/notification.service.ts';
import { productOf } from '../products/index.ts';
import type { Clock } from '../time.ts';
import { listEvents, recordEvent } from './events.ts';
import type { ReadCache } from './list-cache.ts';
import * as services from './service.repository.ts';

export interface ServiceDetail {
  service: Service;
  plan: Pick<Plan, 'id' | 'label' | 'name'>;
  location: Pick<Location, 'code' | 'name'>;
  ipv4: string | null;
  lastJob: Job | null;
  /** A renewal of it is unpaid. */
  overdue: boolean;
}

export interface ServiceCredentials {
  username: string;
  password: string;
  ipv4: string | null;
  ssh: string | null;
}

/**
 * Which of the account's services a caller sees. `types`: only services of these plan types (a
 * surface that manages some products only, e.g. {ALT_BASE_PATH}/v1: vps and baremetal); any
 * other service answers exactly like a missing id, and is neither listed nor counted.
 */
export interface ServiceScope {
  types?: readonly PlanType[];
}

export interface ListOptions extends ServiceScope {
  /** Terminated services too (left out unless asked). */
  includeTerminated?: boolean;
}

const CREDENTIALS_AAD = 'service-credentials:';

/** Why a service has no login details, by its status (a terminated one's were deleted with it). */
const NO_CREDENTIALS: Record<Service['status'], string> = {
  pending: 'This service has no credentials yet: it is still being provisioned.',
  provisioning: 'This service has no credentials yet: it is still being provisioned.',
  active: 'This service has no credentials.',
  suspended: 'This service has no credentials.',
  failed: 'This service has no credentials: its provisioning failed.',
  terminated: 'This service is terminated; its credentials were deleted with it.',
};

export function sealCredentials(
  secretKey: Buffer,
  serviceId: number,
  credentials: { username: string; password: string },
): string {
  return encryptSecret(secretKey, JSON.stringify(credentials), `${CREDENTIALS_AAD}${serviceId}`);
}

export function openCredentials(
  secretKey: Buffer,
  service: Pick<Service, 'id' | 'credentials_sealed'>,
): { username: string; password: string } | null {
  if (service.credentials_sealed === null) return null;
  return JSON.parse(decryptSecret(secretKey, service.credentials_sealed, `${CREDENTIALS_AAD}${service.id}`)) as {
    username: string;
    password: string;
  };
}

/** The tables a service list is read from (a committed write to one drops the cached lists). */
export const LIST_TABLES = ['services', 'plans', 'locations', 'ipv4_addresses', 'orders'] as const;

export type ServicePage = { rows: ServiceDetail[]; total: number };

export function createServiceService(options: {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: Clock;
  /** Where list pages are cached; none: every list reads the database. */
  listCache?: ReadCache<ServicePage>;
}) {
  const { db, secretKey, clock, listCache } = options;

  type Row = Service & {
    plan_label: string;
    plan_name: string;
    location_code: string;
    location_name: string;
    ipv4: string | null;
    overdue: boolean | number | string;
  };

  function toDetail(row: Row, job: Job | null): ServiceDetail {
    const { plan_label, plan_name, location_code, location_name, ipv4, overdue, ...service } = row;
    return {
      service,
      plan: { id: service.plan_id, label: plan_label, name: plan_name },
      location: { code: location_code, name: location_name },
      ipv4,
      lastJob: job,
      overdue: overdue === true || overdue === 1 || overdue === 't' || overdue === 'true',
    };
  }

  /** The caller's service in scope; 404 not_owner otherwise, exactly like a missing id. */
  async function own(accountId: number, serviceId: number, scope: ServiceScope = {}): Promise<Service> {
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

    async detail(accountId: number, serviceId: number, scope: ServiceScope = {}): Promise<ServiceDetail> {
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
        ssh: ip ? productOf(service.type).login(opened.username, ip.address) : null,
      };
    },

    async events(accountId: number, serviceId: number) {
      await own(accountId, serviceId);
      return listEvents(db, serviceId);
    },

    lastJob: (serviceId: number) => lastJob(db, serviceId),

    /** Ask staff to suspend or terminate; one pending request of a kind per service. */
    async request(
      accountId: number,
      serviceId: number,
      kind: 'suspend' | 'terminate',
      note: string | null,
    ): Promise<ServiceRequest> {
      return db.transaction().execute(async (trx) => {
        const service = await services.lockOwn(trx, accountId, serviceId);
        if (!service) throw new AppError('not_owner');
        // Contract codes for the state that refuses it (CONTRACT §2), not a generic conflict.
        if (service.status === 'terminated')
          throw new AppError('no_vm', { message: 'The service is already terminated.' });
        if (kind === 'suspend' && service.status === 'suspended')
          throw new AppError('suspended', { message: 'The service is already suspended.' });
        const pending = await trx
          .selectFrom('service_requests')
          .select('id')
          .where('service_id', '=', serviceId)
          .where('kind', '=', kind)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        if (pending)
          throw new AppError('duplicate_request', {
            message: `A ${kind} request for this service is already waiting for review.`,
          });
        try {
          const request = await trx
            .insertInto('service_requests')
            .values({ service_id: serviceId, account_id: accountId, kind, note })
            .returningAll()
            .executeTakeFirstOrThrow();
          await recordEvent(
            trx,
            serviceId,
            `${kind}_requested`,
            `${kind === 'suspend' ? 'Suspension' : 'Termination'} requested; waiting for staff review`,
            { request: request.id },
          );
          return request;
        } catch (error) {
          if ((error as { code?: string }).code === '23505') throw new AppError('duplicate_request');
          throw error;
        }
      });
    },

    listRequests: (status?: 'pending' | 'approved' | 'rejected') => {
      let query = db
        .selectFrom('service_requests')
        .innerJoin('services', 'services.id', 'service_requests.service_id')
        .innerJoin('accounts', 'accounts.id', 'service_requests.account_id')
        .selectAll('service_requests')
        .select(['services.label', 'services.status as service_status', 'accounts.email'])
        .orderBy('service_requests.id', 'desc')
        .limit(200);
      if (status) query = query.where('service_requests.status', '=', status);
      return query.execute();
    },

    async rejectRequest(requestId: number, reviewer: string, reason: string): Promise<ServiceRequest> {
      if (reason.trim().length < 3) throw AppError.fields({ reason: 'say why (at least 3 characters)' });
      return db.transaction().execute(async (trx) => {
        const request = await trx
          .selectFrom('service_requests')
          .selectAll()
          .where('id', '=', requestId)
          .forUpdate()
          .executeTakeFirst();
        if (!request) throw new AppError('not_found', { message: `No request ${requestId}.` });
        if (request.status !== 'pending')
          throw new AppError('conflict', { message: `Request ${requestId} is already ${request.status}.` });
        const updated = await trx
          .updateTable('service_requests')
          .set({ status: 'rejected', reason: reason.trim(), reviewed_by: reviewer, decided_at: clock() })
          .where('id', '=', requestId)
          .returningAll()
          .executeTakeFirstOrThrow();
        const what = request.kind === 'suspend' ? 'Suspension' : 'Termination';
        await recordEvent(
          trx,
          request.service_id,
          `${request.kind}_rejected`,
          `${what} request rejected: ${reason.trim()}`,
        );
        const label = await services.labelForStaff(trx, request.service_id);
        // Approvals tell the client through the job's outcome; a refusal has no job, so here.
        await notify(trx, request.account_id, {
          kind: `${request.kind}_request_rejected`,
          title: `${what} of ${label} was declined`,
          body: `Your request to ${request.kind} ${label} was declined: ${reason.trim()}`,
          data: { service: request.service_id, request: request.id },
        });
        return updated;
      });
    },
  };
}

export type ServiceService = ReturnType<typeof createServiceService>;
