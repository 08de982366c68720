// An account's webhook endpoints (CONTRACT §13): at most 10, each with a URL the SSRF guard
// accepts (./ssrf.ts), the event types it takes, a description, and a signing secret shown once
// when it is made or rotated (stored sealed with SECRET_KEY; after a rotation the previous one
// keeps signing for 24 hours). Also: the delivery log, sending a delivery again, a test event,
// and the account's low-balance threshold (wallet.low_balance).

import { type Kysely, sql } from 'kysely';
import type { DB, WebhookDelivery, WebhookEndpoint } from '../../db/tables.ts';
import { notifyOnCommit } from '../bus.ts';
import { encryptSecret } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { parsePaise } from '../money.ts';
import type { Clock } from '../time.ts';
import { ensureWallet } from '../wallet/ledger.ts';
import { disablePending, KEEP_DELIVERIES, pruneEvents } from './deliveries.ts';
import { queueEvent, TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from './outbox.ts';
import { newSecret, secretAad, secretHint } from './signature.ts';
import { type UrlPolicy, urlProblem } from './ssrf.ts';

export const MAX_ENDPOINTS = 10;
/** How long a rotated-out secret keeps signing. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;
const MAX_DESCRIPTION = 200;

export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  description?: unknown;
}

interface Checked {
  url?: string;
  events?: string[];
  description?: string;
}

/** Every field problem of an endpoint's fields (`create`: url and events are required). */
export function endpointProblems(
  input: EndpointInput,
  policy: UrlPolicy,
  create: boolean,
): { fields: Record<string, string>; value: Checked } {
  const fields: Record<string, string> = {};
  const value: Checked = {};
  if (input.url === undefined) {
    if (create) fields.url = 'is required';
  } else if (typeof input.url !== 'string') fields.url = 'must be a string';
  else {
    const url = input.url.trim();
    const problem = urlProblem(url, policy);
    if (problem) fields.url = problem;
    else value.url = url;
  }
  if (input.events === undefined) {
    if (create) fields.events = 'is required';
  } else if (!Array.isArray(input.events)) {
    fields.events = 'must be a list of event types';
  } else if (input.events.length === 0) {
    fields.events = 'must name at least one event';
  } else {
    const unknown = input.events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(e));
    if (unknown.length > 0)
      fields.events = `has unknown events (${unknown.map(String).join(', ')}); the types are ${WEBHOOK_EVENT_TYPES.join(', ')}`;
    else value.events = WEBHOOK_EVENT_TYPES.filter((t) => (input.events as unknown[]).includes(t));
  }
  if (input.description !== undefined) {
    if (typeof input.description !== 'string') fields.description = 'must be a string';
    else if (input.description.length > MAX_DESCRIPTION)
      fields.description = `must be at most ${MAX_DESCRIPTION} characters`;
    else if (/\p{Cc}/u.test(input.description)) fields.description = 'must not contain control characters';
    else value.description = input.description.trim();
  }
  return { fields, value };
}

/** A delivery with what its log shows of the event. */
export type DeliveryRow = WebhookDelivery & { event_public_id: string; type: string; request_body: string };

export interface WebhookServiceOptions {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: Clock;
  policy: UrlPolicy;
}

type Ctx = WebhookServiceOptions;

async function own(db: Kysely<DB>, accountId: number, id: number): Promise<WebhookEndpoint> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw new AppError('not_owner');
  return row;
}

const deliveryRows = (db: Kysely<DB>) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as ev', 'ev.id', 'd.event_id')
    .selectAll('d')
    .select(['ev.public_id as event_public_id', 'ev.type', 'ev.body as request_body']);

function mustBeEnabled(endpoint: WebhookEndpoint, what: string): void {
  if (!endpoint.enabled)
    throw new AppError('conflict', { message: `This endpoint is disabled: enable it first, then ${what}.` });
}

const seal = (ctx: Ctx, accountId: number, secret: string) =>
  encryptSecret(ctx.secretKey, secret, secretAad(accountId));

