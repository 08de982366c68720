// Sending queued webhook deliveries (issue 37): at least once, ordered per endpoint — only the
// oldest pending delivery of an endpoint is sent, so a later event never overtakes an earlier one
// that is waiting for a retry. Each attempt is claimed under a lease (a worker that dies
// mid-attempt leaves it to expire, and the delivery is sent again), signed with the endpoint's
// secret (and its previous one for 24 hours after a rotation), and sent by ./sender.ts. A failure
// is retried on the Standard Webhooks schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h,
// 24 h: ten attempts over about 3 days, each delay up to 10 % longer at random); an endpoint
// that has failed without a success for 3 days, or answered 410 Gone, is disabled and its owner
// mailed. The worker runs a pass whenever an event commits (the bus) and when the next delivery
// falls due; tests run passes themselves with an injected clock (`runDue`).

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB, WebhookDelivery, WebhookDisabledReason, WebhookEndpoint } from '../../db/tables.ts';
import type { Bus } from '../bus.ts';
import { decryptSecret } from '../crypto/secrets.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Clock } from '../time.ts';
import { claim, disable, dueHeads, lockEndpoint, type Outcome, prune, settle, soonestDue } from './deliveries.ts';
import { type AttemptResult, postOnce } from './sender.ts';
import { secretAad, signatureHeader } from './signature.ts';
import type { Resolver, UrlPolicy } from './ssrf.ts';

/** Seconds to wait after attempt n (1-based) before attempt n + 1. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** An endpoint failing this long without a success in between is disabled. */
export const DISABLE_AFTER_MS = 3 * 86_400_000;
/** How long one attempt holds its delivery: more than the 10-second timeout, with room to record it. */
export const LEASE_MS = 60_000;
export const TIMEOUT_MS = 10_000;
export const USER_AGENT = 'Hostplane-Webhooks/1';
/** Deliveries taken per round of a pass, and sent at once (each to a different endpoint). */
const BATCH = 16;
const CONCURRENCY = 4;
/** The worker looks at least this often (a lease left by a dead worker, a clock moved by hand). */
const IDLE_MS = 30_000;

export interface DispatcherOptions {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: Clock;
  mailer: Mailer;
  logger: Logger;
  publicUrl: string;
  policy: UrlPolicy;
  resolver: Resolver;
  timeoutMs?: number;
}

/** When attempt `attempt + 1` is due after `attempt` failed at `now`; null when that was the last. */
export function nextAttemptAt(attempt: number, now: Date, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_SECONDS[attempt - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.round(delay * 1000 * (1 + random() * 0.1)));
}

/** The secrets a message is signed with now: the current one, and the previous while it is valid. */
export function signingSecrets(options: Pick<DispatcherOptions, 'secretKey'>, e: WebhookEndpoint, now: Date): string[] {
  const aad = secretAad(e.account_id);
  const secrets = [decryptSecret(options.secretKey, e.secret_sealed, aad)];
  if (e.previous_secret_sealed && e.previous_secret_expires_at && e.previous_secret_expires_at > now)
    secrets.push(decryptSecret(options.secretKey, e.previous_secret_sealed, aad));
  return secrets;
}

const succeeded = (r: AttemptResult) => r.status !== null && r.status >= 200 && r.status < 300;

function failureText(r: AttemptResult): string {
  if (r.error && r.status === null) return r.error;
  if (r.status !== null && r.status >= 300 && r.status < 400)
    return `answered ${r.status} (redirects are not followed)`;
  return r.error ? `answered ${r.status}; ${r.error}` : `answered ${r.status}`;
}

async function mailOwner(
  options: DispatcherOptions,
  trx: Kysely<DB>,
  endpoint: WebhookEndpoint,
  reason: WebhookDisabledReason,
  last: string,
): Promise<void> {
  const owner = await trx
    .selectFrom('accounts')
    .select(['id', 'name', 'email'])
    .where('id', '=', endpoint.account_id)
    .executeTakeFirstOrThrow();
  const why =
    reason === 'gone'
      ? 'it answered 410 Gone, which says it no longer wants them.'
      : `every delivery to it has failed for 3 days (the last: ${last}).`;
  await options.mailer.queue(
    trx,
    owner.email,
    { template: 'webhook_disabled', name: owner.name, url: endpoint.url, why, link: `${options.publicUrl}/webhooks` },
    owner.id,
  );
}

