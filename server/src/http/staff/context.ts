// What staff route handlers share: the caller (its session, as the access hook let it through),
// the caller as the audit log names it, the STAFFSESSID cookie, and the staff member's view.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Who } from '../../core/activity/activity.ts';
import { type AuditActor, byStaffMember } from '../../core/audit/audit.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { roleAtLeast, STAFF_ROLES, type StaffRole } from '../../core/staff/roles.ts';
import { type LoadedStaffSession, STAFF_SESSION_COOKIE } from '../../core/staff/staff-sessions.ts';
import { clientIp } from '../request-context.ts';

/** The caller's session (any stage on `session` routes; full on role routes). */
export function staffSession(request: FastifyRequest): LoadedStaffSession {
  const session = request.staff.session;
  if (session === null) throw new AppError('unauthenticated');
  return session;
}

/** The caller as the audit log records them: id, role now, address. */
export function actorOf(request: FastifyRequest): AuditActor {
  const { staff } = staffSession(request);
  return { staffId: staff.id, role: staff.role, ip: clientIp(request) };
}

/** The caller as services' `who` (audited; customers read "Hostplane staff" in their activity log). */
export function whoOfStaff(request: FastifyRequest): Who {
  return byStaffMember(actorOf(request));
}

const cookieOptions = (deps: Deps) => ({
  path: '/',
  httpOnly: true,
  sameSite: 'strict' as const,
  secure: deps.config.publicUrl.startsWith('https://'),
});

/** A session cookie (no Max-Age: it ends with the browser, and the server ends it after 8 h at most). */
export function setStaffCookie(deps: Deps, reply: FastifyReply, id: string): void {
  reply.setCookie(STAFF_SESSION_COOKIE, id, cookieOptions(deps));
}

export function clearStaffCookie(deps: Deps, reply: FastifyReply): void {
  reply.clearCookie(STAFF_SESSION_COOKIE, cookieOptions(deps));
}

export const StaffRoleSchema = Type.Union([Type.Literal('support'), Type.Literal('billing'), Type.Literal('admin')], {
  description: `one of ${STAFF_ROLES.join(', ')} (support ⊂ billing ⊂ admin)`,
});

export const StaffMemberSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    name: Type.String(),
    role: StaffRoleSchema,
    status: Type.Union([Type.Literal('invited'), Type.Literal('active'), Type.Literal('disabled')]),
    totp: Type.Boolean({ description: 'an authenticator app is enrolled' }),
    created_at: Type.String({ format: 'date-time' }),
    disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);

export { staffMemberView } from '../../core/staff/staff.service.ts';

/**
 * A route whose actions need different roles (its table row names the least of them): refuse an
 * action above the caller's role, as the access hook refuses a route (403 forbidden_role).
 */
export function requireRole(request: FastifyRequest, minimum: StaffRole): void {
  const { staff } = staffSession(request);
  if (!roleAtLeast(staff.role, minimum))
    throw new AppError('forbidden_role', { details: { required: minimum, role: staff.role } });
}

/**
 * Run a core call whose field errors name its own inputs (`amount`: rupees) by the names this
 * surface's request has (`amount_paise`), so the console shows them beside the right field.
 */
export async function withFieldNames<T>(names: Record<string, string>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError) || error.fields === undefined) throw error;
    const fields = Object.fromEntries(Object.entries(error.fields).map(([k, v]) => [names[k] ?? k, v]));
    throw new AppError(error.code, {
      message: error.message,
      fields,
      ...(error.details ? { details: error.details } : {}),
      status: error.status,
    });
  }
}
