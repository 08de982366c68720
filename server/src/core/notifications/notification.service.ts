// In-app notifications (spec 4.11). Created inside the transaction of whatever they announce;
// each belongs to one account, and reading or marking another account's is "not found".

import type { Kysely } from 'kysely';
import type { DB, Notification } from '../../db/tables.ts';
import { AppError } from '../errors.ts';

export interface NewNotification {
  kind: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
}

export async function notify(trx: Kysely<DB>, accountId: number, n: NewNotification): Promise<Notification> {
  return trx
    .insertInto('notifications')
    .values({ account_id: accountId, kind: n.kind, title: n.title, body: n.body, data: JSON.stringify(n.data ?? {}) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function createNotificationService({ db, clock }: { db: Kysely<DB>; clock: () => Date }) {
  return {
    async list(accountId: number, options: { page: number; perPage: number; unreadOnly: boolean }) {
      let query = db.selectFrom('notifications').where('account_id', '=', accountId);
      if (options.unreadOnly) query = query.where('read_at', 'is', null);
      const [rows, total, unread] = await Promise.all([
        query
          .selectAll()
          .orderBy('id', 'desc')
          .limit(options.perPage)
          .offset((options.page - 1) * options.perPage)
          .execute(),
        query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
        db
          .selectFrom('notifications')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('account_id', '=', accountId)
          .where('read_at', 'is', null)
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(total.n), unread: Number(unread.n) };
    },

    /** Mark one of the account's notifications read (idempotent); another account's id is 404. */
    async markRead(accountId: number, id: number): Promise<Notification> {
      const row = await db
        .updateTable('notifications')
        .set((eb) => ({ read_at: eb.fn.coalesce('read_at', eb.val(clock())) }))
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new AppError('not_owner');
      return row;
    },

    async markAllRead(accountId: number): Promise<number> {
      const result = await db
        .updateTable('notifications')
        .set({ read_at: clock() })
        .where('account_id', '=', accountId)
        .where('read_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
