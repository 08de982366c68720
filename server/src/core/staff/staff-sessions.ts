// Staff console sessions (CONTRACT §14), apart from customer sessions in every way: their own
// table, cookie (STAFFSESSID) and CSRF key. The cookie holds 32 random bytes; the table holds
// their sha256. A session has a stage: `enrol` (password proven, no second factor enrolled yet:
// only the enrolment, `me` and logout), `totp` (password proven, the code still to come) or
// `full`. Only a full session reaches the staff routes; the step from one stage to the next
// replaces the session (a new id). Every request reads the row afresh (no cache: staff traffic
// is small, and a disabled member or a changed role must count at once).

import type { Kysely } from 'kysely';
import type { DB, StaffSessionStage } from '../../db/tables.ts';
import { hmacBase64url, randomToken, safeEqual, sha256Hex } from '../crypto/secrets.ts';
import type { Clock } from '../time.ts';
import type { StaffRole } from './roles.ts';

export const STAFF_SESSION_COOKIE = 'STAFFSESSID';

export const STAFF_SESSION_POLICY = {
  /** A full session ends 8 h after it began, whatever happens. */
  absoluteSeconds: 8 * 3600,
  /** …and after 30 minutes without a request. */
  idleSeconds: 30 * 60,
  /** A session before its second factor (enrolment or the code step) lasts 15 minutes. */
  halfSeconds: 15 * 60,
  /** last_seen_at is written at most this often. */
  touchEverySeconds: 60,
} as const;

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export function isStaffSessionId(raw: string | undefined): raw is string {
  return raw !== undefined && SESSION_ID.test(raw);
}

export function newStaffSessionId(): string {
  return randomToken(32);
}

/** The CSRF token of a staff session (or anonymous id): HMAC under its own purpose, so no customer token fits. */
export function staffCsrfToken(secretKey: Buffer, sessionId: string): string {
  return hmacBase64url(secretKey, 'staff-csrf', sessionId);
}

export function staffCsrfMatches(secretKey: Buffer, sessionId: string, presented: string | undefined): boolean {
  return presented !== undefined && presented !== '' && safeEqual(staffCsrfToken(secretKey, sessionId), presented);
}

export interface StaffMember {
  id: number;
  email: string;
  name: string;
  role: StaffRole;
  totpEnrolled: boolean;
}

export interface LoadedStaffSession {
  idHash: string;
  stage: StaffSessionStage;
  createdAt: Date;
  expiresAt: Date;
  staff: StaffMember;
}

export interface NewStaffSession {
  id: string;
  stage: StaffSessionStage;
  expiresAt: Date;
}

/** A new session of `stage` (executor: the caller's transaction when the step is one). */
export async function createStaffSession(
  db: Kysely<DB>,
  clock: Clock,
  staffId: number,
  stage: StaffSessionStage,
  client: { ip: string | null; userAgent: string | null },
): Promise<NewStaffSession> {
  const id = newStaffSessionId();
  const now = clock();
  const lifetime = stage === 'full' ? STAFF_SESSION_POLICY.absoluteSeconds : STAFF_SESSION_POLICY.halfSeconds;
  const expiresAt = new Date(now.getTime() + lifetime * 1000);
  await db
    .insertInto('staff_sessions')
    .values({
      id_hash: sha256Hex(id),
      staff_id: staffId,
      stage,
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
      ip: client.ip,
      user_agent: client.userAgent?.slice(0, 256) ?? null,
    })
    .execute();
  return { id, stage, expiresAt };
}

/** The live session behind a cookie value, or null (unknown, expired, idle, member disabled); a dead one is deleted. */
export async function loadStaffSession(
  db: Kysely<DB>,
  clock: Clock,
  sessionId: string,
): Promise<LoadedStaffSession | null> {
  const idHash = sha256Hex(sessionId);
  const row = await db
    .selectFrom('staff_sessions')
    .innerJoin('staff', 'staff.id', 'staff_sessions.staff_id')
    .select([
      'staff_sessions.stage',
      'staff_sessions.created_at',
      'staff_sessions.expires_at',
      'staff_sessions.last_seen_at',
      'staff.id',
      'staff.email',
      'staff.name',
      'staff.role',
      'staff.totp_enabled_at',
      'staff.disabled_at',
    ])
    .where('staff_sessions.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return null;
  const now = clock().getTime();
  const idle = STAFF_SESSION_POLICY.idleSeconds * 1000;
  if (row.expires_at.getTime() <= now || row.last_seen_at.getTime() + idle <= now || row.disabled_at !== null) {
    await db.deleteFrom('staff_sessions').where('id_hash', '=', idHash).execute();
    return null;
  }
  if (now - row.last_seen_at.getTime() > STAFF_SESSION_POLICY.touchEverySeconds * 1000) {
    await db
      .updateTable('staff_sessions')
      .set({ last_seen_at: new Date(now) })
      .where('id_hash', '=', idHash)
      .execute();
  }
  return {
    idHash,
    stage: row.stage,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    staff: {
      id: row.id,
      email: row.email,
      name: row.name,
      role: row.role,
      totpEnrolled: row.totp_enabled_at !== null,
    },
  };
}

export async function destroyStaffSession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await db.deleteFrom('staff_sessions').where('id_hash', '=', sha256Hex(sessionId)).execute();
}

/** End every session of a staff member; how many there were. */
export async function endStaffSessions(db: Kysely<DB>, staffId: number): Promise<number> {
  const result = await db.deleteFrom('staff_sessions').where('staff_id', '=', staffId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
