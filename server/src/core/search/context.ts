// One search's shared state, built once before its groups run (./search.service.ts): the query and
// its operators, the accounts it covers, the small tables an operator or the text names resolved
// to ids, and the SQL pieces the searchers (./searchers/) have in common. Also the contract of a
// searcher: one per result group.

import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { holdsText } from './matches.ts';
import type { ParsedQuery, SearchKind, SearchOperators } from './query-types.ts';

/** A row of a group's page: every row carries the group's total. */
export type Row = { id: number; title: string; total: string | number; service_id?: number | null };

/** How one result group is searched, titled and linked to. */
export interface Searcher {
  label: string;
  /** Where an item is read on the session surface. */
  path(row: Row): string;
  /** The group's page, newest (or lowest address) first; none when nothing in the group can match. */
  rows(context: SearchContext): Promise<Row[]>;
}

export type PagedTable = 'services' | 'orders' | 'wallet_transactions' | 'deposits';

export interface SearchContext {
  db: Kysely<DB>;
  parsed: ParsedQuery;
  /** The parsed operators, their `status`, `loc`, `node` and `user` values lower-cased. */
  ops: SearchOperators;
  /** Items per group. */
  limit: number;
  text: string;
  hasText: boolean;
  /** The address or prefix the text names, as an inet literal; null when it names none. */
  cidr: string | null;
  /** Free text other than an identifier of another kind (a pay_ id is no label). */
  textual(...excluded: SearchKind[]): boolean;
  /** Whether an account column is one of the scope's accounts. */
  inScope(column: string): RawBuilder<SqlBool>;
  /** Whether the folded text of a row (`alias`) holds the query's text (migration 0011: `search_text`). */
  holds(alias: string): RawBuilder<SqlBool>;
  /** A match that cannot hold: a searcher given it runs no statement at all (each costs a round trip). */
  none: RawBuilder<SqlBool>;
  all: RawBuilder<SqlBool>;
  /** Whether `column` is one of `values` (null: any). */
  ids(column: string, values: number[] | null): RawBuilder<SqlBool>;
  /** The locations `loc:` names (null: no `loc:`). */
  locationIds: number[] | null;
  /** The nodes `node:` names (null: no `node:`). */
  nodeIds: number[] | null;
  /** An operator naming no location or node leaves nothing for the groups that filter on them. */
  nowhere: boolean;
  /** The rows (`select`, given a match) that hold the text or are of a plan it names. */
  holdingOrPlan(select: (match: RawBuilder<SqlBool>) => RawBuilder<unknown>, alias: string): RawBuilder<unknown>;
  /** The `loc:`, `node:` and product-type filters on a service (`alias`). */
  serviceFilters(alias: string): RawBuilder<SqlBool>;
  /** A group's page newest first, with its total (see newestFirst). */
  newest(
    matches: RawBuilder<unknown>,
    table: PagedTable,
    title: RawBuilder<unknown>,
    before?: RawBuilder<unknown>,
  ): Promise<Row[]>;
}

/** The address or prefix the parsed text names, as an inet literal. */
function cidrOf(parsed: ParsedQuery): string | null {
  if (parsed.cidr) return `${parsed.cidr.network}/${parsed.cidr.prefix}`;
  if (parsed.ipv4) return `${parsed.ipv4}/32`;
  if (parsed.ipv6) return `${parsed.ipv6}/128`;
  return null;
}

async function locationsNamed(db: Kysely<DB>, loc: string[]): Promise<number[] | null> {
  if (loc.length === 0) return null;
  const rows = await db
    .selectFrom('locations')
    .select('id')
    .where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['code']), 'in', loc),
        eb(
          sql`hp_fold(name)`,
          'in',
          loc.map((v) => sql`hp_fold(${v})`),
        ),
      ]),
    )
    .execute();
  return rows.map((r) => r.id);
}

