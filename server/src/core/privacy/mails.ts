// The mail of data exports and account deletion (CONTRACT §11). Each links to the panel's privacy
// page, never to the archive itself: a download needs a session of the account (a link in a mail
// can be forwarded, read by a mail provider or left in an inbox).

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import type { Mailer } from '../mail/mailer.ts';
import { istTime } from '../time.ts';

export const PRIVACY_PAGE = '/account/privacy';

/** Kept for 8 years and why, as the mails and the panel say it. */
export const KEPT_WORDS =
  'We keep, for 8 years as Indian tax law requires, your tax invoices and credit notes as they were issued ' +
  '(with the name and address they were made out to), your orders and the wallet ledger, without anything ' +
  'that could sign in.';

export interface MailTarget {
  id: number;
  name: string;
  email: string;
}

async function send(
  mailer: Mailer,
  trx: Kysely<DB>,
  publicUrl: string,
  to: MailTarget,
  subject: string,
  paragraphs: string[],
  linkLabel: string,
): Promise<void> {
  await mailer.queue(
    trx,
    to.email,
    { template: 'privacy', name: to.name, subject, paragraphs, link: `${publicUrl}${PRIVACY_PAGE}`, linkLabel },
    to.id,
  );
}

export function exportReadyMail(
  mailer: Mailer,
  trx: Kysely<DB>,
  publicUrl: string,
  to: MailTarget,
  expiresAt: Date,
): Promise<void> {
  return send(
    mailer,
    trx,
    publicUrl,
    to,
    'Your Hostplane data export is ready',
    [
      'The archive of your account data you asked for is ready.',
      `Download it from the Privacy page of your account until ${istTime(expiresAt)}; you need to be signed in. After that we delete it, and you can ask for a new one.`,
      'If you did not ask for it, change your password and sign out the other sessions on the Security page.',
    ],
    'Open the Privacy page',
  );
}

export function deletionScheduledMail(
  mailer: Mailer,
  trx: Kysely<DB>,
  publicUrl: string,
  to: MailTarget,
  scheduledFor: Date,
): Promise<void> {
  return send(
    mailer,
    trx,
    publicUrl,
    to,
    `Your Hostplane account will be deleted on ${istTime(scheduledFor)}`,
    [
      `You asked us to delete your Hostplane account. We will erase it on ${istTime(scheduledFor)}.`,
      'Changed your mind? Sign in before then, or press "Cancel deletion" on the Privacy page: either cancels it, and we will confirm by mail.',
      'What we erase: your name, e-mail address and username, your password, sessions, API tokens, SSH keys, two-factor settings, billing details, payment proofs, notifications and the mail we sent you. You will not be able to sign in again, and this address can be used for a new account.',
      KEPT_WORDS,
      'This is the last mail we send to this address about it: once the account is erased we no longer know the address.',
    ],
    'Cancel the deletion',
  );
}

export function deletionCancelledMail(
  mailer: Mailer,
  trx: Kysely<DB>,
  publicUrl: string,
  to: MailTarget,
  how: 'sign_in' | 'request',
): Promise<void> {
  return send(
    mailer,
    trx,
    publicUrl,
    to,
    'The deletion of your Hostplane account is cancelled',
    [
      how === 'sign_in'
        ? 'Someone signed in to your Hostplane account, so the deletion you had asked for is cancelled and your account stays as it is.'
        : 'You cancelled the deletion of your Hostplane account: it stays as it is.',
      'To delete it after all, ask again on the Privacy page. If you did not sign in, change your password now.',
    ],
    'Open the Privacy page',
  );
}

/** At the due time something new stood in the way (a service ordered meanwhile, money in the wallet). */
export function deletionStoppedMail(
  mailer: Mailer,
  trx: Kysely<DB>,
  publicUrl: string,
  to: MailTarget,
  reasons: string[],
): Promise<void> {
  return send(
    mailer,
    trx,
    publicUrl,
    to,
    'Your Hostplane account was not deleted',
    [
      'We could not delete your Hostplane account on the day you asked for, because something changed in the meantime:',
      ...reasons,
      'Your account stays as it is. Settle these, then ask for the deletion again on the Privacy page.',
    ],
    'Open the Privacy page',
  );
}
