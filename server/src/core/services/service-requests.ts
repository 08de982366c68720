// Staff-reviewed requests of a client about its service (spec 4.8): suspend or terminate, one
// pending request of a kind per service; staff reject them here (approving runs the job through
// the staff commands, core/services/staff.ts). Scoped by the owner like every service read.

import type { Kysely, Transaction } from 'kysely';
import type { DB, ServiceRequest } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { notify } from '../notifications/notification.service.ts';
import type { Clock } from '../time.ts';
import { recordEvent } from './events.ts';
import * as services from './service.repository.ts';

/** The pending request `requestId`, locked until the transaction ends (staff decide it); 404 or 409 otherwise. */
export async function lockPending(trx: Transaction<DB>, requestId: number): Promise<ServiceRequest> {
  const request = await trx
    .selectFrom('service_requests')
    .selectAll()
    .where('id', '=', requestId)
    .forUpdate()
    .executeTakeFirst();
  if (!request) throw new AppError('not_found', { message: `No request ${requestId}.` });
  if (request.status !== 'pending')
    throw new AppError('conflict', { message: `Request ${requestId} is already ${request.status}.` });
  return request;
}

export function createServiceRequests({ db, clock }: { db: Kysely<DB>; clock: Clock }) {
  return {
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

    /** Refuse a pending request; a staff `who` (byOperator, byStaffMember) audits it. */
    async rejectRequest(requestId: number, reviewer: string, reason: string, who?: Who): Promise<ServiceRequest> {
      if (reason.trim().length < 3) throw AppError.fields({ reason: 'say why (at least 3 characters)' });
      return db.transaction().execute(async (trx) => {
        const request = await lockPending(trx, requestId);
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
        await auditAs(trx, who, {
          action: `service_request.reject`,
          targetType: 'service_request',
          targetId: request.id,
          before: { status: request.status, kind: request.kind, service_id: request.service_id },
          after: { status: updated.status },
          reason: reason.trim(),
          at: clock(),
        });
        return updated;
      });
    },
  };
}
