// Search (spec 4.13, CONTRACT §8): one parsed query (./query.ts) run against the caller's
// services, IPv4 addresses, orders, wallet transactions and deposits, in that group order, each
// group with its exact total and its first `limit` items. Every query is scoped to the account
// (or, for staff, the accounts `user:` names, else all), so its cost follows the account's rows;
// user text goes into LIKE patterns escaped and is folded (case, accents) on both sides with the
// database's `hp_fold`, which trigram indexes cover (migration 0011).

import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { formatPaise } from '../money.ts';
import { escapeLike, type ParsedQuery, SEARCH_TYPES, type SearchType } from './query.ts';

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

export function createSearch(options: { db: Kysely<DB>; publicUrl: string }) {
  const { db, publicUrl } = options;
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
      const like = `%${escapeLike(text)}%`;
      const hasText = text !== '';
      const cidr = parsed.cidr
        ? `${parsed.cidr.network}/${parsed.cidr.prefix}`
        : parsed.ipv4
          ? `${parsed.ipv4}/32`
          : parsed.ipv6
            ? `${parsed.ipv6}/128`
            : null;

      const inScope = (column: string) =>
        accounts === null ? sql<SqlBool>`true` : sql<SqlBool>`${sql.ref(column)} in (${sql.join(accounts)})`;
      const folded = (expr: Expression<unknown> | ReturnType<typeof sql>) =>
        sql<SqlBool>`hp_fold(${expr}) like hp_fold(${like}) escape '\\'`;

      const groups: SearchGroup[] = [];
      for (const type of SEARCH_TYPES) {
        if (!types.includes(type)) continue;
        let rows: Row[] = [];
        switch (type) {
          case 'service': {
            let match: ReturnType<typeof sql<SqlBool>> | null = null;
            if (parsed.number !== undefined) match = sql<SqlBool>`s.id = ${parsed.number}`;
            else if (cidr)
              match = sql<SqlBool>`exists (select 1 from ipv4_addresses ip where ip.service_id = s.id and ip.address <<= ${cidr}::inet)`;
            else if (hasText && parsed.kind !== 'payment_id' && parsed.kind !== 'order_id' && parsed.kind !== 'mac')
              match = sql<SqlBool>`(${folded(sql.ref('s.label'))} or ${folded(sql`s.config->>'hostname'`)}
                or ${folded(sql`s.config->>'domain'`)} or ${folded(sql.ref('p.name'))}
                or hp_fold(${text}) <% hp_fold(s.label))`;
            else if (hasText) match = sql<SqlBool>`false`;
            rows = (
              await sql<Row>`
                select s.id, s.label || ' — ' || p.name || ' (' || s.status || ')' as title, count(*) over () as total
                from services s
                join plans p on p.id = s.plan_id
                join locations l on l.id = s.location_id
                left join nodes n on n.id = s.node_id
                where ${inScope('s.account_id')}
                  and ${match ?? sql`true`}
                  and ${ops.status.length > 0 ? sql`s.status in (${sql.join(ops.status)})` : sql`true`}
                  and ${ops.loc.length > 0 ? sql`(lower(l.code) in (${sql.join(ops.loc)}) or hp_fold(l.name) in (${sql.join(ops.loc.map((v) => sql`hp_fold(${v})`))}))` : sql`true`}
                  and ${ops.node.length > 0 ? sql`lower(n.name) in (${sql.join(ops.node)})` : sql`true`}
                  and ${ops.product.length > 0 ? sql`s.type in (${sql.join(ops.product)})` : sql`true`}
                order by s.id desc
                limit ${limit}`.execute(db)
            ).rows;
            break;
          }
          case 'ip': {
            let match: ReturnType<typeof sql<SqlBool>> | null = null;
            if (cidr) match = sql<SqlBool>`ip.address <<= ${cidr}::inet`;
            else if (parsed.number !== undefined) match = sql<SqlBool>`s.id = ${parsed.number}`;
            else if (hasText && /^[0-9.]+$/.test(text))
              match = sql<SqlBool>`host(ip.address) like ${`${escapeLike(text)}%`} escape '\\'`;
            else if (hasText && parsed.kind !== 'payment_id' && parsed.kind !== 'order_id' && parsed.kind !== 'mac')
              match = folded(sql.ref('s.label'));
            else if (hasText) match = sql<SqlBool>`false`;
            rows = (
              await sql<Row>`
                select ip.id, host(ip.address) || ' — ' || s.label as title, s.id as service_id, count(*) over () as total
                from ipv4_addresses ip
                join services s on s.id = ip.service_id
                join locations l on l.id = ip.location_id
                left join nodes n on n.id = s.node_id
                where ${inScope('s.account_id')}
                  and ${match ?? sql`true`}
                  and ${ops.loc.length > 0 ? sql`(lower(l.code) in (${sql.join(ops.loc)}) or hp_fold(l.name) in (${sql.join(ops.loc.map((v) => sql`hp_fold(${v})`))}))` : sql`true`}
                  and ${ops.node.length > 0 ? sql`lower(n.name) in (${sql.join(ops.node)})` : sql`true`}
                  and ${ops.product.length > 0 ? sql`s.type in (${sql.join(ops.product)})` : sql`true`}
                order by ip.address
                limit ${limit}`.execute(db)
            ).rows;
            break;
          }
          case 'order': {
            let match: ReturnType<typeof sql<SqlBool>> | null = null;
            if (parsed.publicId && parsed.kind === 'order_id') match = sql<SqlBool>`o.public_id = ${parsed.publicId}`;
            else if (parsed.number !== undefined) match = sql<SqlBool>`o.id = ${parsed.number}`;
            else if (hasText && !cidr && parsed.kind !== 'payment_id' && parsed.kind !== 'mac')
              match = sql<SqlBool>`(${folded(sql.ref('o.public_id'))} or ${folded(sql.ref('p.name'))} or ${folded(sql.ref('o.domain'))})`;
            else if (hasText || cidr) match = sql<SqlBool>`false`;
            rows = (
              await sql<Row>`
                select o.id, o.public_id || ' — ' || p.name || ', ₹' || (o.amount_paise / 100)::text || ' (' || o.status || ')' as title,
                  count(*) over () as total
                from orders o join plans p on p.id = o.plan_id
                where ${inScope('o.account_id')}
                  and ${match ?? sql`true`}
                  and ${ops.status.length > 0 ? sql`o.status in (${sql.join(ops.status)})` : sql`true`}
                order by o.id desc
                limit ${limit}`.execute(db)
            ).rows;
            break;
          }
          case 'transaction': {
            let match: ReturnType<typeof sql<SqlBool>> | null = null;
            if (parsed.publicId && parsed.kind === 'payment_id') match = sql<SqlBool>`t.public_id = ${parsed.publicId}`;
            else if (parsed.number !== undefined) match = sql<SqlBool>`t.id = ${parsed.number}`;
            else if (hasText && !cidr && parsed.kind !== 'order_id' && parsed.kind !== 'mac')
              match = sql<SqlBool>`(${folded(sql.ref('t.note'))} or ${folded(sql.ref('t.public_id'))})`;
            else if (hasText || cidr) match = sql<SqlBool>`false`;
            rows = (
              await sql<Row>`
                select t.id, t.public_id || ' — ' || t.kind || ' ' || t.amount_paise::text as title, count(*) over () as total
                from wallet_transactions t
                where ${inScope('t.account_id')} and ${match ?? sql`true`}
                order by t.id desc
                limit ${limit}`.execute(db)
            ).rows;
            rows = rows.map((r) => ({ ...r, title: r.title.replace(/(-?\d+)$/, (p) => `₹${formatPaise(BigInt(p))}`) }));
            break;
          }
          case 'deposit': {
            let match: ReturnType<typeof sql<SqlBool>> | null = null;
            if (parsed.publicId && parsed.kind === 'payment_id') match = sql<SqlBool>`d.public_id = ${parsed.publicId}`;
            else if (parsed.number !== undefined) match = sql<SqlBool>`d.id = ${parsed.number}`;
            else if (hasText && !cidr && parsed.kind !== 'order_id' && parsed.kind !== 'mac')
              match = sql<SqlBool>`(${folded(sql.ref('d.txn_ref'))} or ${folded(sql.ref('d.public_id'))})`;
            else if (hasText || cidr) match = sql<SqlBool>`false`;
            rows = (
              await sql<Row>`
                select d.id, d.public_id || ' — ₹' || (d.amount_paise / 100)::text || ' (' || d.status || ', ' || d.txn_ref || ')' as title,
                  count(*) over () as total
                from deposits d
                where ${inScope('d.account_id')}
                  and ${match ?? sql`true`}
                  and ${ops.status.length > 0 ? sql`d.status in (${sql.join(ops.status)})` : sql`true`}
                order by d.id desc
                limit ${limit}`.execute(db)
            ).rows;
            break;
          }
        }
        const total = rows.length === 0 ? 0 : Number(rows[0]?.total);
        if (total === 0) continue;
        groups.push({
          type,
          label: LABELS[type],
          total,
          items: rows.map((r) => ({ id: `${type}:${r.id}`, title: r.title, url: url(pathOf(type, r)) })),
        });
      }
      return groups;
    },
  };
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
