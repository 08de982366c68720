// Accounts: registration, e-mail verification, profile and password changes, and the staff
// operations on them. Each change that spans rows (account + token + mail + job) commits in one
// transaction.

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Account, DB } from '../../db/tables.ts';
import { byClient, byStaff, recordActivity, type Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { consumeLinkToken, issueLinkToken } from '../auth/link-tokens.ts';
import { destroyAccountSessions } from '../auth/sessions.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Clock } from '../time.ts';
import { counted } from '../words.ts';
import * as repo from './account.repository.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { nameProblem, normalizeIdentifier, passwordProblem, registrationProblems } from './rules.ts';

export interface AccountServiceOptions {
  db: Kysely<DB>;
  bus: Bus;
  clock: Clock;
  mailer: Mailer;
  publicUrl: string;
  logger: Logger;
}

export interface RegisterInput {
  name: string;
  email: string;
  username: string;
  password: string;
}

export type AccountStatus = 'active' | 'unverified' | 'suspended' | 'deleted';

export function accountStatus(
  account: Pick<Account, 'suspended_at' | 'email_verified_at'> & Partial<Pick<Account, 'deleted_at'>>,
): AccountStatus {
  // An erased account (core/privacy/erasure.ts) is a tombstone, whatever else its row says.
  if (account.deleted_at !== undefined && account.deleted_at !== null) return 'deleted';
  if (account.suspended_at !== null) return 'suspended';
  return account.email_verified_at === null ? 'unverified' : 'active';
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === constraint;
}

async function sendVerification(
  options: AccountServiceOptions,
  trx: Kysely<DB>,
  account: Pick<Account, 'id' | 'name' | 'email'>,
): Promise<void> {
  const token = await issueLinkToken(trx, options.clock, account.id, 'verify_email');
  const link = `${options.publicUrl}/verify?token=${token}`;
  await options.mailer.queue(trx, account.email, { template: 'verify_email', name: account.name, link }, account.id);
}

async function get(options: AccountServiceOptions, accountId: number): Promise<Account> {
  const account = await repo.findById(options.db, accountId);
  if (!account) throw new AppError('not_found', { message: 'No such account.' });
  return account;
}

/** Create an unverified account and mail its verification link. */
async function register(options: AccountServiceOptions, input: RegisterInput): Promise<Account> {
  const { db } = options;
  const email = normalizeIdentifier(input.email);
  const username = normalizeIdentifier(input.username);
  const name = input.name.trim();
  const fields = registrationProblems({ ...input });
  let existence = false;
  if (!fields.email || !fields.username) {
    const taken = await repo.emailOrUsernameTaken(db, email, username);
    if (taken.email && !fields.email) {
      fields.email = 'is already registered';
      existence = true;
    }
    if (taken.username && !fields.username) {
      fields.username = 'is already taken';
      existence = true;
    }
  }
  // "Taken" tells about another account: such a refusal keeps counting against the limits.
  if (Object.keys(fields).length > 0) throw AppError.fields(fields, undefined, { existence });

  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction().execute(async (trx) => {
      const account = await trx
        .insertInto('accounts')
        .values({ name, email, username, password_hash: passwordHash })
        .returningAll()
        .executeTakeFirstOrThrow();
      await sendVerification(options, trx, account);
      return account;
    });
  } catch (error) {
    // Lost a race with a concurrent registration of the same address or name.
    if (isUniqueViolation(error, 'accounts_email_key'))
      throw AppError.fields({ email: 'is already registered' }, undefined, { existence: true });
    if (isUniqueViolation(error, 'accounts_username_key'))
      throw AppError.fields({ username: 'is already taken' }, undefined, { existence: true });
    throw error;
  }
}

/** Use a verification link. Single use; an account already verified stays verified. */
async function verifyEmail(options: AccountServiceOptions, token: string): Promise<Account> {
  const { clock } = options;
  return options.db.transaction().execute(async (trx) => {
    const accountId = await consumeLinkToken(trx, clock, 'verify_email', token);
    if (accountId === null)
      throw AppError.fields(
        { token: 'is invalid, used or expired' },
        'This verification link is invalid, used or expired.',
      );
    const account = await trx
      .updateTable('accounts')
      .set((eb) => ({
        email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(clock())),
        updated_at: clock(),
      }))
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return account;
  });
}