/** Record an attempt's result, and what it means for the endpoint, in one transaction. */
async function record(
  options: DispatcherOptions,
  delivery: WebhookDelivery,
  headers: Record<string, string>,
  result: AttemptResult,
): Promise<void> {
  const now = options.clock();
  await options.db.transaction().execute(async (trx) => {
    const endpoint = await lockEndpoint(trx, delivery.endpoint_id);
    if (!endpoint) return; // deleted meanwhile, with its deliveries
    const base = {
      responseStatus: result.status,
      responseBody: result.body,
      requestHeaders: headers,
      durationMs: result.durationMs,
    };
    if (succeeded(result)) {
      await settle(trx, delivery.id, { ...base, status: 'succeeded', nextAttemptAt: null, error: result.error });
      if (endpoint.failing_since !== null)
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpoint.id).execute();
    } else {
      const error = failureText(result);
      const failingSince = endpoint.failing_since ?? now;
      const reason: WebhookDisabledReason | null =
        result.status === 410 ? 'gone' : now.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS ? 'failing' : null;
      const next = reason === null ? nextAttemptAt(delivery.attempt, now) : null;
      const outcome: Outcome = { ...base, status: next === null ? 'failed' : 'pending', nextAttemptAt: next, error };
      await settle(trx, delivery.id, outcome);
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: failingSince })
        .where('id', '=', endpoint.id)
        .execute();
      if (reason !== null && endpoint.enabled) {
        await disable(trx, endpoint.id, reason, now);
        await mailOwner(options, trx, endpoint, reason, error);
        options.logger.warn({ endpoint: endpoint.id, reason }, 'webhook endpoint disabled');
      }
    }
    await prune(trx, endpoint.id, endpoint.account_id);
  });
}

/** One attempt of one delivery, if it can still be claimed. True when an attempt was made. */
export async function attempt(options: DispatcherOptions, deliveryId: string): Promise<boolean> {
  const now = options.clock();
  const delivery = await claim(options.db, deliveryId, now, new Date(now.getTime() + LEASE_MS));
  if (!delivery) return false;
  const [endpoint, event] = await Promise.all([
    options.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', delivery.endpoint_id).executeTakeFirst(),
    options.db.selectFrom('webhook_events').selectAll().where('id', '=', delivery.event_id).executeTakeFirst(),
  ]);
  if (!endpoint || !event) return false;
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': event.public_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(
      signingSecrets(options, endpoint, now),
      event.public_id,
      timestamp,
      event.body,
    ),
  };
  const result = await postOnce(endpoint.url, headers, event.body, {
    ...options.policy,
    resolver: options.resolver,
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
  });
  await record(options, delivery, headers, result);
  return true;
}

/** Run `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<boolean>): Promise<number> {
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      if (await work(item)) done += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return done;
}

export interface Dispatcher {
  /** Send everything due now (by the injected clock), round after round; the attempts made. */
  runDue(): Promise<number>;
  /** Run passes in this process: on every `webhooks` bus message and when the next delivery is due. */
  start(bus: Bus): void;
  stop(): Promise<void>;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const runDue = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const heads = await dueHeads(options.db, options.clock(), BATCH);
      if (heads.length === 0) return total;
      const made = await eachLimited(heads, CONCURRENCY, (id) => attempt(options, id));
      total += made;
      if (made === 0) return total;
    }
  };
  let running = false;
  let pass: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = async () => {
    const soonest = await soonestDue(options.db).catch(() => null);
    const wait = soonest === null ? IDLE_MS : soonest.getTime() - options.clock().getTime();
    clearTimeout(timer);
    if (running) timer = setTimeout(kick, Math.min(IDLE_MS, Math.max(250, wait)));
  };
  const kick = (): void => {
    if (!running) return;
    if (pass) {
      again = true;
      return;
    }
    again = false;
    pass = runDue()
      .then(
        () => {},
        (error: unknown) => options.logger.error({ err: error }, 'webhook dispatch failed'),
      )
      .then(schedule)
      .finally(() => {
        pass = null;
        if (again) kick();
      });
  };
  return {
    runDue,
    start(bus) {
      if (running) return;
      running = true;
      bus.subscribe((message) => {
        if (message.topic === 'webhooks' || message.topic === 'all') kick();
      });
      kick();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await pass;
    },
  };
}
