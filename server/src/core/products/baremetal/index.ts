// The bare-metal server: one physical machine behind its BMC (a `redfish` node is one machine),
// claimed whole by one order, installed from an OS template's install image over virtual media,
// with one IPv4 address of its location; terminating wipes it back into stock. ../index.ts says
// what each part is for.

import { releaseAddress } from '../../catalog/ipv4.ts';
import { AppError } from '../../errors.ts';
import { readStored } from '../../product-kit/data.ts';
import type { Product } from '../../product-kit/product.ts';
import { baremetalActions, baremetalRefused } from './actions.ts';
import { baremetalConfig, baremetalSpecs } from './data.ts';
import { createBareMetalLive } from './live.ts';
import { baremetalOrder } from './order.ts';
import { type BareMetalJob, baremetalJobs } from './provision.ts';

const NO_SNAPSHOTS = 'Bare-metal servers have no snapshots.';

export const baremetalProduct: Product<Awaited<ReturnType<typeof baremetalOrder.resolve>>, BareMetalJob> = {
  type: 'baremetal',
  nodeKind: 'redfish',
  exclusiveNode: true,
  // What the plan's machines have: processors (as the BMC counts them), memory, disk, traffic.
  // The order claims any free machine of the region.
  specs: baremetalSpecs,
  order: baremetalOrder,
  // Gives back the IPv4 address `order.reserve` took; the machine is free once the service is not live.
  release: async (trx, serviceId) => {
    await releaseAddress(trx, serviceId);
  },
  view(service) {
    const config = readStored(baremetalConfig, service.config, `the config of service ${service.id}`);
    return { hostname: config.hostname ?? null, os: config.os ?? null, domain: config.domain ?? null };
  },
  login: (username, ipv4) => `ssh ${username}@${ipv4}`,
  jobs: baremetalJobs,
  live: createBareMetalLive,
  actions: baremetalActions,
  wrongType: () => new AppError('not_supported', { message: 'This service is not a bare-metal server.' }),
  refused: baremetalRefused,
  unsupported: {
    reinstall: 'A bare-metal server cannot be reinstalled here; terminate it and order a new one.',
    vnc: 'Bare-metal servers have no VNC console here.',
    console: 'Bare-metal servers have no serial console here.',
    graph: 'Bare-metal servers have no metrics history: their BMC does not see the operating system.',
    // The VPS's snapshot actions (vps/snapshots.ts).
    snapshots: NO_SNAPSHOTS,
    snapshot_create: NO_SNAPSHOTS,
    snapshot_restore: NO_SNAPSHOTS,
    snapshot_delete: NO_SNAPSHOTS,
  },
};
