// A service's activity feed (spec §6: action=events): every lifecycle step, written in the
// transaction of the change it describes where there is one.

import type { Kysely } from 'kysely';
import type { DB, ServiceEvent } from '../../db/tables.ts';

export async function recordEvent(
  db: Kysely<DB>,
  serviceId: number,
  kind: string,
  message: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await db
    .insertInto('service_events')
    .values({ service_id: serviceId, kind, message, data: JSON.stringify(data) })
    .execute();
}

export async function listEvents(db: Kysely<DB>, serviceId: number, limit = 100): Promise<ServiceEvent[]> {
  return db
    .selectFrom('service_events')
    .selectAll()
    .where('service_id', '=', serviceId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
