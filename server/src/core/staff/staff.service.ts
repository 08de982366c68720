// Staff members (CONTRACT §14): added with a role and invited by mail (a single-use link to
// /staff/invite?token=…, where they choose a password), listed, disabled (every session ends at
// once), given another role. Used by the staff CLI (actor: the operator) and the staff console
// (actor: the admin who does it). Every change writes its audit row in its own transaction.
// Staff are not customer accounts: no row, session or token is shared with an account.

import type { Kysely, Transaction } from 'kysely';
import type { DB, StaffRow } from '../../db/tables.ts';
import { hashPassword } from '../accounts/password.ts';
import { emailProblem, nameProblem, normalizeIdentifier, passwordProblem } from '../accounts/rules.ts';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import { randomToken, sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import { type Clock, isoWithOffset } from '../time.ts';
import { isStaffRole, STAFF_ROLES, type StaffRole } from './roles.ts';
import { endStaffSessions } from './staff-sessions.ts';

/** An invitation link works once, within this many hours. */
export const INVITE_TTL_HOURS = 72;
/** Staff passwords are longer than customers' (the customer rules apply too). */
export const STAFF_PASSWORD_MIN = 12;

export interface StaffServiceOptions {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer;
  publicUrl: string;
}

/** A member as lists show it (never a hash or secret). */
export interface StaffView {
  id: number;
  email: string;
  name: string;
  role: StaffRole;
  status: 'invited' | 'active' | 'disabled';
  totp: boolean;
  created_at: Date;
  disabled_at: Date | null;
}

export function staffView(row: StaffRow): StaffView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.disabled_at !== null ? 'disabled' : row.password_hash === null ? 'invited' : 'active',
    totp: row.totp_enabled_at !== null,
    created_at: row.created_at,
    disabled_at: row.disabled_at,
  };
}

export function staffPasswordProblem(password: string, email?: string): string | null {
  if ([...password].length < STAFF_PASSWORD_MIN) return `must be at least ${STAFF_PASSWORD_MIN} characters`;
  return passwordProblem(password, email === undefined ? {} : { email });
}

/** Every problem of a new member's fields, by field. */
export function newStaffProblems(input: { email?: unknown; name?: unknown; role?: unknown }): Record<string, string> {
  const fields: Record<string, string> = {};
  if (typeof input.email !== 'string' || input.email.trim() === '') fields.email = 'is required';
  else {
    const problem = emailProblem(input.email);
    if (problem) fields.email = problem;
  }
  if (input.name !== undefined) {
    const problem = typeof input.name === 'string' ? nameProblem(input.name) : 'must be text';
    if (problem) fields.name = problem;
  }
  if (!isStaffRole(input.role)) fields.role = `must be one of ${STAFF_ROLES.join(', ')}`;
  return fields;
}

async function lockMember(trx: Transaction<DB>, who: string | number): Promise<StaffRow> {
  let query = trx.selectFrom('staff').selectAll().forUpdate();
  query = typeof who === 'number' ? query.where('id', '=', who) : query.where('email', '=', normalizeIdentifier(who));
  const row = await query.executeTakeFirst();
  if (!row) throw new AppError('not_found', { message: `No staff member "${who}".` });
  return row;
}

/** A new single-use invitation (earlier ones stop working) and its mail, in the caller's transaction. */
async function sendInvite(options: StaffServiceOptions, trx: Transaction<DB>, member: StaffRow): Promise<void> {
  const now = options.clock();
  await trx
    .updateTable('staff_tokens')
    .set({ consumed_at: now })
    .where('staff_id', '=', member.id)
    .where('purpose', '=', 'invite')
    .where('consumed_at', 'is', null)
    .execute();
  const token = randomToken(32);
  await trx
    .insertInto('staff_tokens')
    .values({
      staff_id: member.id,
      purpose: 'invite',
      token_hash: sha256Hex(token),
      expires_at: new Date(now.getTime() + INVITE_TTL_HOURS * 3600_000),
      created_at: now,
    })
    .execute();
  await options.mailer.queue(trx, member.email, {
    template: 'staff_invite',
    name: member.name,
    role: member.role,
    link: `${options.publicUrl}/staff/invite?token=${token}`,
    hours: INVITE_TTL_HOURS,
  });
}

