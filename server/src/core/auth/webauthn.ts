// WebAuthn plumbing of passkeys (CONTRACT §11): who the relying party is, the challenges of the
// ceremonies under way, and the check of an assertion (a passkey signing a challenge). The
// verification itself is @simplewebauthn/server's; what is decided here is which challenge and
// which credential an answer is checked against, and what is written when it is right.
//
// A challenge is bound to the session that asked for it (the sha256 of its cookie id, so an
// anonymous session's cookie anchors it as it anchors its CSRF token), one per session and
// purpose: asking again replaces it, an answer takes (deletes) it whether right or wrong, and it
// expires after 5 minutes. So a signed challenge works once, and only from the browser it was
// given to.

import type * as SimpleWebAuthn from '@simplewebauthn/server';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { hmacBase64url, safeEqual } from '../crypto/secrets.ts';
import { onFirstUse } from '../on-first-use.ts';
import type { Clock } from '../time.ts';

/** @simplewebauthn/server, loaded at the first ceremony (core/on-first-use.ts). */
export const simpleWebAuthn = onFirstUse<typeof SimpleWebAuthn>('@simplewebauthn/server');

/** How long a ceremony's challenge may be answered (CONTRACT §11). */
export const CHALLENGE_TTL_SECONDS = 5 * 60;
/** What the options tell the browser to wait, a little under the challenge's life. */
export const CEREMONY_TIMEOUT_MS = (CHALLENGE_TTL_SECONDS - 30) * 1000;

export type ChallengePurpose = 'register' | 'sign_in' | 'second_factor';

/** The relying party: its id is PUBLIC_URL's host name, the one origin it accepts PUBLIC_URL's. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingParty(publicUrl: string, name = 'Hostplane'): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin, name };
}

/**
 * The WebAuthn user handle of an account: opaque (keyed with SECRET_KEY, telling nothing about
 * the account), stable, 32 bytes. A passkey keeps the handle it was made with (`user_handle`).
 */
export function userHandleOf(secretKey: Buffer, accountId: number): string {
  return hmacBase64url(secretKey, 'webauthn-user', String(accountId));
}

/** Keep a session's challenge for `purpose` (replacing the one it had), and sweep expired ones. */
export async function putChallenge(
  db: Kysely<DB>,
  clock: Clock,
  sessionHash: string,
  purpose: ChallengePurpose,
  challenge: string,
  accountId: number | null,
): Promise<void> {
  const now = clock();
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000);
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
  await db
    .insertInto('webauthn_challenges')
    .values({ session_hash: sessionHash, purpose, challenge, account_id: accountId, expires_at: expiresAt })
    .onConflict((oc) =>
      oc.columns(['session_hash', 'purpose']).doUpdateSet({ challenge, account_id: accountId, expires_at: expiresAt }),
    )
    .execute();
}

/**
 * Take (delete) a session's challenge for `purpose`: null when there is none or it has expired.
 * In the caller's transaction, so of two answers to one challenge only one gets it.
 */
export async function takeChallenge(
  db: Kysely<DB>,
  clock: Clock,
  sessionHash: string,
  purpose: ChallengePurpose,
): Promise<{ challenge: string; accountId: number | null } | null> {
  const row = await db
    .deleteFrom('webauthn_challenges')
    .where('session_hash', '=', sessionHash)
    .where('purpose', '=', purpose)
    .returning(['challenge', 'account_id', 'expires_at'])
    .executeTakeFirst();
  if (!row || row.expires_at.getTime() <= clock().getTime()) return null;
  return { challenge: row.challenge, accountId: row.account_id };
}

/** The account a credential id belongs to, if any (which lockout an answer counts against). */
export async function passkeyOwner(db: Kysely<DB>, credentialId: unknown): Promise<number | null> {
  if (typeof credentialId !== 'string' || credentialId === '' || credentialId.length > 1400) return null;
  const row = await db
    .selectFrom('passkeys')
    .select('account_id')
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  return row?.account_id ?? null;
}

/** What an assertion is checked against. */
export interface AssertionCheck {
  rp: RelyingParty;
  clock: Clock;
  /** The session the challenge was given to, and what for. */
  sessionHash: string;
  purpose: 'sign_in' | 'second_factor';
  response: AuthenticationResponseJSON;
  /** The account the passkey must belong to. */
  accountId: number;
  /**
   * A passkey alone signs in only with user verification (a PIN or biometric: two factors in one);
   * as the second factor after a password, presence is enough.
   */
  requireUserVerification: boolean;
}

/**
 * Check an assertion in the caller's transaction: the session's challenge is taken (right or
 * wrong, it is spent), the credential must be the account's, its user handle (when sent) the
 * passkey's, the signature, origin, RP id and challenge right, and the counter must go up (unless
 * the authenticator keeps none). When right, the counter, the backed-up flag and last_used_at
 * are written. Returns whether it was right; a malformed answer is simply wrong.
 */
export async function checkAssertion(db: Kysely<DB>, check: AssertionCheck): Promise<boolean> {
  const taken = await takeChallenge(db, check.clock, check.sessionHash, check.purpose);
  if (!taken || (taken.accountId !== null && taken.accountId !== check.accountId)) return false;
  const passkey = await db
    .selectFrom('passkeys')
    .selectAll()
    .where('credential_id', '=', String(check.response.id))
    .where('account_id', '=', check.accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!passkey) return false;
  const userHandle = check.response.response?.userHandle;
  if (typeof userHandle === 'string' && userHandle !== '' && !safeEqual(userHandle, passkey.user_handle)) return false;
  let verified: Awaited<ReturnType<typeof SimpleWebAuthn.verifyAuthenticationResponse>>;
  try {
    verified = await simpleWebAuthn().verifyAuthenticationResponse({
      response: check.response,
      expectedChallenge: taken.challenge,
      expectedOrigin: check.rp.origin,
      expectedRPID: check.rp.id,
      credential: {
        id: passkey.credential_id,
        publicKey: Buffer.from(passkey.public_key, 'base64url'),
        counter: Number(passkey.counter),
        transports: passkey.transports,
      },
      requireUserVerification: check.requireUserVerification,
    });
  } catch {
    // A wrong challenge, origin or RP id, a bad signature, a counter that did not go up, or an
    // answer that is not one: all the same to the caller.
    return false;
  }
  if (!verified.verified) return false;
  await db
    .updateTable('passkeys')
    .set({
      counter: verified.authenticationInfo.newCounter,
      backed_up: verified.authenticationInfo.credentialBackedUp,
      last_used_at: check.clock(),
    })
    .where('id', '=', passkey.id)
    .execute();
  return true;
}
