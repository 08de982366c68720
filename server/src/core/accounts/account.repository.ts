// Queries on accounts. Functions take the executor first (the root db or a transaction).

import type { Kysely } from 'kysely';
import type { Account, DB } from '../../db/tables.ts';

export type Executor = Kysely<DB>;

export async function findById(db: Executor, id: number): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** By e-mail when the identifier has an `@`, else by username; both already lower-case. */
export async function findByIdentifier(db: Executor, identifier: string): Promise<Account | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where(identifier.includes('@') ? 'email' : 'username', '=', identifier)
    .executeTakeFirst();
}

export async function emailOrUsernameTaken(db: Executor, email: string, username: string) {
  const rows = await db
    .selectFrom('accounts')
    .select(['email', 'username'])
    .where((eb) => eb.or([eb('email', '=', email), eb('username', '=', username)]))
    .execute();
  return { email: rows.some((r) => r.email === email), username: rows.some((r) => r.username === username) };
}

export interface AccountListFilter {
  search?: string;
  status?: 'active' | 'unverified' | 'suspended';
  limit: number;
  offset: number;
}

export async function list(db: Executor, filter: AccountListFilter): Promise<Account[]> {
  let query = db.selectFrom('accounts').selectAll().orderBy('id', 'asc').limit(filter.limit).offset(filter.offset);
  if (filter.search) {
    const like = `%${filter.search.toLowerCase().replace(/[\\%_]/g, '\\$&')}%`;
    query = query.where((eb) =>
      eb.or([eb('email', 'like', like), eb('username', 'like', like), eb(eb.fn('lower', ['name']), 'like', like)]),
    );
  }
  if (filter.status === 'suspended') query = query.where('suspended_at', 'is not', null);
  if (filter.status === 'unverified')
    query = query.where('email_verified_at', 'is', null).where('suspended_at', 'is', null);
  if (filter.status === 'active')
    query = query.where('email_verified_at', 'is not', null).where('suspended_at', 'is', null);
  return query.execute();
}
