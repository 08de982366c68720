// The order group: orders by public id (`order_…`), `#id`, or text (public id,
// domain, or the name of the plan), filtered by `status:`.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Searcher } from '../context.ts';

export const orderSearcher: Searcher = {
  label: 'Orders',
  path: (row) => `/api/v1/client/orders/?id=${row.id}`,
  async rows(c) {
    const { parsed, ops } = c;
    const orders = (match: RawBuilder<SqlBool>) =>
      sql`select o.id from orders o
        where ${c.inScope('o.account_id')}
          and ${match}
          and ${ops.status.length > 0 ? sql`o.status in (${sql.join(ops.status)})` : c.all}`;
    let matches: RawBuilder<unknown>;
    if (parsed.publicId && parsed.kind === 'order_id') matches = orders(sql<SqlBool>`o.public_id = ${parsed.publicId}`);
    else if (parsed.number !== undefined) matches = orders(sql<SqlBool>`o.id = ${parsed.number}`);
    else if (c.textual('payment_id', 'mac') && !c.cidr) matches = c.holdingOrPlan(orders, 'o');
    else if (c.hasText || c.cidr) return [];
    else matches = orders(c.all);
    return c.newest(
      matches,
      'orders',
      sql`r.public_id || ' — ' || p.name || ', ₹' || (r.amount_paise / 100)::text || ' (' || r.status || ')'`,
    );
  },
};
