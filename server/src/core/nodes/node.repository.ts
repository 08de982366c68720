// Queries on nodes. Functions take the executor first (the root db or a transaction); the lock
// takes a Transaction. Nodes belong to the platform, not to an account: no owner here, and
// nothing that a client can reach returns their sealed credentials.

import type { Insertable, Kysely, Transaction } from 'kysely';
import type { DB, NodeKind, NodeRow, NodesTable } from '../../db/tables.ts';

export type Executor = Kysely<DB>;

export function insert(db: Executor, values: Insertable<NodesTable>): Promise<NodeRow> {
  return db.insertInto('nodes').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Insert the node, or refresh the one of that name (endpoint, credentials, settings; health up):
 * how demo mode points its nodes at this start's emulators.
 */
export async function upsert(db: Executor, values: Insertable<NodesTable>): Promise<void> {
  await db
    .insertInto('nodes')
    .values({ ...values, health: 'up' })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({
        endpoint: values.endpoint,
        credentials_sealed: values.credentials_sealed,
        settings: values.settings ?? '{}',
        health: 'up',
      }),
    )
    .execute();
}

export function list(db: Executor): Promise<NodeRow[]> {
  return db.selectFrom('nodes').selectAll().orderBy('id').execute();
}

export function findById(db: Executor, id: number): Promise<NodeRow | undefined> {
  return db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findByIds(db: Executor, ids: number[]): Promise<NodeRow[]> {
  return db.selectFrom('nodes').selectAll().where('id', 'in', ids).execute();
}

/** Active, not-down nodes of a kind in a location, by id: where an order may be placed. */
export function usableIn(db: Executor, locationId: number, kind: NodeKind) {
  return db
    .selectFrom('nodes')
    .select(['id', 'capacity'])
    .where('location_id', '=', locationId)
    .where('kind', '=', kind)
    .where('active', '=', true)
    .where('health', '<>', 'down')
    .orderBy('id')
    .execute();
}

/** Lock the node row (FOR UPDATE): orders placing on one node serialise on it. */
export async function lock(trx: Transaction<DB>, id: number): Promise<void> {
  await trx.selectFrom('nodes').select('id').where('id', '=', id).forUpdate().execute();
}

export async function setHealth(
  db: Executor,
  id: number,
  health: 'up' | 'down',
  detail: string | null,
  checkedAt: Date,
): Promise<void> {
  await db
    .updateTable('nodes')
    .set({ health, health_detail: detail, checked_at: checkedAt })
    .where('id', '=', id)
    .execute();
}
