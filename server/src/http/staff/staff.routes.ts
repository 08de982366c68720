// /api/v1/staff/staff (admin, CONTRACT §14): the staff directory. GET lists every member;
// POST {action} adds one (an invitation is mailed), mails a new invitation, disables one (their
// sessions end at once), changes a role, or forgets an authenticator. Each change is audited
// with the admin who made it (core/staff/staff.service.ts).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { actorOf, StaffMemberSchema, StaffRoleSchema, staffMemberView } from './context.ts';

const tags = ['staff: directory'];

const Body = mutationBody(
  {
    action: Type.Union([
      Type.Literal('add'),
      Type.Literal('invite'),
      Type.Literal('disable'),
      Type.Literal('role'),
      Type.Literal('totp_reset'),
    ]),
    id: Type.Optional(Type.Integer({ minimum: 1, description: 'the member (every action but add)' })),
    email: Type.Optional(Type.String({ maxLength: 320, description: 'add' })),
    name: Type.Optional(Type.String({ maxLength: 512, description: 'add (default: the e-mail before the @)' })),
    role: Type.Optional(StaffRoleSchema),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'disable, role: kept in the audit log' })),
  },
  'add {email, role, name?}; invite {id}; disable {id, reason?}; role {id, role, reason?}; totp_reset {id}',
);

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw AppError.fields({ [field]: 'is required' });
  return value;
}

export async function staffDirectoryRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/staff',
    {
      schema: {
        operationId: 'staffList',
        tags,
        summary: 'Every staff member',
        response: { 200: okSchema({ staff: Type.Array(StaffMemberSchema) }) },
      },
    },
    async () => ({
      success: true as const,
      message: 'Staff members.',
      staff: (await deps.staff.list()).map(staffMemberView),
    }),
  );

  app.post(
    '/staff',
    {
      schema: {
        operationId: 'staffChange',
        tags,
        summary: 'Add, invite, disable a staff member, change a role, or forget an authenticator',
        description:
          'You cannot disable yourself or change your own role (409). A disabled member is signed out at once.',
        body: Body,
        response: {
          200: okSchema({ staff: StaffMemberSchema, sessions_ended: Type.Optional(Type.Integer()) }),
          201: okSchema({ staff: StaffMemberSchema }),
          ...sessionErrors(404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const actor = actorOf(request);
      const reason = body.reason?.trim() || null;
      switch (body.action) {
        case 'add': {
          const fields: Record<string, string> = {};
          if (body.email === undefined) fields.email = 'is required';
          if (body.role === undefined) fields.role = 'is required';
          if (Object.keys(fields).length > 0) throw AppError.fields(fields);
          const added = await deps.staff.add(
            { email: body.email as string, role: body.role as string, ...(body.name ? { name: body.name } : {}) },
            actor,
          );
          return reply
            .code(201)
            .send({ success: true as const, message: 'Added; invitation mailed.', staff: staffMemberView(added) });
        }
        case 'invite': {
          const member = await deps.staff.invite(required(body.id, 'id'), actor);
          return { success: true as const, message: 'Invitation mailed.', staff: staffMemberView(member) };
        }
        case 'disable': {
          const done = await deps.staff.disable(required(body.id, 'id'), actor, reason);
          return {
            success: true as const,
            message: 'Disabled; signed out everywhere.',
            staff: staffMemberView(done.staff),
            sessions_ended: done.endedSessions,
          };
        }
        case 'role': {
          const member = await deps.staff.setRole(required(body.id, 'id'), required(body.role, 'role'), actor, reason);
          return { success: true as const, message: `Role is now ${member.role}.`, staff: staffMemberView(member) };
        }
        default: {
          const done = await deps.staff.resetTotp(required(body.id, 'id'), actor);
          return {
            success: true as const,
            message: 'Authenticator forgotten; they enrol again at their next sign-in.',
            staff: staffMemberView(done.staff),
            sessions_ended: done.endedSessions,
          };
        }
      }
    },
  );
}
