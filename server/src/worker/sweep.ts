// Housekeeping: rows that can no longer be used are deleted, so the tables that every
// request reads (sessions) stay small. Mail that was delivered keeps its metadata, not its body.

import type { Kysely } from 'kysely';
import { IDEMPOTENCY_RETENTION_HOURS } from '../core/idempotency.ts';
import type { DB } from '../db/tables.ts';

export async function sweep(db: Kysely<DB>, now: Date): Promise<Record<string, number>> {
  const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000);
  const sessions = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  const tokens = await db
    .deleteFrom('account_tokens')
    .where((eb) => eb.or([eb('expires_at', '<=', dayAgo), eb('consumed_at', '<=', dayAgo)]))
    .executeTakeFirst();
  const codes = await db
    .deleteFrom('login_codes')
    .where((eb) => eb.or([eb('expires_at', '<=', dayAgo), eb('consumed_at', '<=', dayAgo)]))
    .executeTakeFirst();
  const idempotency = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<=', new Date(now.getTime() - IDEMPOTENCY_RETENTION_HOURS * 3600 * 1000))
    .executeTakeFirst();
  return {
    idempotency_keys: Number(idempotency.numDeletedRows),
    sessions: Number(sessions.numDeletedRows),
    tokens: Number(tokens.numDeletedRows),
    codes: Number(codes.numDeletedRows),
  };
}
