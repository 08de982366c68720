// The deposit group: deposits by public id (`pay_…`), `#id`, or text (public id or
// transfer reference), filtered by `status:`.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Searcher } from '../context.ts';

export const depositSearcher: Searcher = {
  label: 'Deposits',
  path: (row) => `/api/v1/client/wallet/deposit/?id=${row.id}`,
  async rows(c) {
    const { parsed, ops } = c;
    let match: RawBuilder<SqlBool>;
    if (parsed.publicId && parsed.kind === 'payment_id') match = sql<SqlBool>`d.public_id = ${parsed.publicId}`;
    else if (parsed.number !== undefined) match = sql<SqlBool>`d.id = ${parsed.number}`;
    else if (c.textual('order_id', 'mac') && !c.cidr) match = c.holds('d');
    else match = c.hasText || c.cidr ? c.none : c.all;
    if (match === c.none) return [];
    return c.newest(
      sql`select d.id from deposits d
        where ${c.inScope('d.account_id')}
          and ${match}
          and ${ops.status.length > 0 ? sql`d.status in (${sql.join(ops.status)})` : c.all}`,
      'deposits',
      sql`r.public_id || ' — ₹' || (r.amount_paise / 100)::text || ' (' || r.status || ', ' || r.txn_ref || ')'`,
    );
  },
};
