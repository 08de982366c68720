// Signing in and out: password login with per-account lockout, one-time e-mail codes,
// forgotten-password links. Answers that could tell whether an account exists (otp request,
// forgot) are the same either way, and a password check against an unknown identifier costs
// the same time as against a known one. Sessions start, and the second steps (and passkeys)
// complete them, in ./sign-in.ts.

import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Account } from '../../db/tables.ts';
import * as accounts from '../accounts/account.repository.ts';
import { hashPassword, verifyPassword } from '../accounts/password.ts';
import { normalizeIdentifier, passwordProblem } from '../accounts/rules.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import { rateKeyIp } from '../net/ip.ts';
import type { LimitState } from '../ratelimit/rate-limits.ts';
import { LIMITS } from '../ratelimit/rate-limits.ts';
import { counted } from '../words.ts';
import { consumeLinkToken, issueLinkToken } from './link-tokens.ts';
import { checkLoginCode, issueLoginCode, LOGIN_CODE_TTL_SECONDS } from './login-codes.ts';
import { destroyAccountSessions, destroySession } from './sessions.ts';
import {
  type AuthServiceOptions,
  assertMaySignIn,
  type ClientInfo,
  completeTwoFactor,
  type SecondStep,
  type SignedIn,
  signInWithPasskey,
  startSession,
} from './sign-in.ts';
import { recordSignInFailure } from './sign-in-activity.ts';
import { accountLockKey } from './two-factor.ts';

export type { AuthServiceOptions, ClientInfo, SignedIn, TwoFactorMethod } from './sign-in.ts';

/**
 * The key lockout counts against: the account when it exists (the key wrong second factors
 * count under too), else the identifier as typed.
 */
function lockKey(identifier: string, account: Account | undefined): string {
  return account ? accountLockKey(account.id) : `identifier:${identifier}`;
}

/** The account an identifier names, as typed by the client (none for an empty one). */
function accountNamed(options: AuthServiceOptions, identifier: string): Promise<Account | undefined> {
  return identifier === '' ? Promise.resolve(undefined) : accounts.findByIdentifier(options.db, identifier);
}

/**
 * Password login. Five failures for one account (or one unknown identifier) within 15
 * minutes lock it for 15 minutes from the fifth; a lock refuses even the right password.
 * Suspension and verification are revealed only to whoever knows the password.
 *
 * Every attempt is counted before its password is checked (one atomic step in the limit's
 * store), so concurrent guesses cannot all pass the check before any failure is counted: at
 * most five are ever checked per window. The right password then gives its own attempt back;
 * it never clears the count, so a lock that other attempts earned stays.
 */
async function login(
  options: AuthServiceOptions,
  input: { identifier: string; password: string; remember: boolean },
  client: ClientInfo,
  previousSession?: string,
): Promise<SignedIn> {
  const { limits } = options;
  const ipKey = client.ip ? rateKeyIp(client.ip) : null;
  if (ipKey) await limits.consume('login_fail_ip', ipKey);
  const identifier = normalizeIdentifier(input.identifier);
  const account = await accountNamed(options, identifier);
  const key = lockKey(identifier, account);
  let state: LimitState;
  try {
    state = await limits.consume('login_fail_account', key, { code: 'locked_out' });
  } catch (error) {
    // Locked: no password was checked, so this is no failed guess from the address.
    if (ipKey) await limits.refund('login_fail_ip', ipKey);
    if (account && error instanceof AppError && error.code === 'locked_out') {
      await recordSignInFailure(options, account.id, client, 'password', 'locked_out');
    }
    throw error;
  }
  const ok = await verifyPassword(account?.password_hash ?? null, input.password);
  if (!ok || !account) {
    // The fifth failure starts the 15-minute lock.
    if (state.remaining === 0) await limits.block('login_fail_account', key, LIMITS.login_fail_account.blockDuration);
    if (account) await recordSignInFailure(options, account.id, client, 'password', 'wrong_password');
    throw new AppError('invalid_credentials');
  }
  // The right password was no failure: give back its own point (not more: see above).
  await limits.refund('login_fail_account', key);
  if (ipKey) await limits.refund('login_fail_ip', ipKey);
  if (account.suspended_at === null && account.email_verified_at === null) {
    // The password is right, so say so and send a fresh link (at most one per 10 minutes).
    try {
      await limits.consume('verify_resend', `account:${account.id}`);
      await options.accounts.resendVerification(account);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'rate_limited')) throw error;
    }
    throw new AppError('email_unverified', {
      message: 'Verify your e-mail address before signing in. We have sent you a new link.',
    });
  }
  assertMaySignIn(account);
  return startSession(options, account, input.remember, client, 'password', previousSession);
}

/** Step 1 of otp-login: mail a 6-digit code. The answer never says whether the account exists. */
async function requestLoginCode(options: AuthServiceOptions, rawIdentifier: string): Promise<void> {
  const account = await accountNamed(options, normalizeIdentifier(rawIdentifier));
  if (!account || account.suspended_at !== null || account.email_verified_at === null) {
    options.logger.info({ known: Boolean(account) }, 'login code not sent');
    return;
  }
  await options.db.transaction().execute(async (trx) => {
    const code = await issueLoginCode(trx, options.secretKey, options.clock, account.id);
    await options.mailer.queue(
      trx,
      account.email,
      { template: 'login_code', name: account.name, code, minutes: LOGIN_CODE_TTL_SECONDS / 60 },
      account.id,
    );
  });
}

