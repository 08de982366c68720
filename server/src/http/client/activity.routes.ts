// CONTRACT §11: GET /api/v1/client/account/activity/ — the account's activity log, newest first,
// a page at a time, of one type or of every type of a prefix (`?type=two_factor`). What is
// recorded and when: core/activity/activity.ts.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  ACTIVITY_TYPES,
  type ActivityRow,
  listActivity,
  typePrefixes,
  typesNamed,
} from '../../core/activity/activity.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { sessionErrors } from '../schemas.ts';
import { PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { okSchema } from './envelopes.ts';

const ActivitySchema = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: `one of ${ACTIVITY_TYPES.join(', ')}` }),
  at: Type.String({ format: 'date-time' }),
  ip: Type.Union([Type.String(), Type.Null()], {
    description: 'the address the customer acted from (null for staff and the platform)',
  }),
  actor: Type.Union([Type.Literal('self'), Type.Literal('staff'), Type.Literal('system')], {
    description: 'self: you; staff: Hostplane staff (staff_name); system: the platform on its own',
  }),
  staff_name: Type.Optional(Type.String({ description: 'only when actor is staff' })),
  summary: Type.String({ description: 'what happened, in a sentence' }),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description: 'ids, public ids, amounts, names and hints (never a password, code, token or cookie)',
  }),
});

function view(row: ActivityRow) {
  return {
    id: Number(row.id),
    type: row.type,
    at: isoWithOffset(row.at),
    ip: row.ip,
    actor: row.actor,
    ...(row.actor === 'staff' && row.staff_name !== null ? { staff_name: row.staff_name } : {}),
    summary: row.summary,
    details: row.details,
  };
}

export async function activityRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/account/activity/',
    {
      schema: {
        operationId: 'listActivity',
        tags: ['account'],
        summary: 'What happened to your account, newest first: sign-ins, security changes, money, consoles',
        description:
          '`type` is one type of event, or a prefix naming several (' +
          `${typePrefixes().join(', ')}: e.g. two_factor is every two_factor_* event); another is 422. ` +
          `Events are kept one year.`,
        querystring: Type.Object(
          {
            ...PAGE_QUERY,
            type: Type.Optional(Type.String({ maxLength: 64, description: 'a type of event, or a prefix of types' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: okSchema({ events: Type.Array(ActivitySchema), pagination: PaginationSchema }),
          ...sessionErrors(401, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const q = request.query;
      const { page, perPage } = pageOf(q);
      let types: string[] | null = null;
      if (q.type !== undefined && q.type !== '') {
        types = typesNamed(q.type);
        if (types === null) {
          throw AppError.fields({
            type: `is not a type of event: one of ${ACTIVITY_TYPES.join(', ')}, or a prefix such as two_factor`,
          });
        }
      }
      const list = await listActivity(deps.database.db, session.account.id, { page, perPage, types });
      return {
        success: true as const,
        message: `${counted(list.total, 'event')}.`,
        events: list.rows.map(view),
        pagination: pagination(page, perPage, list.total),
      };
    },
  );
}
