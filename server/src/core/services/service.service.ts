// Services as their owner sees and manages them (spec 4.8): list and detail, credentials
// (decrypted for the owner only), the activity feed, and staff-reviewed suspend/terminate
// requests. Every read and write is scoped by the owner: another account's id is 404 not_owner,
// exactly like an id that does not exist. Power, status and metrics go through the backend
// (service-backend.ts).

import type { Kysely } from 'kysely';
import type { DB, Job, Location, Plan, Service, ServiceRequest } from '../../db/tables.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { lastJob } from '../jobs/service-jobs.ts';
import type { Clock } from '../time.ts';
import { listEvents, recordEvent } from './events.ts';

export interface ServiceDetail {
  service: Service;
  plan: Pick<Plan, 'id' | 'label' | 'name'>;
  location: Pick<Location, 'code' | 'name'>;
  ipv4: string | null;
  lastJob: Job | null;
}

export interface ServiceCredentials {
  username: string;
  password: string;
  ipv4: string | null;
  ssh: string | null;
}

const CREDENTIALS_AAD = 'service-credentials:';

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

export function createServiceService(options: { db: Kysely<DB>; secretKey: Buffer; clock: Clock }) {
  const { db, secretKey, clock } = options;

  async function details(services: Service[]): Promise<ServiceDetail[]> {
    if (services.length === 0) return [];
    const ids = services.map((s) => s.id);
    const [plans, locations, ips, jobs] = await Promise.all([
      db
        .selectFrom('plans')
        .select(['id', 'label', 'name'])
        .where('id', 'in', [...new Set(services.map((s) => s.plan_id))])
        .execute(),
      db
        .selectFrom('locations')
        .select(['id', 'code', 'name'])
        .where('id', 'in', [...new Set(services.map((s) => s.location_id))])
        .execute(),
      db.selectFrom('ipv4_addresses').select(['service_id', 'address']).where('service_id', 'in', ids).execute(),
      db.selectFrom('jobs').selectAll().where('service_id', 'in', ids).orderBy('id', 'desc').execute(),
    ]);
    return services.map((service) => ({
      service,
      plan: plans.find((p) => p.id === service.plan_id) as Pick<Plan, 'id' | 'label' | 'name'>,
      location: locations.find((l) => l.id === service.location_id) as Pick<Location, 'code' | 'name'>,
      ipv4: ips.find((ip) => ip.service_id === service.id)?.address ?? null,
      lastJob: jobs.find((j) => j.service_id === service.id) ?? null,
    }));
  }

  async function own(accountId: number, serviceId: number): Promise<Service> {
    const service = await db
      .selectFrom('services')
      .selectAll()
      .where('id', '=', serviceId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!service) throw new AppError('not_owner');
    return service;
  }

  return {
    own,
    details,

    async list(accountId: number, page: number, perPage: number, includeTerminated = false) {
      let query = db.selectFrom('services').where('account_id', '=', accountId);
      if (!includeTerminated) query = query.where('status', '<>', 'terminated');
      const [rows, count] = await Promise.all([
        query
          .selectAll()
          .orderBy('id', 'desc')
          .limit(perPage)
          .offset((page - 1) * perPage)
          .execute(),
        query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows: await details(rows), total: Number(count.n) };
    },

    async detail(accountId: number, serviceId: number): Promise<ServiceDetail> {
      const [detail] = await details([await own(accountId, serviceId)]);
      return detail as ServiceDetail;
    },

    /** Login details of the service (secret: the caller must not cache or log them). */
    async credentials(accountId: number, serviceId: number): Promise<ServiceCredentials> {
      const service = await own(accountId, serviceId);
      const opened = openCredentials(secretKey, service);
      if (!opened)
        throw new AppError('no_vm', { message: 'This service has no credentials yet: it is still being provisioned.' });
      const ip = await db
        .selectFrom('ipv4_addresses')
        .select('address')
        .where('service_id', '=', service.id)
        .executeTakeFirst();
      return {
        username: opened.username,
        password: opened.password,
        ipv4: ip?.address ?? null,
        ssh: ip && service.type === 'vps' ? `ssh ${opened.username}@${ip.address}` : null,
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
        const service = await trx
          .selectFrom('services')
          .selectAll()
          .where('id', '=', serviceId)
          .where('account_id', '=', accountId)
          .forUpdate()
          .executeTakeFirst();
        if (!service) throw new AppError('not_owner');
        if (service.status === 'terminated' || (kind === 'suspend' && service.status === 'suspended')) {
          throw new AppError('conflict', { message: `The service is already ${service.status}.` });
        }
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
        await recordEvent(
          trx,
          request.service_id,
          `${request.kind}_rejected`,
          `${request.kind === 'suspend' ? 'Suspension' : 'Termination'} request rejected: ${reason.trim()}`,
        );
        return updated;
      });
    },
  };
}

export type ServiceService = ReturnType<typeof createServiceService>;
