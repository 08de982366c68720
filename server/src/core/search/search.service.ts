// Search (spec 4.13, CONTRACT §8): one parsed query (./query.ts) run against the caller's
// services, IPv4 addresses, orders, wallet transactions and deposits, in that group order, each
// group with its exact total and its first `limit` items. Every query is scoped to the account
// (or, for staff, the accounts `user:` names, else all), so its cost follows the account's rows;
// user text goes into LIKE patterns escaped and is folded (case, accents) on both sides with the
// database's `hp_fold` (each row's text is folded when written: `search_text`, migration 0011,
// with the trigram index that serves substring and fuzzy matches inside the account's rows).

import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { formatPaise } from '../money.ts';
import type { ReadCache } from '../services/list-cache.ts';
import { escapeLike, type ParsedQuery, SEARCH_TYPES, type SearchKind, type SearchType, textPatterns } from './query.ts';

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

const LABELS: Record<SearchType, string> = {
  service: 'Services',
  ip: 'IP addresses',
  order: 'Orders',
  transaction: 'Wallet transactions',
  deposit: 'Deposits',
};

const SERVICE_STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'];
const ORDER_STATUSES = ['unpaid', 'paid', 'refunded', 'cancelled'];
const DEPOSIT_STATUSES = ['pending', 'approved', 'rejected'];

/** Who is searching: one account (a client), or staff (every account, or those `user:` names). */
export type SearchScope = { accountId: number } | { staff: true };

