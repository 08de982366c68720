// The webhook outbox (issue 37, CONTRACT §13): an event is written by the transaction that
// causes it — an order placed, a service activated, an invoice issued — as one `webhook_events`
// row (its body serialised once: every attempt sends, and signs, the same bytes) and one pending
// `webhook_deliveries` row per enabled endpoint of the account that takes its type. Nothing is
// written when no endpoint wants it. If the transaction rolls back, the event never happened.
// The dispatcher (./dispatcher.ts) is woken on commit through the bus and sends them.
//
// Kept small and free of imports above the low rooms: the ledger, the lifecycle, billing and
// deposits call it from inside their transactions.

import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { notifyOnCommit } from '../bus.ts';
import { publicId } from '../ids.ts';
import { isoWithOffset } from '../time.ts';

/** What an endpoint may subscribe to, in the order the panel lists them. */
export const WEBHOOK_EVENT_TYPES = [
  'order.created',
  'order.paid',
  'invoice.issued',
  'service.active',
  'service.suspended',
  'service.unsuspended',
  'service.terminated',
  'job.failed',
  'deposit.approved',
  'deposit.rejected',
  'wallet.low_balance',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event `test` sends to one endpoint, whatever it subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The body every delivery of an event carries (Standard Webhooks' recommended shape). */
export function eventBody(id: string, type: string, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, created_at: isoWithOffset(at), data });
}

/**
 * Queue an event (or several of the same data, e.g. order.created and order.paid of one order) for
 * the account's endpoints that take it, inside `trx`. `at` is when it happened (the caller's clock).
 */
export async function emitWebhook(
  trx: Kysely<DB>,
  accountId: number,
  types: WebhookEventType | WebhookEventType[],
  data: Record<string, unknown>,
  at: Date = new Date(),
): Promise<void> {
  const list = Array.isArray(types) ? types : [types];
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('account_id', '=', accountId)
    .where('enabled', '=', true)
    .where(sql<boolean>`events && ${sql.val(list)}::text[]`)
    .orderBy('id')
    .execute();
  if (endpoints.length === 0) return;
  for (const type of list) {
    const to = endpoints.filter((e) => e.events.includes(type)).map((e) => e.id);
    if (to.length > 0) await queueEvent(trx, accountId, type, data, at, to);
  }
  await notifyOnCommit(trx, { topic: 'webhooks' });
}

/** One event row (`at` is when it happened) and a pending delivery to each of `endpointIds`, due at once. */
export async function queueEvent(
  trx: Kysely<DB>,
  accountId: number,
  type: string,
  data: Record<string, unknown>,
  at: Date,
  endpointIds: number[],
): Promise<{ eventId: string; publicId: string }> {
  const id = publicId('msg');
  const event = await trx
    .insertInto('webhook_events')
    .values({ public_id: id, account_id: accountId, type, body: eventBody(id, type, at, data), created_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('webhook_deliveries')
    // Due now, whatever `at` says: a billing run `--at` a later date still sends its events today.
    .values(
      endpointIds.map((endpointId) => ({ endpoint_id: endpointId, event_id: event.id, next_attempt_at: sql`now()` })),
    )
    .execute();
  return { eventId: event.id, publicId: id };
}
