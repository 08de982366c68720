// Single-use tokens sent in e-mail links: verify an address, reset a password. Stored as
// sha256; consuming one is a single conditional UPDATE, so two concurrent uses cannot both win.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { randomToken, sha256Hex } from '../crypto/secrets.ts';
import type { Clock } from '../time.ts';

export type LinkPurpose = 'verify_email' | 'reset_password';

export const LINK_TTL_SECONDS: Record<LinkPurpose, number> = {
  verify_email: 48 * 3600,
  reset_password: 3600,
};

/**
 * Issue a new token. A new reset link replaces earlier ones (only the newest can change the
 * password); verification links stay valid side by side, since any of them proves the address.
 */
export async function issueLinkToken(
  db: Kysely<DB>,
  clock: Clock,
  accountId: number,
  purpose: LinkPurpose,
): Promise<string> {
  const now = clock();
  if (purpose === 'reset_password') {
    await db
      .updateTable('account_tokens')
      .set({ consumed_at: now })
      .where('account_id', '=', accountId)
      .where('purpose', '=', purpose)
      .where('consumed_at', 'is', null)
      .execute();
  }
  const token = randomToken(32);
  await db
    .insertInto('account_tokens')
    .values({
      account_id: accountId,
      purpose,
      token_hash: sha256Hex(token),
      expires_at: new Date(now.getTime() + LINK_TTL_SECONDS[purpose] * 1000),
      created_at: now,
    })
    .execute();
  return token;
}

/** Use a token once: the account it belongs to, or null when unknown, used or expired. */
export async function consumeLinkToken(
  db: Kysely<DB>,
  clock: Clock,
  purpose: LinkPurpose,
  token: string,
): Promise<number | null> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const now = clock();
  const row = await db
    .updateTable('account_tokens')
    .set({ consumed_at: now })
    .where('token_hash', '=', sha256Hex(token))
    .where('purpose', '=', purpose)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id ?? null;
}