type Row = { id: number; title: string; total: string | number; service_id?: number | null };

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
  const url = (path: string) => `${publicUrl}${path}`;

  /** The account ids the scope covers (null: every account), after `user:`. */
  async function accountsOf(scope: SearchScope, users: string[]): Promise<number[] | null> {
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

  return {
    async search(
      parsed: ParsedQuery,
      scope: SearchScope,
      input: { limit?: number; type?: SearchType | null } = {},
    ): Promise<SearchGroup[]> {
      const limit = Math.min(Math.max(input.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
      // Operator values compare without case (locations, nodes and accounts are named in any case).
      const lower = (values: string[]) => values.map((v) => v.toLowerCase());
      const ops = {
        ...parsed.operators,
        status: lower(parsed.operators.status),
        loc: lower(parsed.operators.loc),
        node: lower(parsed.operators.node),
        user: lower(parsed.operators.user),
      };
      for (const s of ops.status) {
        if (![...SERVICE_STATUSES, ...ORDER_STATUSES, ...DEPOSIT_STATUSES].includes(s)) {
          throw AppError.fields({ q: `status:${s} is not a status of services, orders or deposits` });
        }
      }
      const accounts = await accountsOf(scope, ops.user);
      if (accounts !== null && accounts.length === 0) return [];
      let types: readonly SearchType[] = ops.type.length > 0 ? ops.type : SEARCH_TYPES;
      if (input.type) types = types.filter((t) => t === input.type);
      // An operator a group has nothing to match on leaves that group out.
      if (ops.status.length > 0) types = types.filter((t) => t !== 'ip' && t !== 'transaction');
      if (ops.loc.length > 0 || ops.node.length > 0) types = types.filter((t) => t === 'service' || t === 'ip');
      if (ops.product.length > 0) types = types.filter((t) => t === 'service' || t === 'ip');

      const text = parsed.text;
      const hasText = text !== '';
      const cidr = parsed.cidr
        ? `${parsed.cidr.network}/${parsed.cidr.prefix}`
        : parsed.ipv4
          ? `${parsed.ipv4}/32`
          : parsed.ipv6
            ? `${parsed.ipv6}/128`
            : null;
      // Free text other than an identifier of another kind (a pay_ id is no label).
      const textual = (...excluded: SearchKind[]) => hasText && !excluded.includes(parsed.kind);

      const inScope = (column: string) =>
        accounts === null
          ? sql<SqlBool>`${sql.ref(column)} is not null`
          : sql<SqlBool>`${sql.ref(column)} in (${sql.join(accounts)})`;
      /** Whether the folded text of a row (`alias`) holds the query's text (migration 0011: `search_text`). */
      const holds = (alias: string) => holdsText(sql.ref(`${alias}.search_text`), text);
      const none = sql<SqlBool>`false`;
      const all = sql<SqlBool>`true`;
      const ids = (column: string, values: number[] | null) =>
        values === null ? all : values.length === 0 ? none : sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`;

      // The small tables an operator or the text names, resolved to ids first: the big tables are
      // then filtered by id, inside the account's index ranges.
      const locationIds =
        ops.loc.length === 0
          ? null
          : (
              await db
                .selectFrom('locations')
                .select('id')
                .where((eb) =>
                  eb.or([
                    eb(eb.fn('lower', ['code']), 'in', ops.loc),
                    eb(
                      sql`hp_fold(name)`,
                      'in',
                      ops.loc.map((v) => sql`hp_fold(${v})`),
                    ),
                  ]),
                )
                .execute()
            ).map((r) => r.id);
      const nodeIds =
        ops.node.length === 0
          ? null
          : (await db.selectFrom('nodes').select('id').where(sql`lower(name)`, 'in', ops.node).execute()).map(
              (r) => r.id,
            );
      const planIds = textual('payment_id', 'order_id', 'mac') ? await plansNamed(text) : [];
      // An operator naming no location or node leaves nothing for the groups that filter on them.
      const nowhere = locationIds?.length === 0 || nodeIds?.length === 0;
      /**
       * The rows (`select`, given a match) that hold the text or are of a plan it names, as two
       * disjoint branches: a plan's rows are read from the (account_id, plan_id, id) index alone
       * (migration 0018; thousands of them in one search, each a visit to the table when one
       * bitmap served both), the text's from the trigram index.
       */
      const holdingOrPlan = (select: (match: RawBuilder<SqlBool>) => RawBuilder<unknown>, alias: string) =>
        planIds.length === 0
          ? select(holds(alias))
          : sql`${select(sql<SqlBool>`${holds(alias)} and ${sql.ref(`${alias}.plan_id`)} not in (${sql.join(planIds)})`)}
            union all
            ${select(ids(`${alias}.plan_id`, planIds))}`;
      const serviceFilters = (alias: string) => sql<SqlBool>`${ids(`${alias}.location_id`, locationIds)}
        and ${ids(`${alias}.node_id`, nodeIds)}
        and ${ops.product.length > 0 ? sql`${sql.ref(`${alias}.type`)} in (${sql.join(ops.product)})` : all}`;

      /**
       * A group newest first: `matches` (a select of the matching rows' `id`) is materialised once,
       * so the total and the page read the same set and the planner plans the match over every row
       * (a LIMIT under `count(*) over ()` makes it walk the primary key instead, evaluating the
       * match on each of the account's rows); only the page's rows are read for their titles.
       */
      const newest = async (
        matches: RawBuilder<unknown>,
        table: 'services' | 'orders' | 'wallet_transactions' | 'deposits',
        title: RawBuilder<unknown>,
        /** Common table expressions `matches` reads (`name as (…)`, comma-separated). */
        before?: RawBuilder<unknown>,
      ): Promise<Row[]> =>
        (
          await sql<Row>`
            with ${before ? sql`${before},` : sql``} m as materialized (${matches})
            select r.id, ${title} as title, (select count(*) from m) as total
            from (select id from m order by id desc limit ${limit}) x
            join ${sql.table(table)} r on r.id = x.id
            ${table === 'services' || table === 'orders' ? sql`join plans p on p.id = r.plan_id` : sql``}
            order by r.id desc`.execute(db)
        ).rows;
      const serviceTitle = sql`r.label || ' — ' || p.name || ' (' || r.status || ')'`;

      // The groups are independent: on PostgreSQL each runs on its own pooled connection, at once.
      const answers = SEARCH_TYPES.filter((type) => types.includes(type)).map(
        async (type): Promise<SearchGroup | null> => {
          let rows: Row[] = [];
          switch (type) {
            case 'service': {
              if (nowhere) break;
              // A match that cannot hold (`none`) runs no statement at all: each costs a round trip.
              const matching = (match: RawBuilder<SqlBool>, alias = 's') =>
                sql`select ${sql.ref(`${alias}.id`)} from services ${sql.ref(alias)}
                    where ${inScope(`${alias}.account_id`)}
                      and ${match}
                      and ${ops.status.length > 0 ? sql`${sql.ref(`${alias}.status`)} in (${sql.join(ops.status)})` : all}
                      and ${serviceFilters(alias)}`;
              const services = async (match: RawBuilder<SqlBool>) =>
                match === none ? [] : newest(matching(match), 'services', serviceTitle);
              if (parsed.number !== undefined) rows = await services(sql<SqlBool>`s.id = ${parsed.number}`);
              else if (
                cidr &&
                ops.status.length === 0 &&
                locationIds === null &&
                nodeIds === null &&
                ops.product.length === 0
              )
                // Nothing to filter on the services themselves: the services a range holds are
                // counted and paged from the address index alone (its rows carry the service id and
                // are the account's), and only the page is read from services.
                rows = await newest(
                  sql`select distinct ip.service_id as id from ipv4_addresses ip
                    where ${inScope('ip.account_id')} and ip.address <<= ${cidr}::inet`,
                  'services',
                  serviceTitle,
                );
              else if (cidr)
                rows = await services(sql<SqlBool>`s.id in (select ip.service_id from ipv4_addresses ip
                where ${inScope('ip.account_id')} and ip.address <<= ${cidr}::inet)`);
              else if (parsed.mac !== undefined) rows = await services(hasMac('s', parsed.mac));
              else if (textual('payment_id', 'order_id', 'mac')) {
                const holding = holdingOrPlan(matching, 's');
                // Nothing holds plain text: the close matches instead (a typo), by pg_trgm's word
                // similarity of the text to the label, hostname and domain (the same index). Not
                // for identifiers (a domain, an e-mail address): those match as written. In the
                // same statement (one round trip), the exact matches found once (`e`): the second
                // branch runs only when they are none (an uncorrelated NOT EXISTS is evaluated
                // once, before it).
                rows =
                  parsed.kind === 'text'
                    ? await newest(
                        sql`select id from e
                          union all
                          ${matching(sql<SqlBool>`hp_fold(${text}) <% s.search_text`)}
                            and not exists (select 1 from e)`,
                        'services',
                        serviceTitle,
                        sql`e as materialized (${holding})`,
                      )
                    : await newest(holding, 'services', serviceTitle);
              } else rows = await services(hasText ? none : all);
              break;
            }
            case 'ip': {
              if (nowhere) break;
              let match: RawBuilder<SqlBool>;
              let withClause: RawBuilder<unknown> | null = null;
              if (cidr) match = sql<SqlBool>`ip.address <<= ${cidr}::inet`;
              else if (parsed.number !== undefined) match = sql<SqlBool>`ip.service_id = ${parsed.number}`;
              else if (hasText && /^[0-9.]+$/.test(text))
                match = sql<SqlBool>`host(ip.address) like ${`${escapeLike(text)}%`} escape '\\'`;
              else if (parsed.mac !== undefined)
                match = sql<SqlBool>`ip.service_id in (select s.id from services s
                  where ${inScope('s.account_id')} and ${hasMac('s', parsed.mac)})`;
              else if (textual('payment_id', 'order_id', 'mac')) {
                // The matching services' addresses by service id (an array, so the planner looks
                // each up in the service index rather than hashing every address of the account).
                withClause = sql`sv as materialized (select array(select s.id from services s
                  where ${inScope('s.account_id')} and ${holds('s')}) as ids)`;
                match = sql<SqlBool>`ip.service_id = any ((select ids from sv)::integer[])`;
              } else match = hasText ? none : all;
              if (match === none) break;
              const services =
                nodeIds !== null || ops.product.length > 0
                  ? sql<SqlBool>`ip.service_id in (select s.id from services s
                    where ${inScope('s.account_id')} and ${serviceFilters('s')})`
                  : all;
              const where = sql<SqlBool>`${inScope('ip.account_id')}
                and ${match}
                and ${ids('ip.location_id', locationIds)}
                and ${services}`;
              // One statement (each costs a round trip); only the page's addresses are joined to
              // their services for the title.
              rows = (
                withClause === null
                  ? // An account's addresses are ordered in its (account_id, address) index: the
                    // count (an uncorrelated subquery, run once) reads the index alone, and the page
                    // is its first `limit` entries in order, with no sort of every match (a /16
                    // holds thousands).
                    await sql<Row>`
                      select a.id, host(a.address) || ' — ' || s.label as title, a.service_id,
                        (select count(*) from ipv4_addresses ip where ${where}) as total
                      from (select ip.id, ip.address, ip.service_id from ipv4_addresses ip
                        where ${where} order by ip.address limit ${limit}) a
                      join services s on s.id = a.service_id
                      order by a.address`.execute(db)
                  : // Addresses found by their services come in no useful order: read once (`a`),
                    // counted and the page sorted from there.
                    await sql<Row>`
                      with ${withClause}, a as materialized (select ip.id, ip.address, ip.service_id
                        from ipv4_addresses ip where ${where})
                      select p.id, host(p.address) || ' — ' || s.label as title, p.service_id,
                        (select count(*) from a) as total
                      from (select * from a order by address limit ${limit}) p
                      join services s on s.id = p.service_id
                      order by p.address`.execute(db)
              ).rows;
              break;
            }
            case 'order': {
              const orders = (match: RawBuilder<SqlBool>) =>
                sql`select o.id from orders o
                  where ${inScope('o.account_id')}
                    and ${match}
                    and ${ops.status.length > 0 ? sql`o.status in (${sql.join(ops.status)})` : all}`;
              let matches: RawBuilder<unknown>;
              if (parsed.publicId && parsed.kind === 'order_id')
                matches = orders(sql<SqlBool>`o.public_id = ${parsed.publicId}`);
              else if (parsed.number !== undefined) matches = orders(sql<SqlBool>`o.id = ${parsed.number}`);
              else if (textual('payment_id', 'mac') && !cidr) matches = holdingOrPlan(orders, 'o');
              else if (hasText || cidr) break;
              else matches = orders(all);
              rows = await newest(
                matches,
                'orders',
                sql`r.public_id || ' — ' || p.name || ', ₹' || (r.amount_paise / 100)::text || ' (' || r.status || ')'`,
              );
              break;
            }
            case 'transaction': {
              let match: RawBuilder<SqlBool>;
              if (parsed.publicId && parsed.kind === 'payment_id')
                match = sql<SqlBool>`t.public_id = ${parsed.publicId}`;
              else if (parsed.number !== undefined) match = sql<SqlBool>`t.id = ${parsed.number}`;
              else if (textual('order_id', 'mac') && !cidr) match = holds('t');
              else match = hasText || cidr ? none : all;
              if (match === none) break;
              rows = await newest(
                sql`select t.id from wallet_transactions t where ${inScope('t.account_id')} and ${match}`,
                'wallet_transactions',
                sql`r.public_id || ' — ' || r.kind || ' ' || r.amount_paise::text`,
              );
              rows = rows.map((r) => ({
                ...r,
                title: r.title.replace(/(-?\d+)$/, (p) => `₹${formatPaise(BigInt(p))}`),
              }));
              break;
            }
            case 'deposit': {
              let match: RawBuilder<SqlBool>;
              if (parsed.publicId && parsed.kind === 'payment_id')
                match = sql<SqlBool>`d.public_id = ${parsed.publicId}`;
              else if (parsed.number !== undefined) match = sql<SqlBool>`d.id = ${parsed.number}`;
              else if (textual('order_id', 'mac') && !cidr) match = holds('d');
              else match = hasText || cidr ? none : all;
              if (match === none) break;
              rows = await newest(
                sql`select d.id from deposits d
                  where ${inScope('d.account_id')}
                    and ${match}
                    and ${ops.status.length > 0 ? sql`d.status in (${sql.join(ops.status)})` : all}`,
                'deposits',
                sql`r.public_id || ' — ₹' || (r.amount_paise / 100)::text || ' (' || r.status || ', ' || r.txn_ref || ')'`,
              );
              break;
            }
          }
          const total = rows.length === 0 ? 0 : Number(rows[0]?.total);
          if (total === 0) return null;
          return {
            type,
            label: LABELS[type],
            total,
            items: rows.map((r) => ({ id: `${type}:${r.id}`, title: r.title, url: url(pathOf(type, r)) })),
          };
        },
      );
      return (await Promise.all(answers)).filter((group) => group !== null);
    },
  };
}

/**
 * Whether `folded` (text already folded by `hp_fold`) holds `text` (textPatterns): the LIKE is what
 * the trigram index serves; the regular expression, only when the text has a space, is called as a
 * function so the planner never makes it an index condition (its character class gives the index
 * no trigrams to look up) and it only rechecks what the LIKE found.
 */
function holdsText(folded: RawBuilder<unknown>, text: string): RawBuilder<SqlBool> {
  const { like, separated } = textPatterns(text);
  const substring = sql<SqlBool>`${folded} like hp_fold(${like}) escape '\\'`;
  return separated === null
    ? substring
    : sql<SqlBool>`(${substring} and textregexeq(${folded}, hp_fold(${separated})))`;
}

/**
 * Whether a service's NICs include `mac` (lower-case colon form): virtual and bare-metal servers
 * keep theirs in `external.macs`, looked up in their index (migration 0018, on services that have any).
 */
function hasMac(alias: string, mac: string): RawBuilder<SqlBool> {
  const external = sql.ref(`${alias}.external`);
  return sql<SqlBool>`(${external} ? 'macs' and ${external} -> 'macs' ? ${mac})`;
}

/** Where an item is read on the session surface. */
function pathOf(type: SearchType, row: Row): string {
  switch (type) {
    case 'service':
      return `/api/v1/client/services/?id=${row.id}`;
    case 'ip':
      return `/api/v1/client/services/?id=${row.service_id}`;
    case 'order':
      return `/api/v1/client/orders/?id=${row.id}`;
    case 'transaction':
      return '/api/v1/client/wallet/';
    case 'deposit':
      return `/api/v1/client/wallet/deposit/?id=${row.id}`;
  }
}

export type Search = ReturnType<typeof createSearch>;