type ProfileChange = { name?: string; current_password?: string; password?: string };

/** The new password's hash, after every problem of the change is found (thrown together). */
async function checkProfileChange(account: Account, input: ProfileChange): Promise<string | null> {
  const fields: Record<string, string> = {};
  if (input.name === undefined && input.password === undefined) {
    throw AppError.fields({ name: 'give a new name, or current_password and password' }, 'Nothing to change.');
  }
  if (input.name !== undefined) {
    const problem = nameProblem(input.name);
    if (problem) fields.name = problem;
  }
  let passwordHash: string | null = null;
  if (input.password !== undefined) {
    const problem = passwordProblem(input.password, { email: account.email, username: account.username });
    if (problem) fields.password = problem;
    if (input.current_password === undefined || input.current_password === '') {
      fields.current_password = 'is required to change the password';
    } else if (!(await verifyPassword(account.password_hash, input.current_password))) {
      fields.current_password = 'is wrong';
    }
    if (Object.keys(fields).length === 0) passwordHash = await hashPassword(input.password);
  }
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  return passwordHash;
}

/**
 * Rename, and/or change the password (which needs the current one). A password change ends
 * every other session of the account; the caller's own (`keepSessionHash`) stays.
 */
async function update(
  options: AccountServiceOptions,
  accountId: number,
  input: ProfileChange,
  keepSessionHash: string,
  who: Who,
): Promise<{ account: Account; endedSessions: number }> {
  const passwordHash = await checkProfileChange(await get(options, accountId), input);
  return options.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('accounts')
      .set({
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(passwordHash !== null ? { password_hash: passwordHash } : {}),
        updated_at: options.clock(),
      })
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const endedSessions = passwordHash !== null ? await destroyAccountSessions(trx, accountId, keepSessionHash) : 0;
    if (passwordHash !== null) {
      await options.bus.publish(trx, { topic: 'access_revoked', id: accountId });
      await recordActivity(trx, {
        accountId,
        type: 'password_changed',
        who,
        summary:
          endedSessions > 0
            ? `Password changed; ${counted(endedSessions, 'other session')} signed out`
            : 'Password changed; no other session was signed in',
        details: { how: 'account_settings', sessions_ended: endedSessions },
        at: options.clock(),
      });
    }
    return { account: updated, endedSessions };
  });
}

/** Mark verified by hand (staff), e.g. when the mail never arrived; logged when it was not verified. */
async function markVerified(options: AccountServiceOptions, accountId: number, who: Who): Promise<Account> {
  const { db, clock } = options;
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('accounts')
      .select('email_verified_at')
      .where('id', '=', accountId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const account = await trx
      .updateTable('accounts')
      .set((eb) => ({
        email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(clock())),
        updated_at: clock(),
      }))
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (before.email_verified_at === null) {
      await recordActivity(trx, {
        accountId,
        type: 'staff_email_verified',
        who,
        summary: 'Hostplane staff marked your e-mail address verified',
        details: {},
        at: clock(),
      });
    }
    return account;
  });
}

