// Starting a session once an account has proven who it is, and the steps that prove it beyond
// a password or a mailed code: the second step of a half session (a TOTP code, a recovery code
// or a passkey) and signing in with a passkey alone (CONTRACT §11). ./auth.service.ts has the
// first steps (password, mailed code) and recovery.

import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Account, DB } from '../../db/tables.ts';
import * as accounts from '../accounts/account.repository.ts';
import type { AccountService } from '../accounts/account.service.ts';
import type { Bus } from '../bus.ts';
import { sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import { rateKeyIp } from '../net/ip.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { Clock } from '../time.ts';
import { createSession, destroySession, type NewSession } from './sessions.ts';
import { checkSecondFactor, countedGuess, type SecondFactor, secondStepProblems, twoFactorOn } from './two-factor.ts';
import { checkAssertion, passkeyOwner, type RelyingParty, takeChallenge } from './webauthn.ts';

/** Ways to complete a half session (CONTRACT §11): "passkey" when the account has one. */
export type TwoFactorMethod = 'totp' | 'recovery' | 'passkey';

export interface AuthServiceOptions {
  db: Kysely<DB>;
  clock: Clock;
  secretKey: Buffer;
  mailer: Mailer;
  limits: RateLimits;
  accounts: AccountService;
  publicUrl: string;
  logger: Logger;
  bus: Bus;
  /** Who passkeys are made for (PUBLIC_URL's host and origin). */
  rp: RelyingParty;
}

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface SignedIn {
  session: NewSession;
  account: Account;
  /**
   * The account signs in with a second factor: `session` is a half session that may only
   * complete the sign-in (POST auth/2fa/) or log out (CONTRACT §11).
   */
  twoFactorRequired: boolean;
  /** What completes the half session (empty when signed in). */
  methods: TwoFactorMethod[];
}

/** A second step of a sign-in: a code, a recovery code, or a passkey's assertion. */
export type SecondStep = SecondFactor & { passkey?: AuthenticationResponseJSON | undefined };

export async function startSession(
  options: AuthServiceOptions,
  account: Account,
  remember: boolean,
  client: ClientInfo,
  previous?: string,
  full = false,
): Promise<SignedIn> {
  // A new id at every sign-in (no session fixation); the session it replaces ends. With
  // two-factor sign-in on, the new session is a half one until the second factor (unless this
  // sign-in was already two factors: a passkey with user verification).
  const { db } = options;
  if (previous !== undefined) await destroySession(db, previous);
  const twoFactorRequired = !full && (await twoFactorOn(db, account.id));
  const session = await createSession(db, options.clock, account.id, {
    remember,
    ...client,
    twoFactorPending: twoFactorRequired,
  });
  const methods: TwoFactorMethod[] = [];
  if (twoFactorRequired) {
    methods.push('totp', 'recovery');
    const passkey = await db
      .selectFrom('passkeys')
      .select('id')
      .where('account_id', '=', account.id)
      .executeTakeFirst();
    if (passkey) methods.push('passkey');
  }
  return { session, account, twoFactorRequired, methods };
}

/** The 422 of a wrong second step, on the field it came in. */
function wrongStep(input: SecondStep): AppError {
  if (input.passkey) return AppError.fields({ passkey: 'could not be verified' }, 'The passkey could not be verified.');
  return input.code
    ? AppError.fields({ code: 'is wrong or was already used' }, 'The code is wrong or was already used.')
    : AppError.fields(
        { recovery_code: 'is wrong or was already used' },
        'The recovery code is wrong or was already used.',
      );
}

/**
 * The second step of a sign-in (POST auth/2fa/): a TOTP code, a recovery code or a passkey of the
 * account (answering the challenge this half session was given), one guess against the account's
 * lockout (shared with wrong passwords). When right, the factor is spent and the half session is
 * replaced by a signed-in one with a new id, in one transaction: of two concurrent completions
 * of one half session only one gets a session.
 */
export async function completeTwoFactor(
  options: AuthServiceOptions,
  pending: { idHash: string; accountId: number; remember: boolean },
  input: SecondStep,
  client: ClientInfo,
): Promise<SignedIn> {
  const problems = secondStepProblems(input);
  if (Object.keys(problems).length > 0) throw AppError.fields(problems);
  const { db, clock, secretKey } = options;
  const done = { session: null as NewSession | null };
  const ok = await countedGuess(options.limits, pending.accountId, () =>
    db.transaction().execute(async (trx) => {
      const right = input.passkey
        ? await checkAssertion(trx, {
            rp: options.rp,
            clock,
            sessionHash: pending.idHash,
            purpose: 'second_factor',
            response: input.passkey,
            accountId: pending.accountId,
            requireUserVerification: false,
          })
        : await checkSecondFactor(trx, secretKey, clock, pending.accountId, input);
      if (!right) return false;
      const ended = await trx
        .deleteFrom('sessions')
        .where('id_hash', '=', pending.idHash)
        .where('two_factor_pending', '=', true)
        .executeTakeFirst();
      // Completed (or ended) meanwhile: nothing is spent, the caller signs in again.
      if (Number(ended.numDeletedRows) !== 1) throw new AppError('unauthenticated');
      done.session = await createSession(trx, clock, pending.accountId, { remember: pending.remember, ...client });
      return true;
    }),
  );
  if (!ok || done.session === null) throw wrongStep(input);
  const account = await accounts.findById(db, pending.accountId);
  if (!account) throw new AppError('unauthenticated');
  return { session: done.session, account, twoFactorRequired: false, methods: [] };
}

/** Every refusal of a passkey sign-in says the same (which part was wrong is not told). */
const passkeyRefused = () => new AppError('invalid_credentials', { message: 'This passkey could not be verified.' });

/**
 * Sign in with a passkey alone (POST auth/passkey/): the answer to the challenge this session was
 * given (GET auth/passkey/), from a discoverable credential with user verification, so two
 * factors in one: the session is signed in fully, two-factor sign-in or not. A passkey of a known
 * account is one guess against that account's lockout (shared with wrong passwords and codes);
 * every failure counts against the address's failed sign-ins.
 */
export async function signInWithPasskey(
  options: AuthServiceOptions,
  input: { response: AuthenticationResponseJSON; remember: boolean },
  client: ClientInfo,
  sessionId: string,
): Promise<SignedIn> {
  const { db, clock, limits } = options;
  const ipKey = client.ip ? rateKeyIp(client.ip) : null;
  if (ipKey) await limits.consume('login_fail_ip', ipKey);
  const sessionHash = sha256Hex(sessionId);
  const owner = await passkeyOwner(db, input.response.id);
  if (owner === null) {
    // Unknown credential: the challenge is spent all the same.
    await takeChallenge(db, clock, sessionHash, 'sign_in');
    throw passkeyRefused();
  }
  const ok = await countedGuess(limits, owner, () =>
    db.transaction().execute((trx) =>
      checkAssertion(trx, {
        rp: options.rp,
        clock,
        sessionHash,
        purpose: 'sign_in',
        response: input.response,
        accountId: owner,
        requireUserVerification: true,
      }),
    ),
  );
  if (!ok) throw passkeyRefused();
  if (ipKey) await limits.refund('login_fail_ip', ipKey);
  const account = await accounts.findById(db, owner);
  if (!account) throw passkeyRefused();
  assertMaySignIn(account);
  return startSession(options, account, input.remember, client, sessionId, true);
}

/** Whether this (correctly identified) account may have a session at all. */
export function assertMaySignIn(account: Account): void {
  if (account.suspended_at !== null) throw new AppError('account_suspended');
  if (account.email_verified_at === null) throw new AppError('email_unverified');
}
