// What a product does in the worker: the jobs of one service (CONTRACT §3 job types), each run
// by the product-agnostic runner in worker/job-run.ts, which records progress, retries
// retryable failures and settles the service through ./lifecycle.ts.

import type { Transaction } from 'kysely';
import type { DB, Job, NodeRow, Plan, Service } from '../../db/tables.ts';
import type { ProductEnv } from './env.ts';
import type { Step } from './steps.ts';

/** Everything a job of one service starts from: what a product may use (./env.ts), and the job's rows. */
export interface JobEnv extends ProductEnv {
  job: Job;
  service: Service;
  plan: Plan;
  node: NodeRow | null;
}

export interface ProductJobs<C> {
  /**
   * What the job works with (vps: the node's driver and the VM). Throwing here fails the job
   * before any step is recorded (e.g. 409 hypervisor_not_configured: no driver for the node).
   */
  open(env: JobEnv): C;
  /** New service: the steps until it runs; then the lifecycle activates it. Undone in reverse on failure. */
  readonly provision: readonly Step<C>[];
  /** Replace the system of a running service; `done` records the outcome in the settling transaction. */
  readonly reinstall: { steps: readonly Step<C>[]; done(trx: Transaction<DB>, c: C): Promise<void> };
  /** Power signals (the `power` job's `params.signal`): what to do, and the event that says it was done. */
  readonly power: Readonly<Record<string, { run(c: C): Promise<void>; done: string }>>;
  /**
   * Snapshot changes (the `snapshot` job's `params.action`: create, restore, delete), each with
   * the step its job shows and the event that says it was done. Absent: the product has none.
   */
  readonly snapshot?: Readonly<Record<string, { step: string; run(c: C): Promise<void>; done: string }>>;
  /**
   * Move the service to the plan the job names (`resize`, CONTRACT §13): the plan is already the
   * service's when the job runs (env.plan) and was paid for; steps with undo, as provisioning's.
   * When the job gives up the steps reached are undone and the charge refunded
   * (core/services/plan-change.ts). Absent: the product cannot be resized.
   */
  readonly resize?: { steps: readonly Step<C>[]; done: string };
  /** The upstream part of each lifecycle transition; the database part is ./lifecycle.ts. */
  suspend(c: C): Promise<void>;
  unsuspend(c: C): Promise<void>;
  terminate(c: C): Promise<void>;
}
