// Signed outgoing webhooks, wired (issue 37, CONTRACT §13): the endpoints and their log
// (./webhook.service.ts), the dispatcher that sends deliveries (./dispatcher.ts; the worker
// starts it), and the SSRF policy both apply: loopback and http:// only in demo mode.

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Clock } from '../time.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { type Resolver, systemResolver, type UrlPolicy } from './ssrf.ts';
import { createWebhookService, type WebhookService } from './webhook.service.ts';

export interface WebhookOverrides {
  /** Resolve host names with this instead of the system's resolver (tests: a hosts file in code). */
  resolver?: Resolver;
  /** Allow http:// and loopback addresses (demo mode does); false forbids them even in demo mode. */
  allowLoopback?: boolean;
  /** Per-attempt timeout in milliseconds (10 000). */
  timeoutMs?: number;
}

export type Webhooks = WebhookService & {
  dispatcher: Dispatcher;
  /** What endpoints may point at, as this installation runs. */
  policy: UrlPolicy;
};

export function createWebhooks(options: {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: Clock;
  mailer: Mailer;
  logger: Logger;
  publicUrl: string;
  demo: boolean;
  overrides?: WebhookOverrides;
}): Webhooks {
  const policy: UrlPolicy = { allowLoopback: options.overrides?.allowLoopback ?? options.demo };
  const dispatcher = createDispatcher({
    db: options.db,
    secretKey: options.secretKey,
    clock: options.clock,
    mailer: options.mailer,
    logger: options.logger,
    publicUrl: options.publicUrl,
    policy,
    resolver: options.overrides?.resolver ?? systemResolver,
    ...(options.overrides?.timeoutMs === undefined ? {} : { timeoutMs: options.overrides.timeoutMs }),
  });
  const service = createWebhookService({ db: options.db, secretKey: options.secretKey, clock: options.clock, policy });
  return { ...service, dispatcher, policy };
}
