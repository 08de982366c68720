// requests list|approve|reject, jobs list|show|retry, services list|show|unsuspend (CONTRACT §1).
// Approvals run through the backend as jobs; the command waits (up to a minute) for the outcome.

import { setTimeout as sleep } from 'node:timers/promises';
import { byOperator } from '../../core/audit/audit.ts';
import type { Deps } from '../../core/deps.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import { JOB_TYPES, type Job, type JobStatus, type JobType, type ServiceStatus } from '../../db/tables.ts';
import { type Command, clean, idArg, keyValues, requiredOption, table, UsageError } from '../command.ts';

const SERVICE_STATUSES: readonly ServiceStatus[] = [
  'pending',
  'provisioning',
  'active',
  'suspended',
  'failed',
  'terminated',
];

/** What the node actually said when the job failed (clients see only the job's message): staff only. */
const errorDetail = (job: Job) => (typeof job.params.error_detail === 'string' ? job.params.error_detail : null);

function jobRow(job: Job) {
  return {
    id: job.id,
    type: job.type,
    service: job.service_id,
    status: job.status,
    progress: job.progress,
    step: job.step,
    attempts: job.attempts,
    error: job.error_code ? `${job.error_code}: ${job.error_message}` : null,
    detail: errorDetail(job),
    created_at: isoWithOffset(job.created_at),
    finished_at: job.finished_at ? isoWithOffset(job.finished_at) : null,
  };
}

/** Wait for a job to settle, so staff see the outcome; gives up quietly after `ms`. */
async function settle(deps: Deps, jobId: number, ms = 60_000): Promise<Job> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { job } = await deps.serviceStaff.job(jobId);
    if (job.status === 'succeeded' || job.status === 'failed' || Date.now() > deadline || !deps.jobs.working)
      return job;
    await sleep(250);
  }
}

const outcome = (job: Job) =>
  job.status === 'succeeded'
    ? 'done'
    : job.status === 'failed'
      ? `failed: ${clean(job.error_message)}${errorDetail(job) ? ` (${clean(errorDetail(job))})` : ''}`
      : `still ${job.status} (job ${job.id}; see \`jobs show ${job.id}\`)`;

