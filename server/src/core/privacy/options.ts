// What the privacy features (data export, account deletion) are built from.

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';
import type { Bus } from '../bus.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Clock } from '../time.ts';

export interface PrivacyOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  clock: Clock;
  secretKey: Buffer;
  mailer: Mailer;
  limits: RateLimits;
  bus: Bus;
  publicUrl: string;
  /** DATA_DIR: deposit proof files live under it. */
  dataDir: string;
  logger: Logger;
}

export const HOUR_MS = 3600 * 1000;
export const DAY_MS = 24 * HOUR_MS;