/** Refuse a console member changing their own standing (an admin cannot lock themselves out). */
function notSelf(actor: AuditActor, member: StaffRow, what: string): void {
  if (actor.staffId === member.id) throw new AppError('conflict', { message: `You cannot ${what} yourself.` });
}

/** Change one member under a lock; `work` writes its audit row in the same transaction. */
function change<T>(
  options: StaffServiceOptions,
  target: string | number,
  work: (trx: Transaction<DB>, member: StaffRow) => Promise<T>,
): Promise<T> {
  return options.db.transaction().execute(async (trx) => work(trx, await lockMember(trx, target)));
}

/** Add a member and mail the invitation. */
async function addMember(
  options: StaffServiceOptions,
  input: { email: string; name?: string; role: string },
  actor: AuditActor,
): Promise<StaffView> {
  const fields = newStaffProblems(input);
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  const email = normalizeIdentifier(input.email);
  const name = input.name?.trim() || email.split('@')[0] || email;
  try {
    return await options.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('staff')
        .values({ email, name, role: input.role as StaffRole })
        .returningAll()
        .executeTakeFirstOrThrow();
      await sendInvite(options, trx, row);
      await recordAudit(trx, {
        actor,
        action: 'staff.add',
        targetType: 'staff',
        targetId: row.id,
        after: { email, name, role: row.role },
        at: options.clock(),
      });
      return staffView(row);
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505')
      throw AppError.fields({ email: 'is already a staff member' }, undefined, { existence: true });
    throw error;
  }
}