/** Step 2 of otp-login: a right code starts a session; the code is spent either way after 5 tries. */
async function verifyLoginCode(
  options: AuthServiceOptions,
  input: { identifier: string; code: string; remember: boolean },
  client: ClientInfo,
  previousSession?: string,
): Promise<SignedIn> {
  const { db, secretKey, clock } = options;
  const account = await accountNamed(options, normalizeIdentifier(input.identifier));
  const code = input.code.trim();
  const ok =
    account !== undefined &&
    account.suspended_at === null &&
    account.email_verified_at !== null &&
    // The check and its bookkeeping commit even when the code is wrong (tries are counted).
    (await db.transaction().execute((trx) => checkLoginCode(trx, secretKey, clock, account.id, code)));
  if (!ok || !account) {
    if (account && account.suspended_at === null && account.email_verified_at !== null) {
      await recordSignInFailure(options, account.id, client, 'email_code', 'wrong_code');
    }
    throw new AppError('invalid_credentials', { message: 'The code is wrong or has expired.' });
  }
  // A code sign-in leaves the password lockout as it is: clearing it would hand whoever is
  // guessing the password a fresh set of guesses. Only a reset lifts it.
  return startSession(options, account, input.remember, client, 'email_code', previousSession);
}

/** Mail a reset link if the account exists; the same answer either way. */
async function forgotPassword(options: AuthServiceOptions, rawIdentifier: string): Promise<void> {
  const account = await accountNamed(options, normalizeIdentifier(rawIdentifier));
  if (!account || account.suspended_at !== null) {
    options.logger.info({ known: Boolean(account) }, 'reset link not sent');
    return;
  }
  await options.db.transaction().execute(async (trx) => {
    const token = await issueLinkToken(trx, options.clock, account.id, 'reset_password');
    const link = `${options.publicUrl}/reset?token=${token}`;
    await options.mailer.queue(
      trx,
      account.email,
      { template: 'reset_password', name: account.name, link },
      account.id,
    );
  });
}

/**
 * Set a new password with a reset link. The password is checked before the link is spent,
 * so a weak choice does not burn it. Recovery cuts every other way in: it ends every
 * session, revokes every API token and closes open consoles (here and in other processes);
 * it lifts a lockout.
 */
async function resetPassword(
  options: AuthServiceOptions,
  token: string,
  password: string,
  who: Who,
): Promise<{ account: Account; endedSessions: number; revokedTokens: number }> {
  const { clock } = options;
  const problem = passwordProblem(password);
  if (problem) throw AppError.fields({ password: problem });
  const passwordHash = await hashPassword(password);
  const result = await options.db.transaction().execute(async (trx) => {
    const accountId = await consumeLinkToken(trx, clock, 'reset_password', token);
    if (accountId === null) return null;
    const account = await trx
      .updateTable('accounts')
      .set({ password_hash: passwordHash, updated_at: clock() })
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const endedSessions = await destroyAccountSessions(trx, accountId);
    const revoked = await trx
      .updateTable('api_tokens')
      .set({ revoked_at: clock() })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    // Token caches drop the account's tokens, consoles close, here and in every process.
    await options.bus.publish(trx, { topic: 'account', id: accountId });
    await options.bus.publish(trx, { topic: 'access_revoked', id: accountId });
    const revokedTokens = Number(revoked.numUpdatedRows);
    await recordActivity(trx, {
      accountId,
      type: 'password_changed',
      who,
      summary:
        `Password changed with a reset link: every session signed out` +
        (revokedTokens > 0 ? ` and ${counted(revokedTokens, 'API token')} revoked` : ''),
      details: { how: 'reset_link', sessions_ended: endedSessions, tokens_revoked: revokedTokens },
      at: clock(),
    });
    return { account, endedSessions, revokedTokens };
  });
  if (result === null)
    throw AppError.fields({ token: 'is invalid, used or expired' }, 'This reset link is invalid, used or expired.');
  await options.limits.reset('login_fail_account', accountLockKey(result.account.id));
  return result;
}

export function createAuthService(options: AuthServiceOptions) {
  return {
    /** Password login, with per-account lockout (see `login`). */
    login: (
      input: { identifier: string; password: string; remember: boolean },
      client: ClientInfo,
      previousSession?: string,
    ): Promise<SignedIn> => login(options, input, client, previousSession),

    /** Step 1 of otp-login: mail a 6-digit code. The answer never says whether the account exists. */
    requestLoginCode: (rawIdentifier: string): Promise<void> => requestLoginCode(options, rawIdentifier),

    /** Step 2 of otp-login: a right code starts a session; the code is spent either way after 5 tries. */
    verifyLoginCode: (
      input: { identifier: string; code: string; remember: boolean },
      client: ClientInfo,
      previousSession?: string,
    ): Promise<SignedIn> => verifyLoginCode(options, input, client, previousSession),

    /** Mail a reset link if the account exists; the same answer either way. */
    forgotPassword: (rawIdentifier: string): Promise<void> => forgotPassword(options, rawIdentifier),

    /** Set a new password with a reset link; ends every session and API token (see `resetPassword`). */
    resetPassword: (
      token: string,
      password: string,
      who: Who = byClient(null),
    ): Promise<{ account: Account; endedSessions: number; revokedTokens: number }> =>
      resetPassword(options, token, password, who),

    /** The second step of a sign-in with two-factor on (see `completeTwoFactor`). */
    completeTwoFactor: (
      pending: { idHash: string; accountId: number; remember: boolean },
      input: SecondStep,
      client: ClientInfo,
    ): Promise<SignedIn> => completeTwoFactor(options, pending, input, client),

    /** Sign in with a passkey alone, answering this session's challenge (see `signInWithPasskey`). */
    signInWithPasskey: (
      input: { response: AuthenticationResponseJSON; remember: boolean },
      client: ClientInfo,
      sessionId: string,
    ): Promise<SignedIn> => signInWithPasskey(options, input, client, sessionId),

    logout: (sessionId: string) => destroySession(options.db, sessionId),
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
