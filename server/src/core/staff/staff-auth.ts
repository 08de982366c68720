// Staff sign-in (CONTRACT §14): e-mail and password, then always a second factor. A member
// without one gets an enrolment-only session (stage `enrol`): they add an authenticator app
// (TOTP: a secret, then a code of it) and only then have a full session. A member with one gets a
// `totp` session until a code of their app. Each step replaces the session with a new id.
//
// The TOTP arithmetic is the customers' (core/auth/totp.ts), the secret sealed with SECRET_KEY
// as theirs is, under associated data of its own (`staff-totp:<id>`). Wrong passwords and wrong
// codes count against the same lockout as customers' (login_fail_account: 5 in 15 minutes lock
// for 15 minutes), under keys of their own (`staff:<id>`, `staff-email:<email>`); the address's
// failures count in login_fail_ip as customers' do.

import type { Kysely, Transaction } from 'kysely';
import type { DB, StaffRow } from '../../db/tables.ts';
import { verifyPassword } from '../accounts/password.ts';
import { normalizeIdentifier } from '../accounts/rules.ts';
import { recordAudit } from '../audit/audit.ts';
import { matchTotp, newTotpSecret, otpauthUrl, totpKey } from '../auth/totp.ts';
import { normaliseTotpCode } from '../auth/two-factor.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { rateKeyIp } from '../net/ip.ts';
import { LIMITS, type RateLimits } from '../ratelimit/rate-limits.ts';
import type { Clock } from '../time.ts';
import {
  createStaffSession,
  destroyStaffSession,
  type LoadedStaffSession,
  type NewStaffSession,
} from './staff-sessions.ts';

export interface StaffAuthOptions {
  db: Kysely<DB>;
  clock: Clock;
  secretKey: Buffer;
  limits: RateLimits;
}

export interface StaffClient {
  ip: string | null;
  userAgent: string | null;
}

const sealedFor = (staffId: number) => `staff-totp:${staffId}`;
const lockKey = (staffId: number) => `staff:${staffId}`;

/** A guess at a member's secrets, counted before it is checked (see two-factor.ts countedGuess). */
async function counted(limits: RateLimits, key: string, check: () => Promise<boolean>): Promise<boolean> {
  const state = await limits.consume('login_fail_account', key, { code: 'locked_out' });
  if (!(await check())) {
    if (state.remaining === 0) await limits.block('login_fail_account', key, LIMITS.login_fail_account.blockDuration);
    return false;
  }
  await limits.refund('login_fail_account', key);
  return true;
}

/** The code as typed, or 422 when it cannot be one. */
function codeOf(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') throw AppError.fields({ code: 'is required' });
  const code = normaliseTotpCode(raw);
  if (!/^\d{6}$/.test(code)) throw AppError.fields({ code: 'must be the 6 digits your app shows' });
  return code;
}

/** Replace a session by one of the next stage, in one transaction (of two concurrent steps one wins). */
async function nextStage(
  options: StaffAuthOptions,
  session: LoadedStaffSession,
  client: StaffClient,
  change: (trx: Transaction<DB>) => Promise<void>,
): Promise<NewStaffSession> {
  return options.db.transaction().execute(async (trx) => {
    const ended = await trx
      .deleteFrom('staff_sessions')
      .where('id_hash', '=', session.idHash)
      .where('stage', '=', session.stage)
      .executeTakeFirst();
    if (Number(ended.numDeletedRows) !== 1) throw new AppError('unauthenticated');
    await change(trx);
    return createStaffSession(trx, options.clock, session.staff.id, 'full', client);
  });
}

