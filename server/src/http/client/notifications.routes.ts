// Spec 4.11: GET /api/v1/client/notifications/ (paginated, with the unread count);
// POST {action: "read", id} marks one read (another account's id is 404), {action: "read_all"} all.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import type { Notification } from '../../db/tables.ts';
import { sessionErrors } from '../schemas.ts';
import { PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const NotificationSchema = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  title: Type.String(),
  body: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  read: Type.Boolean(),
  read_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

function view(n: Notification) {
  return {
    id: n.id,
    kind: n.kind,
    title: n.title,
    body: n.body,
    data: n.data,
    read: n.read_at !== null,
    read_at: n.read_at ? isoWithOffset(n.read_at) : null,
    created_at: isoWithOffset(n.created_at),
  };
}

export async function notificationRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['notifications'];
  app.get(
    '/notifications/',
    {
      schema: {
        operationId: 'listNotifications',
        tags,
        summary: 'Your notifications, newest first, with the unread count',
        querystring: Type.Object(
          { ...PAGE_QUERY, unread: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: {
          200: okSchema({
            notifications: Type.Array(NotificationSchema),
            unread: Type.Integer(),
            pagination: PaginationSchema,
          }),
          ...sessionErrors(401, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const q = request.query;
      const { page, perPage } = pageOf(q);
      const list = await deps.notifications.list(session.account.id, {
        page,
        perPage,
        unreadOnly: q.unread ?? false,
      });
      return {
        success: true as const,
        message: 'Notifications loaded.',
        notifications: list.rows.map(view),
        unread: list.unread,
        pagination: pagination(page, perPage, list.total),
      };
    },
  );

  app.post(
    '/notifications/',
    {
      schema: {
        operationId: 'markNotificationsRead',
        tags,
        summary: 'Mark one notification read ({action:"read", id}) or all ({action:"read_all"})',
        body: mutationBody({
          action: Type.Union([Type.Literal('read'), Type.Literal('read_all')]),
          id: Type.Optional(Type.Integer({ minimum: 1 })),
        }),
        response: {
          200: Type.Union([okSchema({ notification: NotificationSchema }), okSchema({ marked: Type.Integer() })]),
          ...sessionErrors(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const body = request.body;
      if (body.action === 'read_all') {
        const marked = await deps.notifications.markAllRead(session.account.id);
        return { success: true as const, message: `${counted(marked, 'notification')} marked read.`, marked };
      }
      if (body.id === undefined) throw AppError.fields({ id: 'is required' });
      const notification = await deps.notifications.markRead(session.account.id, body.id);
      return { success: true as const, message: 'Notification marked read.', notification: view(notification) };
    },
  );
}