async function nodesNamed(db: Kysely<DB>, node: string[]): Promise<number[] | null> {
  if (node.length === 0) return null;
  return (await db.selectFrom('nodes').select('id').where(sql`lower(name)`, 'in', node).execute()).map((r) => r.id);
}

/**
 * A group newest first: `matches` (a select of the matching rows' `id`) is materialised once,
 * so the total and the page read the same set and the planner plans the match over every row
 * (a LIMIT under `count(*) over ()` makes it walk the primary key instead, evaluating the
 * match on each of the account's rows); only the page's rows are read for their titles.
 * `before`: common table expressions `matches` reads (`name as (…)`, comma-separated).
 */
function newestFirst(db: Kysely<DB>, limit: number): SearchContext['newest'] {
  return async (matches, table, title, before) =>
    (
      await sql<Row>`
        with ${before ? sql`${before},` : sql``} m as materialized (${matches})
        select r.id, ${title} as title, (select count(*) from m) as total
        from (select id from m order by id desc limit ${limit}) x
        join ${sql.table(table)} r on r.id = x.id
        ${table === 'services' || table === 'orders' ? sql`join plans p on p.id = r.plan_id` : sql``}
        order by r.id desc`.execute(db)
    ).rows;
}

/**
 * Build a search's context. The small tables an operator or the text names are resolved to ids
 * first (locations, nodes, then the plans named by the text): the big tables are then filtered
 * by id, inside the account's index ranges.
 */
export async function searchContext(input: {
  db: Kysely<DB>;
  parsed: ParsedQuery;
  ops: SearchOperators;
  /** The account ids the scope covers (null: every account). */
  accounts: number[] | null;
  limit: number;
  plansNamed: (text: string) => Promise<number[]>;
}): Promise<SearchContext> {
  const { db, parsed, ops, accounts, limit } = input;
  const text = parsed.text;
  const hasText = text !== '';
  const textual = (...excluded: SearchKind[]) => hasText && !excluded.includes(parsed.kind);
  const inScope = (column: string) =>
    accounts === null
      ? sql<SqlBool>`${sql.ref(column)} is not null`
      : sql<SqlBool>`${sql.ref(column)} in (${sql.join(accounts)})`;
  const holds = (alias: string) => holdsText(sql.ref(`${alias}.search_text`), text);
  const none = sql<SqlBool>`false`;
  const all = sql<SqlBool>`true`;
  const ids = (column: string, values: number[] | null) =>
    values === null ? all : values.length === 0 ? none : sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`;

  const locationIds = await locationsNamed(db, ops.loc);
  const nodeIds = await nodesNamed(db, ops.node);
  const planIds = textual('payment_id', 'order_id', 'mac') ? await input.plansNamed(text) : [];
  return {
    db,
    parsed,
    ops,
    limit,
    text,
    hasText,
    cidr: cidrOf(parsed),
    textual,
    inScope,
    holds,
    none,
    all,
    ids,
    locationIds,
    nodeIds,
    nowhere: locationIds?.length === 0 || nodeIds?.length === 0,
    // Two disjoint branches: a plan's rows are read from the (account_id, plan_id, id) index alone
    // (migration 0018; thousands of them in one search, each a visit to the table when one bitmap
    // served both), the text's from the trigram index.
    holdingOrPlan: (select, alias) =>
      planIds.length === 0
        ? select(holds(alias))
        : sql`${select(sql<SqlBool>`${holds(alias)} and ${sql.ref(`${alias}.plan_id`)} not in (${sql.join(planIds)})`)}
            union all
            ${select(ids(`${alias}.plan_id`, planIds))}`,
    serviceFilters: (alias) => sql<SqlBool>`${ids(`${alias}.location_id`, locationIds)}
        and ${ids(`${alias}.node_id`, nodeIds)}
        and ${ops.product.length > 0 ? sql`${sql.ref(`${alias}.type`)} in (${sql.join(ops.product)})` : all}`,
    newest: newestFirst(db, limit),
  };
}
