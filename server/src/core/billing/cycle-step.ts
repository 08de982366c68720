// What one service's turn in the billing cycle carries (cycle.ts): the options of the run, the
// service's transaction, the time the run is as at, whether it is a dry run, and the record of
// what it did. The phases (cycle-renewal.ts, cycle-overdue.ts) take it and write nothing on a
// dry run.

import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB } from '../../db/tables.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../mail/mailer.ts';

export const REMINDER_DAYS = 3;
export const DAY_MS = 86_400_000;

export type BillingActionKind =
  | 'reminded'
  | 'renewed'
  | 'unpaid'
  | 'suspended'
  | 'unsuspended'
  | 'terminated'
  | 'cancelled'
  | 'skipped';

export interface BillingAction {
  service: number;
  label: string;
  account: number;
  action: BillingActionKind;
  detail: string;
}

/** What `deps.billing` is made of; the payments (payments.ts) take the first four. */
export interface BillingOptions {
  db: Kysely<DB>;
  /** The seller and series of the tax invoice each paid order gets (issue 35). */
  invoicing: InvoicingConfig;
  jobs: JobQueue<AppJobs>;
  mailer: Mailer;
  clock: () => Date;
  graceDays: number;
  terminateDays: number;
  logger: Logger;
}

export interface CycleStep {
  options: BillingOptions;
  trx: Transaction<DB>;
  at: Date;
  dryRun: boolean;
  /** Record what was done (or, on a dry run, would be) to the service. */
  did: (action: BillingActionKind, detail: string) => void;
}
