// /api/v1/staff/services (CONTRACT §14): every account's services. GET lists (support; by status,
// type, account) and shows one with its events and jobs (support); POST {action, id, job_id?,
// reason} operates on one through the staff CLI's core (core/services/staff.ts): suspend,
// unsuspend and retry_job need billing, terminate needs admin (403 forbidden_role below). Each
// starts a job through the backend and is audited in the transaction that starts it.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import type { StaffRole } from '../../core/staff/roles.ts';
import type { Job } from '../../db/tables.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { requireRole, whoOfStaff } from './context.ts';
import {
  eventView,
  jobView,
  Reason,
  StaffEventSchema,
  StaffJobSchema,
  StaffServiceSchema,
  serviceView,
} from './views.ts';

const tags = ['staff: services'];

const STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'] as const;
const ACTIONS = ['suspend', 'unsuspend', 'terminate', 'retry_job'] as const;
type Action = (typeof ACTIONS)[number];

export const SERVICE_ACTION_ROLES: Record<Action, StaffRole> = {
  suspend: 'billing',
  unsuspend: 'billing',
  retry_job: 'billing',
  terminate: 'admin',
};

export async function staffServiceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const types = deps.products.all.map((p) => p.type);

  app.get(
    '/services',
    {
      schema: {
        operationId: 'staffServices',
        tags,
        summary: 'Services of every account (or one), newest first; q searches label, e-mail or id',
        querystring: Type.Object({
          status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))),
          type: Type.Optional(Type.String({ maxLength: 32, description: 'a plan type, e.g. vps' })),
          account_id: Type.Optional(Type.Integer({ minimum: 1 })),
          q: Type.Optional(
            Type.String({ maxLength: 200, description: "part of the label or of the owner's e-mail; or the id" }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: { 200: okSchema({ services: Type.Array(StaffServiceSchema) }), ...sessionErrors(422) },
      },
    },
    async (request) => {
      const { status, type, account_id, q } = request.query;
      if (type !== undefined && !(types as string[]).includes(type))
        throw AppError.fields({ type: `is one of ${types.join(', ')}` });
      const rows = await deps.serviceStaff.listServices({
        limit: request.query.limit ?? 100,
        ...(status ? { status } : {}),
        ...(type ? { type: type as (typeof types)[number] } : {}),
        ...(account_id ? { accountId: account_id } : {}),
        ...(q?.trim() ? { search: q.trim() } : {}),
      });
      return { success: true as const, message: 'Services.', services: rows.map(serviceView) };
    },
  );

  app.get(
    '/services/:id',
    {
      schema: {
        operationId: 'staffService',
        tags,
        summary: 'One service with its latest events and jobs (with what the node said when a job failed)',
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        response: {
          200: okSchema({
            service: StaffServiceSchema,
            events: Type.Array(StaffEventSchema),
            jobs: Type.Array(StaffJobSchema),
          }),
          ...sessionErrors(404, 422),
        },
      },
    },
    async (request) => {
      const { service, events, jobs } = await deps.serviceStaff.service(request.params.id);
      return {
        success: true as const,
        message: 'Service.',
        service: serviceView(service),
        events: events.map(eventView),
        jobs: jobs.map(jobView),
      };
    },
  );

  app.post(
    '/services',
    {
      schema: {
        operationId: 'staffServiceAction',
        tags,
        summary: 'Suspend, unsuspend or terminate a service, or queue a failed job again',
        description:
          'suspend, unsuspend, retry_job: billing or admin; terminate: admin. A reason is required (kept in the audit ' +
          'log). retry_job needs job_id, a job of this service. The change runs as a job; `job` is it as it started. ' +
          '409 when the service is not in a state for it, or another job runs.',
        body: mutationBody({
          action: Type.Union(ACTIONS.map((a) => Type.Literal(a))),
          id: Type.Integer({ minimum: 1 }),
          job_id: Type.Optional(Type.Integer({ minimum: 1 })),
          reason: Reason,
        }),
        response: { 200: okSchema({ job: StaffJobSchema }), ...sessionErrors(404, 409, 422) },
      },
    },
    async (request) => {
      const { action, id, job_id } = request.body;
      requireRole(request, SERVICE_ACTION_ROLES[action]);
      const reason = request.body.reason?.trim() ?? '';
      const fields: Record<string, string> = {};
      if (reason.length < 3) fields.reason = 'say why (at least 3 characters; kept in the audit log)';
      if (action === 'retry_job' && job_id === undefined) fields.job_id = 'is required to retry';
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      const who = whoOfStaff(request);
      let job: Job;
      if (action === 'retry_job') {
        const found = await deps.serviceStaff.job(job_id as number);
        if (found.job.service_id !== id)
          throw new AppError('not_found', { message: `No job ${job_id} of service ${id}.` });
        job = await deps.serviceStaff.retryJob(job_id as number, who, reason);
      } else if (action === 'unsuspend') job = await deps.serviceStaff.unsuspend(id, who, reason);
      else if (action === 'suspend') job = await deps.serviceStaff.suspend(id, reason, who);
      else job = await deps.serviceStaff.terminate(id, reason, who);
      return { success: true as const, message: `${action} started (job ${job.id}).`, job: jobView(job) };
    },
  );
}
