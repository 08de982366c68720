// Ordering web hosting: a domain is required (order-input.ts checks its form and refuses
// reserved TLDs), and a domain is hosted here once: no other live web service may hold it (422
// domain_taken). The check runs when the order is resolved (with every other problem) and again,
// under a lock on the domain, in the ordering transaction, so two concurrent orders cannot both
// take it. A domain the WHM server holds under an account the platform did not make is found by
// provisioning (./provision.ts), which fails the order with the same code and refunds it: the
// node is chosen last in the ordering transaction, and a panel is not asked while it holds locks.

import { type Kysely, sql } from 'kysely';
import type { DB } from '../../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { ProductOrder } from '../../product-kit/product.ts';

const HOSTED = 'is already hosted here';

/** Whether a live web service (other than `except`) holds `domain`. */
async function hosted(db: Kysely<DB>, domain: string, except: number | null): Promise<boolean> {
  let query = db
    .selectFrom('services')
    .select('id')
    .where('type', '=', 'web')
    .where('status', 'in', ['pending', 'provisioning', 'active', 'suspended'])
    .where(sql<string>`config->>'domain'`, '=', domain);
  if (except !== null) query = query.where('id', '!=', except);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}

export const webOrder: ProductOrder<null> = {
  keys: ['server_name', 'region', 'eula'],
  domain: 'required',
  reservesIpv4: false,
  async resolve(trx, config, problems) {
    if (config.domain !== null && (await hosted(trx, config.domain, null)))
      problems.add('domain', HOSTED, 'domain_taken');
    return null;
  },
  async checkGiven(trx, config, problems) {
    if (config.domain !== null && (await hosted(trx, config.domain, null)))
      problems.add('domain', HOSTED, 'domain_taken');
  },
  available: () => {},
  serviceConfig: () => ({ hostname: null, os: null }),
  async reserve(trx, serviceId) {
    const row = await trx
      .selectFrom('services')
      .select(sql<string>`config->>'domain'`.as('domain'))
      .where('id', '=', serviceId)
      .executeTakeFirstOrThrow();
    await sql`select pg_advisory_xact_lock(hashtextextended(${`web-domain:${row.domain}`}, 0))`.execute(trx);
    if (await hosted(trx, row.domain, serviceId)) {
      throw new AppError('domain_taken', { message: `domain ${HOSTED}`, fields: { domain: HOSTED } });
    }
    return { ipv4: null };
  },
};
