// The SQL of webhook deliveries: which are due (only the oldest pending delivery of each enabled
// endpoint: ordered per endpoint), claiming one under a lease, recording what the attempt came
// to, disabling an endpoint, and keeping each endpoint's log to its newest 100 deliveries.

import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, WebhookDelivery, WebhookDisabledReason, WebhookEndpoint } from '../../db/tables.ts';

/** Deliveries kept per endpoint (pending ones are never dropped). */
export const KEEP_DELIVERIES = 100;

/**
 * Up to `limit` deliveries that may be sent now: each the oldest pending one of its endpoint
 * (a later event waits while an earlier one is being retried), due, not leased, endpoint enabled.
 */
export async function dueHeads(db: Kysely<DB>, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select('d.id')
    .where('d.status', '=', 'pending')
    .where('e.enabled', '=', true)
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<=', now)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as p')
            .select('p.id')
            .whereRef('p.endpoint_id', '=', 'd.endpoint_id')
            .where('p.status', '=', 'pending')
            .whereRef('p.id', '<', 'd.id'),
        ),
      ),
    )
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** When the next delivery falls due (null: none pending on an enabled endpoint). */
export async function soonestDue(db: Kysely<DB>): Promise<Date | null> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
    .where('d.status', '=', 'pending')
    .where('e.enabled', '=', true)
    .executeTakeFirst();
  return row?.at ? new Date(row.at as Date) : null;
}

/**
 * Take a delivery for one attempt: counted as an attempt from now, leased until `leaseUntil`. A
 * worker that dies mid-attempt leaves the lease to expire, and the delivery is due again (at least
 * once). Undefined when another worker has it, it is settled, or its endpoint is disabled.
 */
export function claim(db: Kysely<DB>, id: string, now: Date, leaseUntil: Date): Promise<WebhookDelivery | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ claimed_until: leaseUntil, attempt: eb('attempt', '+', 1), last_attempt_at: now }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('webhook_endpoints as e')
          .select('e.id')
          .whereRef('e.id', '=', 'webhook_deliveries.endpoint_id')
          .where('e.enabled', '=', true),
      ),
    )
    .returningAll()
    .executeTakeFirst();
}

export interface Outcome {
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  responseStatus: number | null;
  responseBody: string | null;
  requestHeaders: Record<string, string>;
  error: string | null;
  durationMs: number;
}

/** Write what an attempt came to (only while the delivery is still pending). */
export async function settle(trx: Transaction<DB>, id: string, outcome: Outcome): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: outcome.status,
      next_attempt_at: outcome.nextAttemptAt,
      claimed_until: null,
      response_status: outcome.responseStatus,
      response_body: outcome.responseBody,
      request_headers: JSON.stringify(outcome.requestHeaders),
      error: outcome.error,
      duration_ms: outcome.durationMs,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** The endpoint, locked for the transaction (failing_since and disabling are decided under it). */
export function lockEndpoint(trx: Transaction<DB>, id: number): Promise<WebhookEndpoint | undefined> {
  return trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Turn an endpoint off; its pending deliveries fail (they can be sent again from the log). */
export async function disable(
  trx: Kysely<DB>,
  endpointId: number,
  reason: WebhookDisabledReason,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', endpointId)
    .execute();
  await disablePending(trx, endpointId);
}

/** The endpoint's pending deliveries fail: it is disabled (they can be sent again from the log). */
export async function disablePending(trx: Kysely<DB>, endpointId: number): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, claimed_until: null, error: 'not sent: the endpoint is disabled' })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

/** Keep the endpoint's newest KEEP_DELIVERIES deliveries (and every pending one), and no event nobody's log names. */
export async function prune(trx: Kysely<DB>, endpointId: number, accountId: number): Promise<void> {
  await sql`
    delete from webhook_deliveries
    where endpoint_id = ${endpointId} and status <> 'pending'
      and id < (select id from webhook_deliveries where endpoint_id = ${endpointId}
                order by id desc offset ${KEEP_DELIVERIES - 1} limit 1)`.execute(trx);
  await pruneEvents(trx, accountId);
}

/** Events of the account that no delivery names any more (pruned, or their endpoint deleted). */
export async function pruneEvents(trx: Kysely<DB>, accountId: number): Promise<void> {
  await sql`
    delete from webhook_events e
    where e.account_id = ${accountId}
      and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)`.execute(trx);
}