export const serviceCommands: Command[] = [
  {
    noun: 'requests',
    verb: 'list',
    summary: 'Suspend/terminate requests from clients (default: pending)',
    options: { status: { type: 'string', description: 'pending (default), approved, rejected or all' } },
    async run(deps, { options }) {
      const status = (options.status as string | undefined) ?? 'pending';
      if (!['pending', 'approved', 'rejected', 'all'].includes(status))
        throw new UsageError('--status is pending, approved, rejected or all');
      const rows = (await deps.services.listRequests(status === 'all' ? undefined : (status as 'pending'))).map(
        (r) => ({
          id: r.id,
          kind: r.kind,
          status: r.status,
          service: `${r.service_id} ${r.label} (${r.service_status})`,
          account: r.email,
          note: r.note,
          created_at: isoWithOffset(r.created_at),
          reviewed_by: r.reviewed_by,
        }),
      );
      return { json: rows, text: table(rows, ['id', 'kind', 'status', 'service', 'account', 'note', 'created_at']) };
    },
  },
  {
    noun: 'requests',
    verb: 'approve',
    summary: 'Approve a request: suspends (stops) or terminates (deletes, releases the IPv4) through the backend',
    args: ['ID'],
    async run(deps, { args, actor }) {
      const { request, job } = await deps.serviceStaff.approveRequest(idArg(args[0]), actor, byOperator());
      const settled = await settle(deps, job.id);
      return {
        json: { request: request.id, kind: request.kind, job: jobRow(settled) },
        text: `approved ${request.kind} of service ${request.service_id}: ${outcome(settled)}`,
      };
    },
  },
  {
    noun: 'requests',
    verb: 'reject',
    summary: 'Reject a request with a reason',
    args: ['ID'],
    options: {
      reason: { type: 'string', required: true, description: 'why (kept on the request and in the service events)' },
    },
    async run(deps, { args, options, actor }) {
      const request = await deps.services.rejectRequest(
        idArg(args[0]),
        actor,
        requiredOption(options, 'reason'),
        byOperator(),
      );
      return { json: request, text: `rejected request ${request.id}` };
    },
  },
  {
    noun: 'jobs',
    verb: 'list',
    summary: 'Jobs, newest first',
    options: {
      status: { type: 'string', description: 'queued, running, succeeded or failed' },
      type: { type: 'string', description: JOB_TYPES.join(', ') },
      service: { type: 'string', description: 'a service id' },
      limit: { type: 'string', description: 'rows (default 50, at most 1000)' },
    },
    async run(deps, { options }) {
      const limit = options.limit === undefined ? 50 : idArg(String(options.limit), '--limit');
      if (limit > 1000) throw new UsageError('--limit is at most 1000');
      const status = options.status === undefined ? undefined : String(options.status);
      if (status !== undefined && !['queued', 'running', 'succeeded', 'failed'].includes(status))
        throw new UsageError('--status is queued, running, succeeded or failed');
      const type = options.type === undefined ? undefined : String(options.type);
      if (type !== undefined && !(JOB_TYPES as readonly string[]).includes(type))
        throw new UsageError(`--type is one of ${JOB_TYPES.join(', ')}`);
      const jobs = await deps.serviceStaff.listJobs({
        limit,
        ...(status ? { status: status as JobStatus } : {}),
        ...(type ? { type: type as JobType } : {}),
        ...(options.service ? { serviceId: idArg(String(options.service), '--service') } : {}),
      });
      const rows = jobs.map(jobRow);
      return {
        json: rows,
        text: table(rows, ['id', 'type', 'service', 'status', 'progress', 'attempts', 'error', 'created_at']),
      };
    },
  },
  {
    noun: 'jobs',
    verb: 'show',
    summary: "One job with its service's recent events",
    args: ['ID'],
    async run(deps, { args }) {
      const { job, events } = await deps.serviceStaff.job(idArg(args[0]));
      const json = {
        ...jobRow(job),
        params: job.params,
        events: events.map((e) => ({ kind: e.kind, message: e.message, at: isoWithOffset(e.created_at) })),
      };
      const text = [keyValues(jobRow(job)), '', 'events:', table(json.events, ['at', 'kind', 'message'])].join('\n');
      return { json, text };
    },
  },
  {
    noun: 'jobs',
    verb: 'retry',
    summary: 'Queue a failed (or stuck) job again',
    args: ['ID'],
    async run(deps, { args }) {
      const job = await deps.serviceStaff.retryJob(idArg(args[0]), byOperator());
      const settled = await settle(deps, job.id);
      return { json: jobRow(settled), text: `job ${job.id} queued again: ${outcome(settled)}` };
    },
  },
  {
    noun: 'services',
    verb: 'list',
    summary: 'Services of every account (or one)',
    options: {
      account: { type: 'string', description: 'id, e-mail or username' },
      status: { type: 'string', description: 'a service status' },
    },
    async run(deps, { options }) {
      const status = options.status === undefined ? undefined : String(options.status);
      if (status !== undefined && !(SERVICE_STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status is ${SERVICE_STATUSES.join(', ')}`);
      const services = await deps.serviceStaff.listServices({
        limit: 200,
        ...(options.account ? { accountId: (await deps.accounts.find(String(options.account))).id } : {}),
        ...(status ? { status: status as ServiceStatus } : {}),
      });
      const rows = services.map((s) => ({
        id: s.id,
        label: s.label,
        type: s.type,
        status: s.status,
        account: s.email,
        price: formatPaise(s.price_paise),
        paid_until: s.period_end ? isoWithOffset(s.period_end) : null,
      }));
      return { json: rows, text: table(rows, ['id', 'label', 'type', 'status', 'account', 'price', 'paid_until']) };
    },
  },
  {
    noun: 'services',
    verb: 'unsuspend',
    summary: 'Lift a suspension (starts the server again)',
    args: ['ID'],
    async run(deps, { args }) {
      const job = await deps.serviceStaff.unsuspend(idArg(args[0]), byOperator());
      const settled = await settle(deps, job.id);
      return { json: jobRow(settled), text: `unsuspend of service ${job.service_id}: ${outcome(settled)}` };
    },
  },
];