async function create(ctx: Ctx, accountId: number, input: EndpointInput) {
  const { fields, value } = endpointProblems(input, ctx.policy, true);
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  return ctx.db.transaction().execute(async (trx) => {
    // Two creations at once count one after the other.
    await sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${accountId}`}, 0))`.execute(trx);
    const { n } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_ENDPOINTS) {
      throw new AppError('limit_reached', {
        message: `An account may have ${MAX_ENDPOINTS} webhook endpoints; delete one first.`,
        details: { limit: MAX_ENDPOINTS },
      });
    }
    const secret = newSecret();
    const now = ctx.clock();
    const endpoint = await trx
      .insertInto('webhook_endpoints')
      .values({
        account_id: accountId,
        url: value.url as string,
        events: value.events as string[],
        description: value.description ?? '',
        secret_sealed: seal(ctx, accountId, secret),
        secret_hint: secretHint(secret),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { endpoint, secret };
  });
}

/** Change the URL, events or description; `enabled: false` turns it off, `true` on again. */
async function update(ctx: Ctx, accountId: number, id: number, input: EndpointInput & { enabled?: boolean }) {
  const { fields, value } = endpointProblems(input, ctx.policy, false);
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  const now = ctx.clock();
  return ctx.db.transaction().execute(async (trx) => {
    const current = await own(trx, accountId, id);
    let onOff = {};
    if (input.enabled === true && !current.enabled) {
      // Its failure clock starts afresh.
      onOff = { enabled: true, disabled_reason: null, disabled_at: null, failing_since: null };
    } else if (input.enabled === false && current.enabled) {
      onOff = { enabled: false, disabled_reason: 'client' as const, disabled_at: now };
      await disablePending(trx, id);
    }
    const moved = value.url !== undefined && value.url !== current.url ? { failing_since: null } : {};
    return trx
      .updateTable('webhook_endpoints')
      .set({ ...value, ...moved, ...onOff, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** A new secret, shown once; the previous one keeps signing for 24 hours beside it. */
async function rotate(ctx: Ctx, accountId: number, id: number) {
  const current = await own(ctx.db, accountId, id);
  const secret = newSecret();
  const now = ctx.clock();
  const endpoint = await ctx.db
    .updateTable('webhook_endpoints')
    .set({
      secret_sealed: seal(ctx, accountId, secret),
      secret_hint: secretHint(secret),
      previous_secret_sealed: current.secret_sealed,
      previous_secret_expires_at: new Date(now.getTime() + PREVIOUS_SECRET_MS),
      updated_at: now,
    })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { endpoint, secret };
}

/** Queue a `webhook.test` event to this endpoint alone. */
function test(ctx: Ctx, accountId: number, id: number): Promise<DeliveryRow> {
  return ctx.db.transaction().execute(async (trx) => {
    const endpoint = await own(trx, accountId, id);
    mustBeEnabled(endpoint, 'send a test');
    const data = { endpoint: { id: endpoint.id, url: endpoint.url }, message: 'A test event from Hostplane.' };
    const { eventId } = await queueEvent(trx, accountId, TEST_EVENT_TYPE, data, ctx.clock(), [endpoint.id]);
    await notifyOnCommit(trx, { topic: 'webhooks' });
    return deliveryRows(trx).where('d.event_id', '=', eventId).executeTakeFirstOrThrow();
  });
}

/** Send a delivery's event to its endpoint again, as a new delivery (after those queued before it). */
function redeliver(ctx: Ctx, accountId: number, deliveryId: string): Promise<DeliveryRow> {
  return ctx.db.transaction().execute(async (trx) => {
    const found = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['d.event_id', 'd.endpoint_id'])
      .where('d.id', '=', deliveryId)
      .where('e.account_id', '=', accountId)
      .executeTakeFirst();
    if (!found) throw new AppError('not_owner');
    mustBeEnabled(await own(trx, accountId, found.endpoint_id), 'send it again');
    const { id } = await trx
      .insertInto('webhook_deliveries')
      .values({ endpoint_id: found.endpoint_id, event_id: found.event_id, next_attempt_at: ctx.clock() })
      .returning('id')
      .executeTakeFirstOrThrow();
    await notifyOnCommit(trx, { topic: 'webhooks' });
    return deliveryRows(trx).where('d.id', '=', id).executeTakeFirstOrThrow();
  });
}

/** Set (an amount) or clear (null) the wallet.low_balance threshold; the paise set, or null. */
async function setLowBalanceThreshold(ctx: Ctx, accountId: number, input: unknown): Promise<string | null> {
  let paise: bigint | null = null;
  if (input !== null) {
    const parsed = parsePaise(input);
    if (!parsed.ok) throw AppError.fields({ low_balance_threshold: `${parsed.reason}, or null to turn it off` });
    if (parsed.paise <= 0n) throw AppError.fields({ low_balance_threshold: 'must be more than 0, or null' });
    paise = parsed.paise;
  }
  await ensureWallet(ctx.db, accountId);
  await ctx.db
    .updateTable('wallets')
    .set({ low_balance_threshold_paise: paise })
    .where('account_id', '=', accountId)
    .execute();
  return paise === null ? null : String(paise);
}

export function createWebhookService(ctx: WebhookServiceOptions) {
  const { db } = ctx;
  return {
    list: (accountId: number): Promise<WebhookEndpoint[]> =>
      db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    get: (accountId: number, id: number) => own(db, accountId, id),
    create: (accountId: number, input: EndpointInput) => create(ctx, accountId, input),
    update: (accountId: number, id: number, input: EndpointInput & { enabled?: boolean }) =>
      update(ctx, accountId, id, input),
    /** Turn a disabled endpoint on again (its failure clock starts afresh). */
    enable: (accountId: number, id: number) => update(ctx, accountId, id, { enabled: true }),
    remove: (accountId: number, id: number): Promise<WebhookEndpoint> =>
      db.transaction().execute(async (trx) => {
        const endpoint = await own(trx, accountId, id);
        await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
        await pruneEvents(trx, accountId);
        return endpoint;
      }),
    rotate: (accountId: number, id: number) => rotate(ctx, accountId, id),
    test: (accountId: number, id: number) => test(ctx, accountId, id),
    /** The endpoint's deliveries, newest first (the 100 kept, and any still pending). */
    async deliveries(accountId: number, id: number, limit = KEEP_DELIVERIES): Promise<DeliveryRow[]> {
      await own(db, accountId, id);
      return deliveryRows(db).where('d.endpoint_id', '=', id).orderBy('d.id', 'desc').limit(limit).execute();
    },
    redeliver: (accountId: number, deliveryId: string) => redeliver(ctx, accountId, deliveryId),
    /** The wallet.low_balance threshold in paise, or null when none is set. */
    async lowBalanceThreshold(accountId: number): Promise<string | null> {
      const row = await db
        .selectFrom('wallets')
        .select('low_balance_threshold_paise')
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      return row?.low_balance_threshold_paise ?? null;
    },
    setLowBalanceThreshold: (accountId: number, input: unknown) => setLowBalanceThreshold(ctx, accountId, input),
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
