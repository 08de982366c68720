// The service group: services by `#id`, by an address or prefix they hold, by a MAC of
// their NICs, or by text (label, hostname, domain, plan name; close matches for a typo), filtered
// by `status:`, `loc:`, `node:` and product type.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Searcher } from '../context.ts';
import { hasMac } from '../matches.ts';

const TITLE = sql`r.label || ' — ' || p.name || ' (' || r.status || ')'`;

export const serviceSearcher: Searcher = {
  label: 'Services',
  path: (row) => `/api/v1/client/services/?id=${row.id}`,
  async rows(c) {
    if (c.nowhere) return [];
    const { parsed, ops, cidr, text } = c;
    const matching = (match: RawBuilder<SqlBool>, alias = 's') =>
      sql`select ${sql.ref(`${alias}.id`)} from services ${sql.ref(alias)}
          where ${c.inScope(`${alias}.account_id`)}
            and ${match}
            and ${ops.status.length > 0 ? sql`${sql.ref(`${alias}.status`)} in (${sql.join(ops.status)})` : c.all}
            and ${c.serviceFilters(alias)}`;
    // A match that cannot hold (`none`) runs no statement at all: each costs a round trip.
    const services = async (match: RawBuilder<SqlBool>) =>
      match === c.none ? [] : c.newest(matching(match), 'services', TITLE);
    if (parsed.number !== undefined) return services(sql<SqlBool>`s.id = ${parsed.number}`);
    if (cidr && ops.status.length === 0 && c.locationIds === null && c.nodeIds === null && ops.product.length === 0)
      // Nothing to filter on the services themselves: the services a range holds are counted and
      // paged from the address index alone (its rows carry the service id and are the account's),
      // and only the page is read from services.
      return c.newest(
        sql`select distinct ip.service_id as id from ipv4_addresses ip
          where ${c.inScope('ip.account_id')} and ip.address <<= ${cidr}::inet`,
        'services',
        TITLE,
      );
    if (cidr)
      return services(sql<SqlBool>`s.id in (select ip.service_id from ipv4_addresses ip
        where ${c.inScope('ip.account_id')} and ip.address <<= ${cidr}::inet)`);
    if (parsed.mac !== undefined) return services(hasMac('s', parsed.mac));
    if (!c.textual('payment_id', 'order_id', 'mac')) return services(c.hasText ? c.none : c.all);
    const holding = c.holdingOrPlan(matching, 's');
    if (parsed.kind !== 'text') return c.newest(holding, 'services', TITLE);
    // Nothing holds plain text: the close matches instead (a typo), by pg_trgm's word similarity
    // of the text to the label, hostname and domain (the same index). Not for identifiers (a
    // domain, an e-mail address): those match as written. In the same statement (one round trip),
    // the exact matches found once (`e`): the second branch runs only when they are none (an
    // uncorrelated NOT EXISTS is evaluated once, before it).
    return c.newest(
      sql`select id from e
        union all
        ${matching(sql<SqlBool>`hp_fold(${text}) <% s.search_text`)}
          and not exists (select 1 from e)`,
      'services',
      TITLE,
      sql`e as materialized (${holding})`,
    );
  },
};