/** Suspend: the account can no longer sign in, and every session ends now. */
async function suspendAccount(
  options: AccountServiceOptions,
  accountId: number,
  reason: string | null,
  who: Who,
): Promise<{ account: Account; endedSessions: number }> {
  const { db, clock } = options;
  return db.transaction().execute(async (trx) => {
    const was = await trx
      .selectFrom('accounts')
      .select(['suspended_at', 'suspended_reason'])
      .where('id', '=', accountId)
      .forUpdate()
      .executeTakeFirst();
    const account = await trx
      .updateTable('accounts')
      .set({ suspended_at: clock(), suspended_reason: reason, updated_at: clock() })
      .where('id', '=', accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const endedSessions = await destroyAccountSessions(trx, accountId);
    // API tokens of the account stop working here and in every other process; consoles close.
    await options.bus.publish(trx, { topic: 'account', id: accountId });
    await options.bus.publish(trx, { topic: 'access_revoked', id: accountId });
    await recordActivity(trx, {
      accountId,
      type: 'staff_account_suspended',
      who,
      summary: `Hostplane staff suspended your account; ${counted(endedSessions, 'session')} signed out`,
      details: { sessions_ended: endedSessions },
      at: clock(),
    });
    await auditAs(trx, who, {
      action: 'account.suspend',
      targetType: 'account',
      targetId: accountId,
      before: { suspended: Boolean(was?.suspended_at), suspended_reason: was?.suspended_reason ?? null },
      after: { suspended: true, suspended_reason: reason, sessions_ended: endedSessions },
      reason,
      at: clock(),
    });
    return { account, endedSessions };
  });
}

export function createAccountService(options: AccountServiceOptions) {
  const { db, clock } = options;

  return {
    /** Create an unverified account and mail its verification link. */
    register: (input: RegisterInput): Promise<Account> => register(options, input),

    /** Use a verification link. Single use; an account already verified stays verified. */
    verifyEmail: (token: string): Promise<Account> => verifyEmail(options, token),

    /**
     * Mail a fresh verification link (after a login attempt on an unverified account, or staff
     * asked: a staff `who` audits it).
     */
    async resendVerification(account: Pick<Account, 'id' | 'name' | 'email'>, who?: Who): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await sendVerification(options, trx, account);
        await auditAs(trx, who, {
          action: 'account.resend_verification',
          targetType: 'account',
          targetId: account.id,
          after: { mailed: account.email },
          at: clock(),
        });
      });
    },

    get: (accountId: number): Promise<Account> => get(options, accountId),

    /** Rename, and/or change the password; a password change ends every other session. */
    update: (
      accountId: number,
      input: ProfileChange,
      keepSessionHash: string,
      who: Who = byClient(null),
    ): Promise<{ account: Account; endedSessions: number }> => update(options, accountId, input, keepSessionHash, who),

    // Staff operations (CLI).

    list: (filter: repo.AccountListFilter) => repo.list(db, filter),

    async find(identifierOrId: string): Promise<Account> {
      const account = /^\d+$/.test(identifierOrId)
        ? await repo.findById(db, Number(identifierOrId))
        : await repo.findByIdentifier(db, normalizeIdentifier(identifierOrId));
      if (!account) throw new AppError('not_found', { message: `No account matches "${identifierOrId}".` });
      return account;
    },

    /** Mark verified by hand (staff), e.g. when the mail never arrived; logged when it was not verified. */
    markVerified: (accountId: number, who: Who = byStaff()): Promise<Account> => markVerified(options, accountId, who),

    /** Suspend: the account can no longer sign in, and every session ends now. */
    suspend: (accountId: number, reason: string | null, who: Who = byStaff()) =>
      suspendAccount(options, accountId, reason, who),

    async unsuspend(accountId: number, who: Who = byStaff()): Promise<Account> {
      return db.transaction().execute(async (trx) => {
        const account = await trx
          .updateTable('accounts')
          .set({ suspended_at: null, suspended_reason: null, updated_at: clock() })
          .where('id', '=', accountId)
          // An erased account (core/privacy/erasure.ts) stays suspended for good.
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!account) throw new AppError('conflict', { message: 'This account was deleted; it cannot be restored.' });
        await options.bus.publish(trx, { topic: 'account', id: accountId });
        await recordActivity(trx, {
          accountId,
          type: 'staff_account_unsuspended',
          who,
          summary: 'Hostplane staff lifted the suspension of your account',
          details: {},
          at: clock(),
        });
        await auditAs(trx, who, {
          action: 'account.unsuspend',
          targetType: 'account',
          targetId: accountId,
          before: { suspended: true },
          after: { suspended: false },
          at: clock(),
        });
        return account;
      });
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
