// Staff operations on services (CLI): approving client requests (the suspension or termination
// runs as a job through the backend), retrying jobs, lifting suspensions, checking nodes.

import type { Kysely } from 'kysely';
import type {
  DB,
  Job,
  JobStatus,
  JobType,
  PlanType,
  Service,
  ServiceEvent,
  ServiceRequest,
  ServiceStatus,
} from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import * as jobRepo from '../jobs/job.repository.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { NodeService } from '../nodes/node.service.ts';
import { queueFor, startJob } from '../services/service-jobs.ts';
import type { Drivers } from './drivers.ts';
import { listEvents, recordEvent } from './events.ts';
import * as services from './service.repository.ts';
import { lockPending } from './service-requests.ts';

/** A queued or running job older than this, with nothing moving, may be handed to the queue again. */
export const STUCK_AFTER_MINUTES = 30;

/** One answer for a job id that does not exist, whichever command asked. */
const noJob = (jobId: number) => new AppError('not_found', { message: `No job ${jobId}.` });

export interface ServiceStaffOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  nodes: NodeService;
  drivers: Drivers;
  clock: () => Date;
}

/** Approve a client's suspension or termination request: its job starts now. */
async function approveRequest(
  { db, jobs, clock }: ServiceStaffOptions,
  requestId: number,
  reviewer: string,
  who?: Who,
): Promise<{ request: ServiceRequest; job: Job }> {
  return db.transaction().execute(async (trx) => {
    const request = await lockPending(trx, requestId);
    const job = await startJob(trx, jobs, {
      accountId: request.account_id,
      serviceId: request.service_id,
      type: request.kind,
      // A suspension the client asked for: paying never lifts it (CONTRACT §7).
      ...(request.kind === 'suspend' ? { params: { reason: 'client' } } : {}),
    });
    const updated = await trx
      .updateTable('service_requests')
      .set({ status: 'approved', reviewed_by: reviewer, decided_at: clock(), job_id: job.id })
      .where('id', '=', requestId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordEvent(
      trx,
      request.service_id,
      `${request.kind}_approved`,
      `${request.kind === 'suspend' ? 'Suspension' : 'Termination'} approved by staff`,
      { job: job.id },
    );
    // The target is the service: its suspension or termination starts with this job.
    await auditAs(trx, who, {
      action: `service.${request.kind}`,
      targetType: 'service',
      targetId: request.service_id,
      before: { request: request.id, request_status: request.status },
      after: { request_status: updated.status, job: job.id },
      at: clock(),
    });
    return { request: updated, job };
  });
}

/**
 * Hand a job to the queue again: a failed one (not a provisioning or a resize, whose charge was
 * refunded: the client orders or resizes again), or one stuck queued/running for STUCK_AFTER_MINUTES.
 */
async function retryJob(
  { db, jobs, clock }: ServiceStaffOptions,
  jobId: number,
  who?: Who,
  reason?: string,
): Promise<Job> {
  return db.transaction().execute(async (trx) => {
    const job = await jobRepo.lockForStaff(trx, jobId);
    if (!job) throw noJob(jobId);
    const stuck =
      (job.status === 'queued' || job.status === 'running') &&
      job.created_at.getTime() < clock().getTime() - STUCK_AFTER_MINUTES * 60_000;
    if (job.status === 'succeeded') throw new AppError('conflict', { message: `Job ${jobId} already succeeded.` });
    if (job.status === 'failed' && (job.type === 'provision' || job.type === 'resize')) {
      throw new AppError('conflict', {
        message:
          job.type === 'resize'
            ? 'A failed resize was refunded and the old plan kept; the client can simply resize again.'
            : 'A failed provisioning was refunded; the client can simply order again.',
      });
    }
    if (job.status !== 'failed' && !stuck)
      throw new AppError('conflict', {
        message: `Job ${jobId} is ${job.status} and not stuck (under ${STUCK_AFTER_MINUTES} minutes).`,
      });
    let updated: Job;
    try {
      updated = await jobRepo.requeueForStaff(trx, jobId, 'queued again by staff');
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new AppError('locked');
      throw error;
    }
    await jobs.enqueue(trx, queueFor(job.type), { jobId });
    await recordEvent(trx, job.service_id, 'job_retried', `Job ${jobId} (${job.type}) queued again by staff`);
    await auditAs(trx, who, {
      action: 'job.retry',
      targetType: 'service',
      targetId: job.service_id,
      before: { job: jobId, type: job.type, status: job.status, attempts: job.attempts },
      after: { job: jobId, status: updated.status },
      reason: reason ?? null,
      at: clock(),
    });
    return updated;
  });
}

/** What staff may start on a service themselves, and the statuses it may start from. */
const STAFF_JOBS = {
  suspend: ['active'],
  terminate: ['active', 'suspended', 'failed'],
} as const satisfies Record<string, readonly ServiceStatus[]>;

/**
 * Suspend (reason `staff`: paying does not lift it) or terminate a service on staff's own
 * decision: the job starts now, through the backend, as an approved client request's would.
 */
async function staffJob(
  { db, jobs, clock }: ServiceStaffOptions,
  serviceId: number,
  kind: keyof typeof STAFF_JOBS,
  reason: string,
  who?: Who,
): Promise<Job> {
  return db.transaction().execute(async (trx) => {
    const service = await services.lockForStaff(trx, serviceId);
    if (!service) throw new AppError('not_found', { message: `No service ${serviceId}.` });
    if (!(STAFF_JOBS[kind] as readonly ServiceStatus[]).includes(service.status))
      throw new AppError('conflict', {
        message: `Service ${serviceId} is ${service.status}; it cannot be ${kind === 'suspend' ? 'suspended' : 'terminated'}.`,
      });
    const job = await startJob(trx, jobs, {
      accountId: service.account_id,
      serviceId,
      type: kind,
      ...(kind === 'suspend' ? { params: { reason: 'staff' } } : {}),
    });
    await recordEvent(
      trx,
      serviceId,
      `${kind}_by_staff`,
      `${kind === 'suspend' ? 'Suspension' : 'Termination'} started by staff`,
      { job: job.id },
    );
    await auditAs(trx, who, {
      action: `service.${kind}`,
      targetType: 'service',
      targetId: serviceId,
      before: { status: service.status },
      after: { job: job.id },
      reason,
      at: clock(),
    });
    return job;
  });
}

/** Probe each node (or one) and record its health. */
async function checkNodes(
  options: ServiceStaffOptions,
  only?: string,
): Promise<{ name: string; kind: string; health: 'up' | 'down'; detail: string }[]> {
  const all = await options.nodes.list();
  const chosen = only === undefined ? all : all.filter((n) => n.name === only || String(n.id) === only);
  if (only !== undefined && chosen.length === 0) throw new AppError('not_found', { message: `No node "${only}".` });
  return Promise.all(
    chosen.map(async (node) => {
      let health: 'up' | 'down' = 'down';
      let detail: string;
      try {
        // A kind without a driver answers "no driver for … nodes yet" here.
        ({ detail } = await options.drivers.ping(node));
        health = 'up';
      } catch (error) {
        detail = error instanceof Error ? error.message : String(error);
      }
      await options.nodes.setHealth(node.id, health, detail.slice(0, 300));
      return { name: node.name, kind: node.kind, health, detail };
    }),
  );
}

export function createServiceStaff(options: ServiceStaffOptions) {
  const { db, jobs } = options;
  return {
    /** Approve a request (its job starts); a staff `who` (byOperator, byStaffMember) audits it. */
    approveRequest: (requestId: number, reviewer: string, who?: Who): Promise<{ request: ServiceRequest; job: Job }> =>
      approveRequest(options, requestId, reviewer, who),

    async unsuspend(serviceId: number, who?: Who, reason?: string): Promise<Job> {
      return db.transaction().execute(async (trx) => {
        const service = await services.lockForStaff(trx, serviceId);
        if (!service) throw new AppError('not_found', { message: `No service ${serviceId}.` });
        if (service.status !== 'suspended')
          throw new AppError('conflict', { message: `Service ${serviceId} is ${service.status}, not suspended.` });
        const job = await startJob(trx, jobs, { accountId: service.account_id, serviceId, type: 'unsuspend' });
        await auditAs(trx, who, {
          action: 'service.unsuspend',
          targetType: 'service',
          targetId: serviceId,
          before: { status: service.status, suspend_reason: service.suspend_reason },
          after: { job: job.id },
          reason: reason ?? null,
          at: options.clock(),
        });
        return job;
      });
    },

    /** Jobs, newest first, optionally of one status or service. */
    listJobs(filter: { status?: JobStatus; type?: JobType; serviceId?: number; limit: number }): Promise<Job[]> {
      return jobRepo.listForStaff(db, filter);
    },

    /** Services of every account (or one), newest first, with the owner's e-mail; `search`: label, e-mail or id. */
    listServices(filter: {
      accountId?: number;
      status?: ServiceStatus;
      type?: PlanType;
      search?: string;
      limit: number;
    }): Promise<(Service & { email: string })[]> {
      return services.listForStaff(db, filter);
    },

    /** A service of any account with its latest events and jobs. */
    async service(
      serviceId: number,
    ): Promise<{ service: Service & { email: string }; events: ServiceEvent[]; jobs: Job[] }> {
      const service = await services.findForStaff(db, serviceId);
      if (!service) throw new AppError('not_found', { message: `No service ${serviceId}.` });
      const [events, jobs] = await Promise.all([
        listEvents(db, serviceId, 20),
        jobRepo.listForStaff(db, { serviceId, limit: 20 }),
      ]);
      return { service, events, jobs };
    },

    /** A job with its service's latest events. */
    async job(jobId: number): Promise<{ job: Job; events: ServiceEvent[] }> {
      const job = await jobRepo.findForStaff(db, jobId);
      if (!job) throw noJob(jobId);
      return { job, events: await listEvents(db, job.service_id, 15) };
    },

    /** Queue a failed or stuck job again (see `retryJob` above); a staff `who` audits it. */
    retryJob: (jobId: number, who?: Who, reason?: string): Promise<Job> => retryJob(options, jobId, who, reason),

    /** Suspend a service on staff's decision (reason `staff`), audited. */
    suspend: (serviceId: number, reason: string, who?: Who): Promise<Job> =>
      staffJob(options, serviceId, 'suspend', reason, who),

    /** Terminate a service on staff's decision, audited. */
    terminate: (serviceId: number, reason: string, who?: Who): Promise<Job> =>
      staffJob(options, serviceId, 'terminate', reason, who),

    /** Probe each node (or one) and record its health. */
    checkNodes: (only?: string) => checkNodes(options, only),
  };
}

export type ServiceStaff = ReturnType<typeof createServiceStaff>;