export function createStaffAuth(options: StaffAuthOptions) {
  const { db, clock, secretKey, limits } = options;

  return {
    /**
     * E-mail and password: a session of stage `enrol` (no second factor yet) or `totp`. Wrong
     * password, unknown e-mail and a member not yet through their invitation answer alike (401);
     * a disabled member is told so only with the right password.
     */
    async login(
      input: { email: string; password: string },
      client: StaffClient,
      previous?: string,
    ): Promise<{ session: NewStaffSession; staff: StaffRow }> {
      const email = normalizeIdentifier(input.email);
      const ipKey = client.ip ? rateKeyIp(client.ip) : null;
      if (ipKey) await limits.consume('login_fail_ip', ipKey);
      const member = await db.selectFrom('staff').selectAll().where('email', '=', email).executeTakeFirst();
      const ok = await counted(limits, member ? lockKey(member.id) : `staff-email:${email}`, () =>
        verifyPassword(member?.password_hash ?? null, input.password),
      );
      if (!ok || !member) throw new AppError('invalid_credentials');
      if (ipKey) await limits.refund('login_fail_ip', ipKey);
      if (member.disabled_at !== null) {
        throw new AppError('account_suspended', { message: 'This staff account is disabled.' });
      }
      if (previous !== undefined) await destroyStaffSession(db, previous);
      const stage = member.totp_enabled_at === null ? 'enrol' : 'totp';
      return { session: await createStaffSession(db, clock, member.id, stage, client), staff: member };
    },

    /** Enrolment, step 1 (stage `enrol`): a new secret, kept sealed as pending until a code confirms it. */
    async beginTotp(session: LoadedStaffSession): Promise<{ secret: string; otpauthUrl: string }> {
      if (session.stage !== 'enrol')
        throw new AppError('conflict', { message: 'An authenticator is already enrolled.' });
      const secret = newTotpSecret();
      await db
        .updateTable('staff')
        .set({
          totp_pending_secret: encryptSecret(secretKey, secret, sealedFor(session.staff.id)),
          updated_at: clock(),
        })
        .where('id', '=', session.staff.id)
        .where('totp_enabled_at', 'is', null)
        .execute();
      return { secret, otpauthUrl: otpauthUrl(secret, `staff:${session.staff.email}`) };
    },

    /**
     * Enrolment, step 2, or the code step of a sign-in: a code of the app. Enrolling confirms the
     * pending secret (audited); either way the session becomes a full one with a new id.
     */
    async completeTotp(session: LoadedStaffSession, rawCode: unknown, client: StaffClient): Promise<NewStaffSession> {
      if (session.stage === 'full') throw new AppError('conflict', { message: 'Already signed in.' });
      const code = codeOf(rawCode);
      const staffId = session.staff.id;
      const done = { session: null as NewStaffSession | null };
      const right = await counted(limits, lockKey(staffId), async () => {
        const row = await db.selectFrom('staff').selectAll().where('id', '=', staffId).executeTakeFirstOrThrow();
        const enrolling = session.stage === 'enrol';
        const sealed = enrolling ? row.totp_pending_secret : row.totp_secret;
        if (sealed === null) {
          throw new AppError('conflict', { message: 'Start the enrolment first (action totp_begin).' });
        }
        const now = clock();
        const match = matchTotp(totpKey(decryptSecret(secretKey, sealed, sealedFor(staffId))), code, now, {
          afterStep: enrolling ? null : row.totp_last_step,
        });
        if (!match) return false;
        done.session = await nextStage(options, session, client, async (trx) => {
          // The step is remembered under the condition it was read with: a code is spent once.
          const spent = await trx
            .updateTable('staff')
            .set({
              ...(enrolling ? { totp_secret: sealed, totp_enabled_at: now, totp_pending_secret: null } : {}),
              totp_last_step: match.step,
              updated_at: now,
            })
            .where('id', '=', staffId)
            .where((eb) =>
              row.totp_last_step === null
                ? eb('totp_last_step', 'is', null)
                : eb('totp_last_step', '=', row.totp_last_step),
            )
            .executeTakeFirst();
          if (Number(spent.numUpdatedRows) !== 1) throw new AppError('unauthenticated');
          if (enrolling) {
            await recordAudit(trx, {
              actor: { staffId, role: session.staff.role, ip: client.ip },
              action: 'staff.totp_enrol',
              targetType: 'staff',
              targetId: staffId,
              before: { totp: false },
              after: { totp: true },
              at: now,
            });
          }
        });
        return true;
      });
      if (!right || done.session === null) {
        throw AppError.fields({ code: 'is wrong or was already used' }, 'The code is wrong or was already used.');
      }
      return done.session;
    },
  };
}

export type StaffAuth = ReturnType<typeof createStaffAuth>;