/** Disable: no more sign-ins, every session ends now, open invitations stop working. */
function disableMember(
  options: StaffServiceOptions,
  target: string | number,
  actor: AuditActor,
  reason: string | null,
) {
  return change(options, target, async (trx, member) => {
    notSelf(actor, member, 'disable');
    if (member.disabled_at !== null) throw new AppError('conflict', { message: 'Already disabled.' });
    const now = options.clock();
    const row = await trx
      .updateTable('staff')
      .set({ disabled_at: now, updated_at: now })
      .where('id', '=', member.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const endedSessions = await endStaffSessions(trx, member.id);
    await trx
      .updateTable('staff_tokens')
      .set({ consumed_at: now })
      .where('staff_id', '=', member.id)
      .where('consumed_at', 'is', null)
      .execute();
    await recordAudit(trx, {
      actor,
      action: 'staff.disable',
      targetType: 'staff',
      targetId: member.id,
      before: { disabled: false },
      after: { disabled: true, sessions_ended: endedSessions },
      reason,
      at: now,
    });
    return { staff: staffView(row), endedSessions };
  });
}

/** Give a member another role (it counts from their next request). */
function setMemberRole(
  options: StaffServiceOptions,
  target: string | number,
  role: string,
  actor: AuditActor,
  reason: string | null,
) {
  return change(options, target, async (trx, member) => {
    if (!isStaffRole(role)) throw AppError.fields({ role: `must be one of ${STAFF_ROLES.join(', ')}` });
    notSelf(actor, member, 'change the role of');
    if (member.role === role) throw new AppError('conflict', { message: `Already ${role}.` });
    const row = await trx
      .updateTable('staff')
      .set({ role, updated_at: options.clock() })
      .where('id', '=', member.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(trx, {
      actor,
      action: 'staff.role',
      targetType: 'staff',
      targetId: member.id,
      before: { role: member.role },
      after: { role },
      reason,
      at: options.clock(),
    });
    return staffView(row);
  });
}

/** Forget a member's authenticator (lost phone): they enrol again at their next sign-in; sessions end. */
function resetMemberTotp(options: StaffServiceOptions, target: string | number, actor: AuditActor) {
  return change(options, target, async (trx, member) => {
    notSelf(actor, member, 'reset the authenticator of');
    const row = await trx
      .updateTable('staff')
      .set({
        totp_secret: null,
        totp_pending_secret: null,
        totp_enabled_at: null,
        totp_last_step: null,
        updated_at: options.clock(),
      })
      .where('id', '=', member.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const endedSessions = await endStaffSessions(trx, member.id);
    await recordAudit(trx, {
      actor,
      action: 'staff.totp_reset',
      targetType: 'staff',
      targetId: member.id,
      before: { totp: member.totp_enabled_at !== null },
      after: { totp: false, sessions_ended: endedSessions },
      at: options.clock(),
    });
    return { staff: staffView(row), endedSessions };
  });
}

/**
 * Use an invitation: set the password (every session of the member ends). The link works once
 * (one conditional UPDATE), within INVITE_TTL_HOURS, for a member not disabled.
 */
async function acceptInvite(
  options: StaffServiceOptions,
  token: string,
  password: string,
  ip: string | null,
): Promise<StaffView> {
  const invalid = () => AppError.fields({ token: 'is invalid, used or expired; ask an admin for a new invitation' });
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) throw invalid();
  const early = staffPasswordProblem(password);
  if (early) throw AppError.fields({ password: early });
  const hash = await hashPassword(password);
  return options.db.transaction().execute(async (trx) => {
    const now = options.clock();
    const used = await trx
      .updateTable('staff_tokens')
      .set({ consumed_at: now })
      .where('token_hash', '=', sha256Hex(token))
      .where('purpose', '=', 'invite')
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('staff_id')
      .executeTakeFirst();
    if (!used) throw invalid();
    const member = await lockMember(trx, used.staff_id);
    if (member.disabled_at !== null) throw invalid();
    const problem = staffPasswordProblem(password, member.email);
    if (problem) throw AppError.fields({ password: problem });
    const row = await trx
      .updateTable('staff')
      .set({ password_hash: hash, updated_at: now })
      .where('id', '=', member.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await endStaffSessions(trx, member.id);
    await recordAudit(trx, {
      actor: { staffId: member.id, role: member.role, ip },
      action: 'staff.password_set',
      targetType: 'staff',
      targetId: member.id,
      before: { status: staffView(member).status },
      after: { status: staffView(row).status },
      at: now,
    });
    return staffView(row);
  });
}

export function createStaffService(options: StaffServiceOptions) {
  const { db, clock } = options;
  return {
    list: async (): Promise<StaffView[]> =>
      (await db.selectFrom('staff').selectAll().orderBy('id').execute()).map(staffView),

    async find(target: string | number): Promise<StaffView> {
      const query = db.selectFrom('staff').selectAll();
      const row = await (typeof target === 'number'
        ? query.where('id', '=', target)
        : query.where('email', '=', normalizeIdentifier(target))
      ).executeTakeFirst();
      if (!row) throw new AppError('not_found', { message: `No staff member "${target}".` });
      return staffView(row);
    },

    add: (input: { email: string; name?: string; role: string }, actor: AuditActor) => addMember(options, input, actor),

    /** Mail a new invitation (the earlier links stop working), e.g. when one expired. */
    invite: (target: string | number, actor: AuditActor): Promise<StaffView> =>
      change(options, target, async (trx, member) => {
        if (member.disabled_at !== null) throw new AppError('conflict', { message: 'This member is disabled.' });
        await sendInvite(options, trx, member);
        await recordAudit(trx, {
          actor,
          action: 'staff.invite',
          targetType: 'staff',
          targetId: member.id,
          at: clock(),
        });
        return staffView(member);
      }),

    disable: (target: string | number, actor: AuditActor, reason: string | null = null) =>
      disableMember(options, target, actor, reason),

    setRole: (target: string | number, role: string, actor: AuditActor, reason: string | null = null) =>
      setMemberRole(options, target, role, actor, reason),

    resetTotp: (target: string | number, actor: AuditActor) => resetMemberTotp(options, target, actor),

    acceptInvite: (token: string, password: string, ip: string | null) => acceptInvite(options, token, password, ip),
  };
}

export type StaffService = ReturnType<typeof createStaffService>;

/** A staff member as the console's API and the staff CLI's JSON show them (never the password or TOTP secret). */
export function staffMemberView(s: StaffView) {
  return {
    id: s.id,
    email: s.email,
    name: s.name,
    role: s.role,
    status: s.status,
    totp: s.totp,
    created_at: isoWithOffset(s.created_at),
    disabled_at: s.disabled_at ? isoWithOffset(s.disabled_at) : null,
  };
}
