// Idempotent requests (CONTRACT §5). The work, its effects and the stored answer commit in one
// transaction. A transaction-scoped advisory lock on (account, key) makes a duplicate that
// arrives while the first is running answer 409 idempotency_in_progress instead of waiting; a
// duplicate after it gets the stored status and body byte for byte; the same key with another
// payload (or on another route) is 409 idempotency_conflict. Failures are not stored: they
// changed nothing, so a retry with the same key runs again (e.g. after topping up the wallet).

import { createHash } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/tables.ts';
import { AppError } from './errors.ts';

/** Keys are kept at least this long (CONTRACT §5 says ≥ 24 hours). */
export const IDEMPOTENCY_RETENTION_HOURS = 48;

export interface IdempotentAnswer {
  status: number;
  /** The JSON body exactly as first sent. */
  body: string;
  replayed: boolean;
}

/**
 * How deep a payload may nest. Request schemas bound their bodies far below this; the limit makes
 * the hash safe for any input (a JSON body nested 100,000 deep would otherwise overflow the
 * stack here, a 500), and a payload past it is a client's mistake: 422.
 */
export const MAX_PAYLOAD_DEPTH = 32;

function canonical(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_PAYLOAD_DEPTH) {
    throw AppError.fields({ body: `nests more than ${MAX_PAYLOAD_DEPTH} levels of arrays or objects` });
  }
  if (Array.isArray(value)) return value.map((item) => canonical(item, depth + 1));
  return Object.fromEntries(
    Object.keys(value as object)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k], depth + 1)]),
  );
}

/** Same payload, any key order or whitespace → same hash. */
export function requestHash(scope: string, payload: unknown): string {
  return createHash('sha256')
    .update(scope)
    .update('\0')
    .update(JSON.stringify(canonical(payload)))
    .digest('hex');
}

/** Why `key` is not a usable idempotency key, or null when it is. */
export function keyProblem(key: unknown): string | null {
  if (key === undefined || key === '') return 'is required (any unique string per order, 1–255 characters)';
  if (typeof key !== 'string' || key.length > 255 || /\p{Cc}/u.test(key)) return 'must be 1–255 printable characters';
  return null;
}

export function checkKey(key: unknown, field = 'idempotency_key'): string {
  const problem = keyProblem(key);
  if (problem !== null) throw AppError.fields({ [field]: problem });
  return key as string;
}

/** The key of a request: the body's `idempotency_key` or the Idempotency-Key header; if both, they must match. */
export function requestKey(bodyKey: unknown, header: unknown): string {
  const headerKey = typeof header === 'string' ? header : undefined;
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey)
    throw AppError.fields({ idempotency_key: 'differs from the Idempotency-Key header' });
  return checkKey(bodyKey ?? headerKey);
}

/** The body key's problem, for a route's `fieldRules` (absent is fine there: the header may carry it). */
export function keyFieldRule(bodyKey: unknown): Record<string, string> {
  const problem = bodyKey === undefined ? null : keyProblem(bodyKey);
  return problem === null ? {} : { idempotency_key: problem };
}

export interface IdempotentRequest {
  accountId: number;
  key: string;
  scope: string;
  payload: unknown;
}

/** The stored answer to the key, if one is kept; throws idempotency_conflict for another payload. */
async function storedAnswer(
  db: Kysely<DB>,
  request: IdempotentRequest,
  hash: string,
): Promise<IdempotentAnswer | null> {
  const existing = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', request.accountId)
    .where('key', '=', request.key)
    .where('created_at', '>', new Date(Date.now() - IDEMPOTENCY_RETENTION_HOURS * 3600 * 1000))
    .executeTakeFirst();
  if (!existing) return null;
  if (existing.request_hash !== hash || existing.scope !== request.scope) {
    throw new AppError('idempotency_conflict', {
      message: 'This idempotency key was already used with a different request.',
    });
  }
  return { status: existing.response_status, body: existing.response_body, replayed: true };
}

export async function runIdempotent(
  db: Kysely<DB>,
  request: IdempotentRequest,
  work: (trx: Transaction<DB>) => Promise<{ status: number; body: unknown }>,
): Promise<IdempotentAnswer> {
  const hash = requestHash(request.scope, request.payload);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean }>`
      select pg_try_advisory_xact_lock(hashtextextended(${`idempotency:${request.accountId}:${request.key}`}, 0)) as ok`.execute(
      trx,
    );
    if (!rows[0]?.ok) throw new AppError('idempotency_in_progress');
    const stored = await storedAnswer(trx, request, hash);
    if (stored) return stored;
    const result = await work(trx);
    const body = JSON.stringify(result.body);
    await trx
      .insertInto('idempotency_keys')
      .values({
        account_id: request.accountId,
        key: request.key,
        scope: request.scope,
        request_hash: hash,
        response_status: result.status,
        response_body: body,
      })
      // A record past retention may still be there (the sweep runs every 15 minutes): replaced.
      .onConflict((oc) =>
        oc.columns(['account_id', 'key']).doUpdateSet((eb) => ({
          scope: eb.ref('excluded.scope'),
          request_hash: eb.ref('excluded.request_hash'),
          response_status: eb.ref('excluded.response_status'),
          response_body: eb.ref('excluded.response_body'),
          created_at: eb.ref('excluded.created_at'),
        })),
      )
      .execute();
    return { status: result.status, body, replayed: false };
  });
}
