// /api/v1/staff/auth/… and /me (CONTRACT §14): the CSRF bootstrap, accepting an invitation,
// sign-in by e-mail and password, the mandatory second factor (enrol an authenticator app, or
// enter its code), logout, and who is signed in. Every POST checks the CSRF token of the current
// session (anonymous for login and invite: from GET auth/csrf).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import {
  destroyStaffSession,
  type NewStaffSession,
  newStaffSessionId,
  staffCsrfToken,
} from '../../core/staff/staff-sessions.ts';
import { isoWithOffset } from '../../core/time.ts';
import { limit } from '../client/context.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { clientInfo, clientRateKey } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import {
  clearStaffCookie,
  StaffMemberSchema,
  StaffRoleSchema,
  setStaffCookie,
  staffMemberView,
  staffSession,
} from './context.ts';

const tags = ['staff: auth'];
const Str = (max: number, description?: string) =>
  Type.String({ maxLength: max, ...(description ? { description } : {}) });

const StageSchema = Type.Union([Type.Literal('enrol'), Type.Literal('totp'), Type.Literal('full')], {
  description:
    'enrol: enrol an authenticator app (POST auth/totp {action:"enrol"}, then {action:"verify", code}); ' +
    'totp: enter its code (POST auth/totp {action:"verify", code}); full: signed in. Every route but ' +
    'auth/totp, auth/logout and me answers 403 second_factor_required until full.',
});

const SessionAnswer = okSchema({
  stage: StageSchema,
  csrf_token: Type.String({ description: 'CSRF token of the new session' }),
  expires_at: Type.String({ format: 'date-time' }),
});

function sessionAnswer(deps: Deps, session: NewStaffSession, message: string) {
  return {
    success: true as const,
    message,
    stage: session.stage,
    csrf_token: staffCsrfToken(deps.secretKey, session.id),
    expires_at: isoWithOffset(session.expiresAt),
  };
}

export async function staffAuthRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/auth/csrf',
    {
      schema: {
        operationId: 'staffCsrf',
        tags,
        summary: 'Start an anonymous staff session and get its CSRF token (needed by login and invite)',
        response: { 200: okSchema({ csrf_token: Type.String() }), ...sessionErrors(429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['csrf_ip', clientRateKey(request)]]);
      let id = request.staff.id;
      if (id === null) {
        id = newStaffSessionId();
        setStaffCookie(deps, reply, id);
      }
      return { success: true as const, message: 'CSRF token issued.', csrf_token: staffCsrfToken(deps.secretKey, id) };
    },
  );

  app.post(
    '/auth/invite',
    {
      schema: {
        operationId: 'staffAcceptInvite',
        tags,
        summary: 'Accept an invitation: choose a password (the link mailed by `staff add`)',
        description:
          'The token of /staff/invite?token=…; password at least 12 characters with a letter and a digit. ' +
          'The link works once, within 72 hours; every session of the member ends. Then sign in.',
        body: mutationBody({ token: Str(200), password: Str(1024) }),
        response: { 200: okSchema({ staff: StaffMemberSchema }), ...sessionErrors(422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['reset_ip', clientRateKey(request)]]);
      const member = await deps.staff.acceptInvite(request.body.token, request.body.password, clientInfo(request).ip);
      return { success: true as const, message: 'Password set. Sign in now.', staff: staffMemberView(member) };
    },
  );

  app.post(
    '/auth/login',
    {
      schema: {
        operationId: 'staffLogin',
        tags,
        summary: 'Sign in with e-mail and password; the second factor follows',
        description:
          'Replaces the session (a new STAFFSESSID). The answer is never a full session: `stage` says what comes ' +
          'next (enrol, or totp). 401 invalid_credentials; 403 account_suspended for a disabled member (only with ' +
          'the right password); 429 locked_out after 5 failures in 15 minutes (passwords and codes together).',
        body: mutationBody({ email: Str(320), password: Str(1024) }),
        response: { 200: SessionAnswer, ...sessionErrors(401, 422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const { session } = await deps.staffAuth.login(
        { email: request.body.email, password: request.body.password },
        clientInfo(request),
        request.staff.id ?? undefined,
      );
      setStaffCookie(deps, reply, session.id);
      const next =
        session.stage === 'enrol'
          ? 'Password accepted. Enrol an authenticator app to finish signing in.'
          : 'Password accepted. Enter the code of your authenticator app.';
      return sessionAnswer(deps, session, next);
    },
  );

  app.post(
    '/auth/totp',
    {
      schema: {
        operationId: 'staffTotp',
        tags,
        summary: 'The second factor: enrol an authenticator app, or enter its code',
        description:
          '`{action:"enrol"}` (stage enrol): a new secret (`secret`, base32, and `otpauth_url` for a QR code). ' +
          '`{action:"verify", code}`: a code of the app — confirms the enrolment (stage enrol) or completes the ' +
          'sign-in (stage totp); the session is replaced by a full one (new cookie and CSRF token).',
        body: mutationBody({
          action: Type.Union([Type.Literal('enrol'), Type.Literal('verify')]),
          code: Type.Optional(Str(20, 'the 6 digits the app shows (action verify)')),
        }),
        response: {
          200: Type.Union([okSchema({ secret: Type.String(), otpauth_url: Type.String() }), SessionAnswer]),
          ...sessionErrors(409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = staffSession(request);
      if (request.body.action === 'enrol') {
        const begun = await deps.staffAuth.beginTotp(session);
        return {
          success: true as const,
          message: 'Add this secret to your authenticator app, then send one of its codes (action verify).',
          secret: begun.secret,
          otpauth_url: begun.otpauthUrl,
        };
      }
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const full = await deps.staffAuth.completeTotp(session, request.body.code, clientInfo(request));
      setStaffCookie(deps, reply, full.id);
      return sessionAnswer(deps, full, 'Signed in.');
    },
  );

  app.post(
    '/auth/logout',
    {
      schema: {
        operationId: 'staffLogout',
        tags,
        summary: 'End this staff session (the CSRF token as the X-CSRF-Token header)',
        response: { 200: okSchema({}) },
      },
    },
    async (request, reply) => {
      if (request.staff.id !== null) await destroyStaffSession(deps.database.db, request.staff.id);
      clearStaffCookie(deps, reply);
      return { success: true as const, message: 'Signed out.' };
    },
  );

  app.get(
    '/me',
    {
      schema: {
        operationId: 'staffMe',
        tags,
        summary: 'Who is signed in, the session stage and its CSRF token',
        response: {
          200: okSchema({
            staff: Type.Object(
              {
                id: Type.Integer(),
                email: Type.String(),
                name: Type.String(),
                role: StaffRoleSchema,
                totp: Type.Boolean(),
              },
              { additionalProperties: false },
            ),
            stage: StageSchema,
            csrf_token: Type.String(),
            expires_at: Type.String({ format: 'date-time' }),
          }),
        },
      },
    },
    async (request) => {
      const session = staffSession(request);
      const { staff } = session;
      return {
        success: true as const,
        message: 'Signed in.',
        staff: { id: staff.id, email: staff.email, name: staff.name, role: staff.role, totp: staff.totpEnrolled },
        stage: session.stage,
        csrf_token: staffCsrfToken(deps.secretKey, request.staff.id as string),
        expires_at: isoWithOffset(session.expiresAt),
      };
    },
  );
}
