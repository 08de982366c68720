// Ordering a bare-metal server: hostname, the OS to install (an OS template of the catalog that
// has an install image: `os_templates.image_url`, the ISO the BMC mounts), SSH keys; one IPv4
// address of the location reserved in the ordering transaction, as for a virtual server. The
// machine itself is claimed by the order service (the product's `exclusiveNode`: each redfish
// node is one machine, held by at most one live service).

import type { Kysely } from 'kysely';
import type { DB, OsTemplate } from '../../../db/tables.ts';
import { allocateAddress } from '../../catalog/ipv4.ts';
import { AppError } from '../../errors.ts';
import type { CheckedConfig, OrderProblems } from '../../orders/order-problems.ts';
import type { ProductOrder } from '../../product-kit/product.ts';

/** The image an order without `os` gets: ubuntu-24.04 while it can be installed, else the oldest one that can. */
export const DEFAULT_IMAGE_SLUG = 'ubuntu-24.04';

const installable = (trx: Kysely<DB>) =>
  trx.selectFrom('os_templates').selectAll().where('active', '=', true).where('image_url', 'is not', null);

async function defaultImage(trx: Kysely<DB>): Promise<OsTemplate | undefined> {
  return (
    (await installable(trx).where('slug', '=', DEFAULT_IMAGE_SLUG).executeTakeFirst()) ??
    installable(trx).orderBy('id').limit(1).executeTakeFirst()
  );
}

/** The OS template named, when the catalog has it active; and whether it can go on bare metal. */
async function named(trx: Kysely<DB>, slug: string, problems: OrderProblems): Promise<OsTemplate | null> {
  const os = await trx
    .selectFrom('os_templates')
    .selectAll()
    .where('slug', '=', slug)
    .where('active', '=', true)
    .executeTakeFirst();
  if (!os) {
    problems.add('os', 'is not an OS template of the catalog');
    return null;
  }
  return os;
}

async function resolveImage(trx: Kysely<DB>, config: CheckedConfig, problems: OrderProblems) {
  if (config.os === null) return (await defaultImage(trx)) ?? null;
  const os = await named(trx, config.os, problems);
  if (os && os.image_url === null) {
    problems.add('os', 'has no install image for bare-metal servers');
    return null;
  }
  return os;
}

export const baremetalOrder: ProductOrder<{ os: OsTemplate | null }> = {
  keys: ['server_name', 'hostname', 'os', 'region', 'ssh_keys', 'eula'],
  domain: 'refused',
  reservesIpv4: true,
  resolve: async (trx, config, problems) => ({ os: await resolveImage(trx, config, problems) }),
  async checkGiven(trx, config, problems) {
    // An unknown plan: only whether the template exists (the VPS check says the same).
    if (config.os !== null) await named(trx, config.os, problems);
  },
  available({ os }) {
    if (!os) throw AppError.unavailable('no_os', 'No OS image for bare-metal servers is available right now.');
  },
  serviceConfig: (config, label, { os }) => ({ hostname: config.hostname ?? label, os: os?.slug ?? null }),
  async reserve(trx, serviceId, location) {
    const address = await allocateAddress(trx, location.id, serviceId);
    if (address === null)
      throw AppError.unavailable('no_ipv4', `No IPv4 address is free in ${location.name} right now.`);
    return { ipv4: address.address };
  },
};
