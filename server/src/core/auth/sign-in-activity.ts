// Sign-in attempts in the activity log (CONTRACT §11): a completed sign-in (`sign_in`, with the
// method and the device read from the User-Agent), a refused one of a known account
// (`sign_in_failed`: wrong password, wrong code, locked out), and the new-device mail: a sign-in
// from a device none of the account's earlier sign-ins came from is mailed to the account, except
// the very first sign-in (there is no earlier device to compare with).
//
// Half sign-ins (the password right, the second factor still to come) are not sign-ins: the
// completed one is recorded once, by the second step.

import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { byClient, recordActivity } from '../activity/activity.ts';
import type { Mailer } from '../mail/mailer.ts';
import { type Clock, istTime } from '../time.ts';
import { deviceOf } from './device.ts';

/**
 * How the sign-in was proven: the password, a mailed code, the second factor after either, or a
 * passkey alone (for the passkey sign-in to pass when it logs its sign-ins).
 */
export type SignInMethod = 'password' | 'email_code' | 'two_factor' | 'passkey';

export interface SignInClient {
  ip: string | null;
  userAgent: string | null;
}

export interface SignInActivityOptions {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer;
  publicUrl: string;
}

const METHOD_WORDS: Record<SignInMethod, string> = {
  password: 'your password',
  email_code: 'a code sent by e-mail',
  two_factor: 'a code from your authenticator app',
  passkey: 'a passkey',
};

/** How the mail writes the time: in India's zone, which every account is billed in, and UTC. */
function mailTime(at: Date): string {
  return `${istTime(at)} (${at.toISOString().slice(0, 16).replace('T', ' ')} UTC)`;
}

/**
 * Record a completed sign-in in `trx` and, for a device the account has not signed in from
 * before (and not its first sign-in ever), queue the new-device mail. Serialised per account, so
 * two sign-ins from one new device at once mail once.
 */
export async function recordSignIn(
  options: SignInActivityOptions,
  trx: Transaction<DB>,
  account: { id: number; name: string; email: string },
  client: SignInClient,
  method: SignInMethod,
  factor?: 'totp' | 'recovery_code',
): Promise<void> {
  const now = options.clock();
  const device = deviceOf(client.userAgent);
  await sql`select pg_advisory_xact_lock(hashtextextended(${`activity:sign_in:${account.id}`}, 0))`.execute(trx);
  const seen = await trx
    .selectFrom('account_activity')
    .select((eb) => [
      eb.fn.countAll<string>().as('all'),
      eb.fn.countAll<string>().filterWhere(sql<string>`details->>'device'`, '=', device).as('same'),
    ])
    .where('account_id', '=', account.id)
    .where('type', '=', 'sign_in')
    .executeTakeFirstOrThrow();
  const how = factor === 'recovery_code' ? 'a recovery code' : METHOD_WORDS[method];
  await recordActivity(trx, {
    accountId: account.id,
    type: 'sign_in',
    who: byClient(client.ip),
    summary: `Signed in with ${how} (${device})`,
    details: { method, ...(factor ? { factor } : {}), device },
    at: now,
  });
  if (Number(seen.all) === 0 || Number(seen.same) > 0) return;
  await options.mailer.queue(
    trx,
    account.email,
    {
      template: 'new_sign_in',
      name: account.name,
      at: mailTime(now),
      ip: client.ip ?? 'unknown',
      device,
      link: `${options.publicUrl}/account/activity`,
    },
    account.id,
  );
}

/** `recordSignIn` in a transaction of its own (after a sign-in that had none). */
export function recordSignInNow(
  options: SignInActivityOptions,
  account: { id: number; name: string; email: string },
  client: SignInClient,
  method: SignInMethod,
): Promise<void> {
  return options.db.transaction().execute((trx) => recordSignIn(options, trx, account, client, method));
}

export type SignInFailure = 'wrong_password' | 'wrong_code' | 'locked_out';

const ATTEMPT_WORDS: Record<SignInMethod, string> = {
  password: 'Sign-in with a password',
  email_code: 'Sign-in with an e-mailed code',
  two_factor: 'Second step of a sign-in',
  passkey: 'Sign-in with a passkey',
};

const FAILURE_WORDS: Record<SignInFailure, string> = {
  wrong_password: 'wrong password',
  wrong_code: 'wrong code',
  locked_out: 'too many failed attempts; sign-in is locked for 15 minutes',
};

/** A refused sign-in of a known account (an unknown identifier has no log to write to). */
export async function recordSignInFailure(
  options: Pick<SignInActivityOptions, 'db' | 'clock'>,
  accountId: number,
  client: SignInClient,
  method: SignInMethod,
  reason: SignInFailure,
): Promise<void> {
  const device = deviceOf(client.userAgent);
  await recordActivity(options.db, {
    accountId,
    type: 'sign_in_failed',
    who: byClient(client.ip),
    summary: `${ATTEMPT_WORDS[method]} refused: ${FAILURE_WORDS[reason]} (${device})`,
    details: { method, reason, device },
    at: options.clock(),
  });
}

/** A sign-in that cancelled the account's scheduled deletion (CONTRACT §11), in its transaction. */
export function recordDeletionCancelledBySignIn(
  trx: Transaction<DB>,
  accountId: number,
  client: SignInClient,
  at: Date,
): Promise<void> {
  return recordActivity(trx, {
    accountId,
    type: 'deletion_cancelled',
    who: byClient(client.ip),
    summary: 'Account deletion cancelled by signing in',
    details: { by: 'sign_in' },
    at,
  });
}
