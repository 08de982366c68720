// Six-digit login codes (spec 4.3 otp-login): from a CSPRNG, valid 10 minutes, single use,
// dead after 5 wrong tries, and a new code kills the old. Stored as HMAC(SECRET_KEY), since a
// plain hash of a 6-digit number is reversed by trying all 10^6.

import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { hmacHex, safeEqual } from '../crypto/secrets.ts';
import type { Clock } from '../time.ts';

export const LOGIN_CODE_TTL_SECONDS = 600;
export const LOGIN_CODE_MAX_TRIES = 5;

function codeHash(secretKey: Buffer, accountId: number, code: string): string {
  return hmacHex(secretKey, 'login-code', `${accountId}:${code}`);
}

export async function issueLoginCode(
  db: Kysely<DB>,
  secretKey: Buffer,
  clock: Clock,
  accountId: number,
): Promise<string> {
  const now = clock();
  await db
    .updateTable('login_codes')
    .set({ consumed_at: now })
    .where('account_id', '=', accountId)
    .where('consumed_at', 'is', null)
    .execute();
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await db
    .insertInto('login_codes')
    .values({
      account_id: accountId,
      code_hash: codeHash(secretKey, accountId, code),
      expires_at: new Date(now.getTime() + LOGIN_CODE_TTL_SECONDS * 1000),
      created_at: now,
    })
    .execute();
  return code;
}

/**
 * Check a code against the account's live code, counting the try. Runs in the caller's
 * transaction and locks the code row, so of two concurrent checks of the right code only
 * one sees it unused.
 */
export async function checkLoginCode(
  trx: Transaction<DB>,
  secretKey: Buffer,
  clock: Clock,
  accountId: number,
  code: string,
): Promise<boolean> {
  const now = clock();
  const live = await trx
    .selectFrom('login_codes')
    .select(['id', 'code_hash', 'attempts'])
    .where('account_id', '=', accountId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
  if (!live) return false;
  if (/^\d{6}$/.test(code) && safeEqual(live.code_hash, codeHash(secretKey, accountId, code))) {
    await trx.updateTable('login_codes').set({ consumed_at: now }).where('id', '=', live.id).execute();
    return true;
  }
  const attempts = live.attempts + 1;
  await trx
    .updateTable('login_codes')
    .set({ attempts, ...(attempts >= LOGIN_CODE_MAX_TRIES ? { consumed_at: now } : {}) })
    .where('id', '=', live.id)
    .execute();
  return false;
}
