// Two-factor sign-in (CONTRACT §11): a TOTP secret per account, sealed at rest with SECRET_KEY,
// and ten single-use recovery codes stored keyed-hashed. Turning it on takes two steps (the
// secret is shown, then a code from the app confirms it); turning it off takes the password and
// a code (or a recovery code); staff can reset it (the customer is mailed, sessions end).
//
// Every guess at a code, here and at sign-in, counts against the account's lockout: the same
// counter and lock as wrong passwords (`login_fail_account`), so three wrong passwords and two
// wrong codes lock the account like five wrong passwords.

import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { verifyPassword } from '../accounts/password.ts';
import type { Bus } from '../bus.ts';
import { decryptSecret, encryptSecret, hmacHex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import { LIMITS } from '../ratelimit/rate-limits.ts';
import type { Clock } from '../time.ts';
import { destroyAccountSessions } from './sessions.ts';
import { matchTotp, newTotpSecret, otpauthUrl, totpKey } from './totp.ts';

export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** Associated data of a sealed TOTP secret: it opens only as this account's. */
const sealedFor = (accountId: number) => `totp:${accountId}`;

/** The key a wrong password or code of an account counts under (the password lockout's). */
export const accountLockKey = (accountId: number) => `account:${accountId}`;

/** What the second step of a sign-in (or a change needing it) was given: one of the two. */
export interface SecondFactor {
  code?: string | undefined;
  recovery_code?: string | undefined;
}

export interface TwoFactorOptions {
  db: Kysely<DB>;
  clock: Clock;
  secretKey: Buffer;
  limits: RateLimits;
  mailer: Mailer;
  bus: Bus;
}

/** A code as typed: spaces dropped ("123 456" as some apps show it). */
export function normaliseTotpCode(raw: string): string {
  return raw.replace(/\s+/g, '');
}

/** A recovery code as typed: case, spaces and dashes do not matter. */
export function normaliseRecoveryCode(raw: string): string {
  return raw.toLowerCase().replace(/[\s-]+/g, '');
}

/**
 * Why a second factor cannot be anyone's (422 before it is counted or tried), by field. Pure, and
 * safe on any body (also a route's `fieldRules`, run on bodies the schema refused).
 */
export function secondFactorProblems(input: { code?: unknown; recovery_code?: unknown }): Record<string, string> {
  const given = (v: unknown) => v !== undefined && v !== null && v !== '';
  const { code, recovery_code: recovery } = input;
  if (!given(code) && !given(recovery)) return { code: 'is required (or recovery_code)' };
  if (given(code) && given(recovery)) return { recovery_code: 'send code or recovery_code, not both' };
  if (given(code)) {
    return typeof code === 'string' && /^\d{6}$/.test(normaliseTotpCode(code))
      ? {}
      : { code: 'must be the 6 digits your app shows' };
  }
  return typeof recovery === 'string' && /^[a-z2-7]{10}$/.test(normaliseRecoveryCode(recovery))
    ? {}
    : { recovery_code: 'must be one of your recovery codes (10 letters and digits)' };
}

/**
 * The same for the second step of a sign-in, which may also be a passkey's answer (`passkey`, an
 * object: navigator.credentials.get()'s, as JSON): exactly one of the three.
 */
export function secondStepProblems(input: {
  code?: unknown;
  recovery_code?: unknown;
  passkey?: unknown;
}): Record<string, string> {
  const { passkey } = input;
  if (passkey === undefined || passkey === null) {
    const problems = secondFactorProblems(input);
    return problems.code?.startsWith('is required') ? { code: 'is required (or recovery_code, or passkey)' } : problems;
  }
  const other = [input.code, input.recovery_code].some((v) => v !== undefined && v !== null && v !== '');
  if (other) return { passkey: 'send a passkey, a code or a recovery code, only one' };
  return typeof passkey === 'object' && !Array.isArray(passkey)
    ? {}
    : { passkey: "must be the passkey's answer (navigator.credentials.get(), as JSON)" };
}

function recoveryHash(secretKey: Buffer, accountId: number, code: string): string {
  return hmacHex(secretKey, 'recovery-code', `${accountId}:${normaliseRecoveryCode(code)}`);
}

function newRecoveryCode(): string {
  let out = '';
  for (let i = 0; i < 10; i++) out += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/** Replace the account's recovery codes with ten new ones; they are returned this once. */
async function issueRecoveryCodes(trx: Kysely<DB>, secretKey: Buffer, clock: Clock, accountId: number) {
  await trx.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await trx
    .insertInto('recovery_codes')
    .values(
      codes.map((c) => ({
        account_id: accountId,
        code_hash: recoveryHash(secretKey, accountId, c),
        created_at: clock(),
      })),
    )
    .execute();
  return codes;
}

/** Whether the account signs in with a second factor. */
export async function twoFactorOn(db: Kysely<DB>, accountId: number): Promise<boolean> {
  const row = await db
    .selectFrom('two_factor')
    .select('enabled_at')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.enabled_at != null;
}

/**
 * Check a second factor of an account whose two-factor sign-in is on, in the caller's
 * transaction, spending it when right: a TOTP code's step is remembered (a code, or any older
 * one, is never accepted again), a recovery code is marked used. The account's row is locked, so
 * of concurrent checks of one code (or one recovery code) exactly one succeeds.
 */
export async function checkSecondFactor(
  trx: Transaction<DB>,
  secretKey: Buffer,
  clock: Clock,
  accountId: number,
  input: SecondFactor,
): Promise<boolean> {
  const row = await trx
    .selectFrom('two_factor')
    .select(['totp_secret', 'last_step'])
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!row?.totp_secret) return false;
  const now = clock();
  if (input.code !== undefined && input.code !== '') {
    const secret = decryptSecret(secretKey, row.totp_secret, sealedFor(accountId));
    const match = matchTotp(totpKey(secret), normaliseTotpCode(input.code), now, { afterStep: row.last_step });
    if (!match) return false;
    await trx
      .updateTable('two_factor')
      .set({ last_step: match.step, updated_at: now })
      .where('account_id', '=', accountId)
      .execute();
    return true;
  }
  const used = await trx
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('account_id', '=', accountId)
    .where('code_hash', '=', recoveryHash(secretKey, accountId, input.recovery_code ?? ''))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/**
 * Run one guess at an account's secrets (a password, a code) counted against its lockout: counted
 * before `check` runs (so concurrent guesses cannot pass the lock together), the fifth failure
 * locks for 15 minutes, a right answer gives back its own point. Throws 429 `locked_out` when
 * locked, without checking.
 */
export async function countedGuess(
  limits: RateLimits,
  accountId: number,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const key = accountLockKey(accountId);
  const state = await limits.consume('login_fail_account', key, { code: 'locked_out' });
  if (!(await check())) {
    if (state.remaining === 0) await limits.block('login_fail_account', key, LIMITS.login_fail_account.blockDuration);
    return false;
  }
  await limits.refund('login_fail_account', key);
  return true;
}

/** The field a wrong second factor is reported on. */
function wrongFactor(input: SecondFactor): AppError {
  return input.code !== undefined && input.code !== ''
    ? AppError.fields({ code: 'is wrong or was already used' }, 'The code is wrong or was already used.')
    : AppError.fields(
        { recovery_code: 'is wrong or was already used' },
        'The recovery code is wrong or was already used.',
      );
}

function malformed(input: SecondFactor): void {
  const problems = secondFactorProblems(input);
  if (Object.keys(problems).length > 0) throw AppError.fields(problems);
}

/** Step 1 of turning it on: a new secret, kept (sealed) as pending until a code confirms it. */
async function beginTotp(
  options: TwoFactorOptions,
  accountId: number,
  label: string,
): Promise<{ secret: string; otpauthUrl: string }> {
  const { db, clock, secretKey } = options;
  if (await twoFactorOn(db, accountId)) {
    throw new AppError('conflict', { message: 'Two-factor sign-in is already on; turn it off first.' });
  }
  const secret = newTotpSecret();
  const sealed = encryptSecret(secretKey, secret, sealedFor(accountId));
  const now = clock();
  await db
    .insertInto('two_factor')
    .values({ account_id: accountId, pending_secret: sealed, pending_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({ pending_secret: sealed, pending_at: now, updated_at: now }),
    )
    .execute();
  return { secret, otpauthUrl: otpauthUrl(secret, label) };
}

/** Step 2: a code of the pending secret turns it on; the ten recovery codes are returned this once. */
async function enableTotp(options: TwoFactorOptions, accountId: number, rawCode: string): Promise<string[]> {
  const { db, clock, secretKey } = options;
  const code = normaliseTotpCode(rawCode);
  if (!/^\d{6}$/.test(code)) throw AppError.fields({ code: 'must be the 6 digits your app shows' });
  const codes = await db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('two_factor')
      .select(['pending_secret', 'enabled_at'])
      .where('account_id', '=', accountId)
      .forUpdate()
      .executeTakeFirst();
    if (row?.enabled_at) throw new AppError('conflict', { message: 'Two-factor sign-in is already on.' });
    if (!row?.pending_secret) {
      throw new AppError('conflict', { message: 'Start with totp_begin: there is no secret to confirm.' });
    }
    const secret = decryptSecret(secretKey, row.pending_secret, sealedFor(accountId));
    const match = matchTotp(totpKey(secret), code, clock());
    if (!match) return null;
    const now = clock();
    await trx
      .updateTable('two_factor')
      .set({
        totp_secret: row.pending_secret,
        enabled_at: now,
        last_step: match.step,
        pending_secret: null,
        pending_at: null,
        updated_at: now,
      })
      .where('account_id', '=', accountId)
      .execute();
    return issueRecoveryCodes(trx, secretKey, clock, accountId);
  });
  if (codes === null) throw AppError.fields({ code: 'is wrong' }, 'The code is wrong; check the time on your device.');
  return codes;
}

export function createTwoFactor(options: TwoFactorOptions) {
  const { db, clock, secretKey, limits } = options;

  /**
   * A second factor checked and spent in its own transaction, as one guess against the lockout
   * (with the password first, when given: a wrong password spends no code). Throws 422 when wrong.
   */
  async function requireFactor(accountId: number, input: SecondFactor, password?: { hash: string; given: string }) {
    malformed(input);
    const failure = { error: null as AppError | null };
    const ok = await countedGuess(limits, accountId, async () => {
      if (password && !(await verifyPassword(password.hash, password.given))) {
        failure.error = AppError.fields({ password: 'is wrong' }, 'The password is wrong.');
        return false;
      }
      return db.transaction().execute((trx) => checkSecondFactor(trx, secretKey, clock, accountId, input));
    });
    if (!ok) throw failure.error ?? wrongFactor(input);
  }

  return {
    /** `{totp, recovery_codes_left}` of GET account/security/. */
    async status(accountId: number): Promise<{ totp: boolean; recoveryCodesLeft: number }> {
      const on = await twoFactorOn(db, accountId);
      const left = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return { totp: on, recoveryCodesLeft: on ? Number(left.n) : 0 };
    },

    /** Step 1 of turning it on: a new secret, kept (sealed) as pending until a code confirms it. */
    begin: (accountId: number, label: string) => beginTotp(options, accountId, label),

    /** Step 2: a code of the pending secret turns it on; the ten recovery codes are returned this once. */
    enable: (accountId: number, rawCode: string) => enableTotp(options, accountId, rawCode),

    /** Turn it off: the password and a code (or a recovery code), one guess against the lockout. */
    async disable(accountId: number, passwordHash: string, input: SecondFactor & { password: string }): Promise<void> {
      if (!(await twoFactorOn(db, accountId))) {
        throw new AppError('conflict', { message: 'Two-factor sign-in is not on.' });
      }
      await requireFactor(accountId, input, { hash: passwordHash, given: input.password });
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
        await trx.deleteFrom('two_factor').where('account_id', '=', accountId).execute();
      });
    },

    /** Ten new recovery codes (the old ones stop working), for a code of the app. */
    async regenerate(accountId: number, rawCode: string): Promise<string[]> {
      if (!(await twoFactorOn(db, accountId))) {
        throw new AppError('conflict', { message: 'Two-factor sign-in is not on.' });
      }
      await requireFactor(accountId, { code: rawCode });
      return db.transaction().execute((trx) => issueRecoveryCodes(trx, secretKey, clock, accountId));
    },

    /**
     * Staff: turn two-factor sign-in off, delete the recovery codes, end every session (consoles
     * close) and mail the customer, in one transaction.
     */
    async staffReset(account: {
      id: number;
      email: string;
      name: string;
    }): Promise<{ wasOn: boolean; endedSessions: number }> {
      return db.transaction().execute(async (trx) => {
        const removed = await trx
          .deleteFrom('two_factor')
          .where('account_id', '=', account.id)
          .returning('enabled_at')
          .execute();
        await trx.deleteFrom('recovery_codes').where('account_id', '=', account.id).execute();
        const endedSessions = await destroyAccountSessions(trx, account.id);
        await options.bus.publish(trx, { topic: 'access_revoked', id: account.id });
        await options.mailer.queue(
          trx,
          account.email,
          { template: 'two_factor_reset', name: account.name },
          account.id,
        );
        return { wasOn: removed.some((r) => r.enabled_at !== null), endedSessions };
      });
    },
  };
}

export type TwoFactor = ReturnType<typeof createTwoFactor>;
