// Ordering a virtual server: hostname, OS template (the default one when none is named),
// SSH keys; one IPv4 address of the location reserved in the ordering transaction and given
// back when the service fails or is terminated.

import type { Kysely } from 'kysely';
import type { DB, OsTemplate } from '../../../db/tables.ts';
import { allocateAddress } from '../../catalog/ipv4.ts';
import { AppError } from '../../errors.ts';
import type { CheckedConfig, OrderProblems } from '../../orders/order-problems.ts';
import type { ProductOrder } from '../../product-kit/product.ts';

/** The template a VPS order without `os` gets: ubuntu-24.04 while it is active, else the oldest active one. */
export const DEFAULT_OS_SLUG = 'ubuntu-24.04';

const activeOs = (trx: Kysely<DB>, slug: string) =>
  trx.selectFrom('os_templates').selectAll().where('slug', '=', slug).where('active', '=', true).executeTakeFirst();

async function defaultOs(trx: Kysely<DB>): Promise<OsTemplate | undefined> {
  return (
    (await activeOs(trx, DEFAULT_OS_SLUG)) ??
    trx.selectFrom('os_templates').selectAll().where('active', '=', true).orderBy('id').limit(1).executeTakeFirst()
  );
}

/** Why a named template cannot be installed: retired by the staff, or not in the catalog at all. */
export async function osProblem(db: Kysely<DB>, slug: string): Promise<string> {
  const known = await db.selectFrom('os_templates').select('slug').where('slug', '=', slug).executeTakeFirst();
  return known ? 'is retired: choose another OS template' : 'is not an OS template of the catalog';
}

async function resolveOs(trx: Kysely<DB>, config: CheckedConfig, problems: OrderProblems) {
  const os = (config.os === null ? await defaultOs(trx) : await activeOs(trx, config.os)) ?? null;
  if (!os && config.os !== null) problems.add('os', await osProblem(trx, config.os));
  return os;
}

export const vpsOrder: ProductOrder<{ os: OsTemplate | null }> = {
  keys: ['server_name', 'hostname', 'os', 'region', 'ssh_keys', 'eula', 'user_data'],
  domain: 'refused',
  reservesIpv4: true,
  resolve: async (trx, config, problems) => ({ os: await resolveOs(trx, config, problems) }),
  async checkGiven(trx, config, problems) {
    if (config.os !== null) await resolveOs(trx, config, problems);
  },
  available({ os }) {
    if (!os) throw AppError.unavailable('no_os', 'No OS template is available right now.');
  },
  serviceConfig: (config, label, { os }) => ({ hostname: config.hostname ?? label, os: os?.slug ?? null }),
  async reserve(trx, serviceId, location) {
    const address = await allocateAddress(trx, location.id, serviceId);
    if (address === null)
      throw AppError.unavailable('no_ipv4', `No IPv4 address is free in ${location.name} right now.`);
    return { ipv4: address.address };
  },
};
