// Asking for the deletion of an account, and changing one's mind (CONTRACT §11). The customer
// confirms with their password (one guess against the sign-in lockout, like every password check);
// nothing may stand in the way (./blockers.ts); the deletion is then scheduled 7 days ahead and the
// customer mailed the date and how to cancel. Signing in cancels it (core/auth/sessions.ts
// createSession, for every way of signing in), as does `cancel_deletion`; the hourly job
// (./erasure.ts) erases the accounts that are due.

import { sql } from 'kysely';
import { verifyPassword } from '../accounts/password.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import { countedGuess } from '../auth/two-factor.ts';
import { AppError } from '../errors.ts';
import { type DeletionBlocker, deletionBlockers } from './blockers.ts';
import { deletionCancelledMail, deletionScheduledMail } from './mails.ts';
import { DAY_MS, type PrivacyOptions } from './options.ts';

/** Between asking and erasure: time to change one's mind (or to notice that someone else asked). */
export const DELETION_DELAY_MS = 7 * DAY_MS;

export function blockedError(reasons: DeletionBlocker[]): AppError {
  return new AppError('deletion_blocked', {
    message: `The account cannot be deleted yet: ${reasons.map((r) => r.message).join(' ')}`,
    details: { reasons },
  });
}

/**
 * Schedule the deletion of the account, 7 days from now; asking again while one is scheduled keeps
 * its date. 422 `errors.password` when the password is wrong (counted toward the lockout), 409
 * `deletion_blocked` with `details.reasons` while something stands in the way.
 */
async function request(options: PrivacyOptions, accountId: number, password: string, who: Who): Promise<Date> {
  const { db, clock } = options;
  if (password === '') throw AppError.fields({ password: 'is required to delete the account' });
  const account = await db
    .selectFrom('accounts')
    .select(['password_hash'])
    .where('id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!account) throw new AppError('unauthenticated');
  const ok = await countedGuess(options.limits, accountId, () => verifyPassword(account.password_hash, password));
  if (!ok) throw AppError.fields({ password: 'is wrong' }, 'The password is wrong.');
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number; name: string; email: string; deletion_scheduled_for: Date | null }>`
      select id, name, email, deletion_scheduled_for from accounts where id = ${accountId} for update`.execute(trx);
    const locked = rows[0];
    if (!locked) throw new AppError('unauthenticated');
    if (locked.deletion_scheduled_for !== null) return locked.deletion_scheduled_for;
    const now = clock();
    const reasons = await deletionBlockers(trx, accountId, now);
    if (reasons.length > 0) throw blockedError(reasons);
    const scheduledFor = new Date(now.getTime() + DELETION_DELAY_MS);
    await trx
      .updateTable('accounts')
      .set({ deletion_requested_at: now, deletion_scheduled_for: scheduledFor, updated_at: now })
      .where('id', '=', accountId)
      .execute();
    await deletionScheduledMail(options.mailer, trx, options.publicUrl, locked, scheduledFor);
    await recordActivity(trx, {
      accountId,
      type: 'deletion_scheduled',
      who,
      summary: `Account deletion scheduled for ${scheduledFor.toISOString().slice(0, 10)}; signing in cancels it`,
      details: { scheduled_for: scheduledFor.toISOString() },
      at: now,
    });
    return scheduledFor;
  });
}

/** Cancel a scheduled deletion; false when none was scheduled (nothing changes, no mail). */
async function cancel(options: PrivacyOptions, accountId: number, who: Who): Promise<boolean> {
  const { db, clock } = options;
  return db.transaction().execute(async (trx) => {
    const cancelled = await trx
      .updateTable('accounts')
      .set({ deletion_requested_at: null, deletion_scheduled_for: null, updated_at: clock() })
      .where('id', '=', accountId)
      .where('deletion_scheduled_for', 'is not', null)
      .returning(['id', 'name', 'email'])
      .executeTakeFirst();
    if (!cancelled) return false;
    await deletionCancelledMail(options.mailer, trx, options.publicUrl, cancelled, 'request');
    await recordActivity(trx, {
      accountId,
      type: 'deletion_cancelled',
      who,
      summary: 'Account deletion cancelled',
      details: { by: 'request' },
      at: clock(),
    });
    return true;
  });
}

export function createDeletion(options: PrivacyOptions) {
  return {
    /** Schedule the account's deletion (see `request`); returns when it will happen. */
    request: (accountId: number, password: string, who: Who = byClient(null)): Promise<Date> =>
      request(options, accountId, password, who),
    /** Cancel a scheduled deletion (`cancel_deletion`); false when none was scheduled. */
    cancel: (accountId: number, who: Who = byClient(null)): Promise<boolean> => cancel(options, accountId, who),
    /** What stands in the way of deleting the account now. */
    blockers: (accountId: number) => deletionBlockers(options.db, accountId, options.clock()),
  };
}
