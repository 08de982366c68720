// The IP address group: IPv4 addresses by address or prefix, by the `#id` of their
// service, by a leading part of the address, or through their services (a MAC, text), filtered
// by `loc:`, `node:` and product type. Ordered by address, not newest first.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Row, SearchContext, Searcher } from '../context.ts';
import { hasMac } from '../matches.ts';
import { escapeLike } from '../patterns.ts';

/** What the addresses must match, and the common table expression the match reads (if any). */
function matchOf(c: SearchContext): { match: RawBuilder<SqlBool>; withClause: RawBuilder<unknown> | null } {
  const { parsed, cidr, text } = c;
  if (cidr) return { match: sql<SqlBool>`ip.address <<= ${cidr}::inet`, withClause: null };
  if (parsed.number !== undefined) return { match: sql<SqlBool>`ip.service_id = ${parsed.number}`, withClause: null };
  if (c.hasText && /^[0-9.]+$/.test(text))
    return { match: sql<SqlBool>`host(ip.address) like ${`${escapeLike(text)}%`} escape '\\'`, withClause: null };
  if (parsed.mac !== undefined)
    return {
      match: sql<SqlBool>`ip.service_id in (select s.id from services s
        where ${c.inScope('s.account_id')} and ${hasMac('s', parsed.mac)})`,
      withClause: null,
    };
  if (c.textual('payment_id', 'order_id', 'mac'))
    // The matching services' addresses by service id (an array, so the planner looks each up in
    // the service index rather than hashing every address of the account).
    return {
      withClause: sql`sv as materialized (select array(select s.id from services s
        where ${c.inScope('s.account_id')} and ${c.holds('s')}) as ids)`,
      match: sql<SqlBool>`ip.service_id = any ((select ids from sv)::integer[])`,
    };
  return { match: c.hasText ? c.none : c.all, withClause: null };
}

export const ipSearcher: Searcher = {
  label: 'IP addresses',
  path: (row) => `/api/v1/client/services/?id=${row.service_id}`,
  async rows(c) {
    if (c.nowhere) return [];
    const { match, withClause } = matchOf(c);
    if (match === c.none) return [];
    const services =
      c.nodeIds !== null || c.ops.product.length > 0
        ? sql<SqlBool>`ip.service_id in (select s.id from services s
          where ${c.inScope('s.account_id')} and ${c.serviceFilters('s')})`
        : c.all;
    const where = sql<SqlBool>`${c.inScope('ip.account_id')}
      and ${match}
      and ${c.ids('ip.location_id', c.locationIds)}
      and ${services}`;
    // One statement (each costs a round trip); only the page's addresses are joined to their
    // services for the title.
    if (withClause === null)
      // An account's addresses are ordered in its (account_id, address) index: the count (an
      // uncorrelated subquery, run once) reads the index alone, and the page is its first `limit`
      // entries in order, with no sort of every match (a /16 holds thousands).
      return (
        await sql<Row>`
          select a.id, host(a.address) || ' — ' || s.label as title, a.service_id,
            (select count(*) from ipv4_addresses ip where ${where}) as total
          from (select ip.id, ip.address, ip.service_id from ipv4_addresses ip
            where ${where} order by ip.address limit ${c.limit}) a
          join services s on s.id = a.service_id
          order by a.address`.execute(c.db)
      ).rows;
    // Addresses found by their services come in no useful order: read once (`a`), counted and the
    // page sorted from there.
    return (
      await sql<Row>`
        with ${withClause}, a as materialized (select ip.id, ip.address, ip.service_id
          from ipv4_addresses ip where ${where})
        select p.id, host(p.address) || ' — ' || s.label as title, p.service_id,
          (select count(*) from a) as total
        from (select * from a order by address limit ${c.limit}) p
        join services s on s.id = p.service_id
        order by p.address`.execute(c.db)
    ).rows;
  },
};
