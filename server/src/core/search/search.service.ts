// Search (spec 4.13, CONTRACT §8): one parsed query (./query.ts) run against the caller's
// services, IPv4 addresses, orders, wallet transactions and deposits, in that group order, each
// group with its exact total and its first `limit` items. Every query is scoped to the account
// (or, for staff, the accounts `user:` names, else all), so its cost follows the account's rows;
// user text goes into LIKE patterns escaped and is folded (case, accents) on both sides with the
// database's `hp_fold` (each row's text is folded when written: `search_text`, migration 0011,
// with the trigram index that serves substring and fuzzy matches inside the account's rows).
// Each group has its searcher (./searchers/), sharing one context per search (./context.ts).

import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import type { ReadCache } from '../services/list-cache.ts';
import { type Searcher, searchContext } from './context.ts';
import { holdsText } from './matches.ts';
import { type ParsedQuery, SEARCH_TYPES, type SearchOperators, type SearchType } from './query.ts';
import { depositSearcher } from './searchers/deposit.searcher.ts';
import { ipSearcher } from './searchers/ip.searcher.ts';
import { orderSearcher } from './searchers/order.searcher.ts';
import { serviceSearcher } from './searchers/service.searcher.ts';
import { transactionSearcher } from './searchers/transaction.searcher.ts';

export const DEFAULT_LIMIT = 5;
export const MAX_LIMIT = 50;

export interface SearchItem {
  id: string;
  title: string;
  url: string;
}

export interface SearchGroup {
  type: SearchType;
  label: string;
  total: number;
  items: SearchItem[];
}

/** The searcher of each result group. */
const SEARCHERS: Record<SearchType, Searcher> = {
  service: serviceSearcher,
  ip: ipSearcher,
  order: orderSearcher,
  transaction: transactionSearcher,
  deposit: depositSearcher,
};

const SERVICE_STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'];
const ORDER_STATUSES = ['unpaid', 'paid', 'refunded', 'cancelled'];
const DEPOSIT_STATUSES = ['pending', 'approved', 'rejected'];

/** Who is searching: one account (a client), or staff (every account, or those `user:` names). */
export type SearchScope = { accountId: number } | { staff: true };

/** The operators with the values that compare without case lower-cased (locations, nodes and accounts are named in any case); an unknown status is refused. */
function normalised(operators: SearchOperators): SearchOperators {
  const lower = (values: string[]) => values.map((v) => v.toLowerCase());
  const ops = {
    ...operators,
    status: lower(operators.status),
    loc: lower(operators.loc),
    node: lower(operators.node),
    user: lower(operators.user),
  };
  for (const s of ops.status) {
    if (![...SERVICE_STATUSES, ...ORDER_STATUSES, ...DEPOSIT_STATUSES].includes(s)) {
      throw AppError.fields({ q: `status:${s} is not a status of services, orders or deposits` });
    }
  }
  return ops;
}

/** The groups to search, in group order: those `type:` (or the route's `type`) asks for that the operators leave in. */
function groupsOf(ops: SearchOperators, only: SearchType | null | undefined): SearchType[] {
  let types: readonly SearchType[] = ops.type.length > 0 ? ops.type : SEARCH_TYPES;
  if (only) types = types.filter((t) => t === only);
  // An operator a group has nothing to match on leaves that group out.
  if (ops.status.length > 0) types = types.filter((t) => t !== 'ip' && t !== 'transaction');
  if (ops.loc.length > 0 || ops.node.length > 0) types = types.filter((t) => t === 'service' || t === 'ip');
  if (ops.product.length > 0) types = types.filter((t) => t === 'service' || t === 'ip');
  return SEARCH_TYPES.filter((type) => types.includes(type));
}

/** The account ids the scope covers (null: every account), after `user:`. */
async function accountsOf(db: Kysely<DB>, scope: SearchScope, users: string[]): Promise<number[] | null> {
  if ('accountId' in scope) {
    if (users.length > 0) {
      const me = await db
        .selectFrom('accounts')
        .select(['username', 'email'])
        .where('id', '=', scope.accountId)
        .executeTakeFirstOrThrow();
      const mine = users.every((u) => u === me.username.toLowerCase() || u === me.email.toLowerCase());
      if (!mine)
        throw AppError.fields({ q: 'user: can only name your own account' }, 'user: can only name your own account.');
    }
    return [scope.accountId];
  }
  if (users.length === 0) return null;
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), 'in', users), eb(eb.fn('lower', ['email']), 'in', users)]))
    .execute();
  return rows.map((r) => r.id);
}

export function createSearch(options: {
  db: Kysely<DB>;
  publicUrl: string;
  /**
   * The plans whose name holds a text, kept until the catalog changes (deps.ts): a text search
   * needs them before its groups run, and reading them is a round trip of its own.
   */
  planCache?: ReadCache<number[]>;
}) {
  const { db, publicUrl, planCache } = options;
  const plansNamed = async (text: string): Promise<number[]> => {
    const load = async () =>
      (await db.selectFrom('plans').select('id').where(holdsText(sql`hp_fold(name)`, text)).execute()).map((r) => r.id);
    return planCache ? planCache.read(0, text, load) : load();
  };

  return {
    async search(
      parsed: ParsedQuery,
      scope: SearchScope,
      input: { limit?: number; type?: SearchType | null } = {},
    ): Promise<SearchGroup[]> {
      const limit = Math.min(Math.max(input.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
      const ops = normalised(parsed.operators);
      const accounts = await accountsOf(db, scope, ops.user);
      if (accounts !== null && accounts.length === 0) return [];
      const types = groupsOf(ops, input.type);
      const context = await searchContext({ db, parsed, ops, accounts, limit, plansNamed });
      // The groups are independent: on PostgreSQL each runs on its own pooled connection, at once.
      const answers = types.map(async (type): Promise<SearchGroup | null> => {
        const searcher = SEARCHERS[type];
        const rows = await searcher.rows(context);
        const total = rows.length === 0 ? 0 : Number(rows[0]?.total);
        if (total === 0) return null;
        return {
          type,
          label: searcher.label,
          total,
          items: rows.map((r) => ({ id: `${type}:${r.id}`, title: r.title, url: `${publicUrl}${searcher.path(r)}` })),
        };
      });
      return (await Promise.all(answers)).filter((group) => group !== null);
    },
  };
}

export type Search = ReturnType<typeof createSearch>;
