// The wallet transaction group: ledger entries by public id (`pay_…`), `#id`, or text
// (its public id or note). No `status:` (entries have none).

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { formatPaise } from '../../money.ts';
import type { Searcher } from '../context.ts';

export const transactionSearcher: Searcher = {
  label: 'Wallet transactions',
  path: () => '/api/v1/client/wallet/',
  async rows(c) {
    const { parsed } = c;
    let match: RawBuilder<SqlBool>;
    if (parsed.publicId && parsed.kind === 'payment_id') match = sql<SqlBool>`t.public_id = ${parsed.publicId}`;
    else if (parsed.number !== undefined) match = sql<SqlBool>`t.id = ${parsed.number}`;
    else if (c.textual('order_id', 'mac') && !c.cidr) match = c.holds('t');
    else match = c.hasText || c.cidr ? c.none : c.all;
    if (match === c.none) return [];
    const rows = await c.newest(
      sql`select t.id from wallet_transactions t where ${c.inScope('t.account_id')} and ${match}`,
      'wallet_transactions',
      sql`r.public_id || ' — ' || r.kind || ' ' || r.amount_paise::text`,
    );
    return rows.map((r) => ({
      ...r,
      title: r.title.replace(/(-?\d+)$/, (p) => `₹${formatPaise(BigInt(p))}`),
    }));
  },
};
