// CONTRACT §11: GET|POST /api/v1/client/account/sessions/ — the account's signed-in sessions
// (where and on what, never the cookie or its hash), and ending one or all but the current one.
// An ended session is refused by this process at the next request, and by every other process as
// soon as the database's change notice reaches it (core/auth/sessions.ts, migration 0015).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { deviceOf } from '../../core/auth/device.ts';
import { revokeOneSession, revokeOtherSessions } from '../../core/auth/session-revoke.ts';
import { listSessions } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { clearSessionCookie, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['account'];

const SessionSchema = Type.Object({
  id: Type.Integer({ description: 'the public id of the session (not its cookie)' }),
  created_at: Type.String({ format: 'date-time', description: 'when it signed in' }),
  last_seen_at: Type.String({ format: 'date-time', description: 'its latest request (to the minute)' }),
  ip: Type.Union([Type.String(), Type.Null()], { description: 'the address it signed in from' }),
  device: Type.String({ description: 'browser and system, read from its User-Agent, e.g. "Chrome on Windows"' }),
  current: Type.Boolean({ description: 'the session making this request' }),
});

export async function sessionListRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/account/sessions/',
    {
      schema: {
        operationId: 'listSessions',
        tags,
        summary: 'Where the account is signed in',
        response: { 200: okSchema({ sessions: Type.Array(SessionSchema) }), ...sessionErrors(401) },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const rows = await listSessions(deps.database.db, deps.clock, session.account.id);
      return {
        success: true as const,
        message: `${counted(rows.length, 'session')}.`,
        sessions: rows.map((r) => ({
          id: r.publicId,
          created_at: isoWithOffset(r.createdAt),
          last_seen_at: isoWithOffset(r.lastSeenAt),
          ip: r.ip,
          device: deviceOf(r.userAgent),
          current: r.idHash === session.idHash,
        })),
      };
    },
  );

  app.post(
    '/account/sessions/',
    {
      schema: {
        operationId: 'revokeSessions',
        tags,
        summary: 'End one session ({action:"revoke", id}) or every other one ({action:"revoke_others"})',
        description:
          'An ended session is signed out at its next request. Ending the current session signs this browser out ' +
          '(its cookie is cleared). An id the account has no session of is 404 not_owner.',
        body: mutationBody({
          action: Type.Union([Type.Literal('revoke'), Type.Literal('revoke_others')]),
          id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
        }),
        response: {
          200: okSchema({ sessions_ended: Type.Integer() }),
          ...sessionErrors(400, 401, 403, 404, 422),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      const revoking = { db: deps.database.db, clock: deps.clock };
      if (body.action === 'revoke_others') {
        const ended = await revokeOtherSessions(revoking, session.account.id, session.idHash, whoOf(request));
        return {
          success: true as const,
          message: `${counted(ended, 'other session')} signed out.`,
          sessions_ended: ended,
        };
      }
      if (body.id === undefined) throw AppError.fields({ id: 'is required' });
      const current = body.id === session.publicId;
      if (!(await revokeOneSession(revoking, session.account.id, body.id, current, whoOf(request)))) {
        throw new AppError('not_owner');
      }
      if (body.id === session.publicId) clearSessionCookie(deps, reply);
      return { success: true as const, message: 'Session signed out.', sessions_ended: 1 };
    },
  );
}
