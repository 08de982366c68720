// The virtual server (VPS): a VM on a hypervisor node, with one IPv4 address of its location,
// made from an OS template with cloud-init. The example product: ../index.ts says what each
// part is for.

import { releaseAddress } from '../../catalog/ipv4.ts';
import { AppError } from '../../errors.ts';
import { readStored } from '../../product-kit/data.ts';
import type { Product } from '../../product-kit/product.ts';
import { vpsActions, vpsRefused } from './actions.ts';
import { autoSnapshotJob } from './backups.ts';
import { vpsConfig, vpsSpecs } from './data.ts';
import { createVpsLive } from './live.ts';
import { vpsOrder } from './order.ts';
import { driver, type VpsJob, vmOrThrow, vpsJobs } from './provision.ts';
import { resizeJob } from './resize.ts';
import { snapshotJobs } from './snapshots.ts';

export const vpsProduct: Product<Awaited<ReturnType<typeof vpsOrder.resolve>>, VpsJob> = {
  type: 'vps',
  nodeKind: 'proxmox',
  specs: vpsSpecs,
  order: vpsOrder,
  // Gives back the IPv4 address `order.reserve` took.
  release: async (trx, serviceId) => {
    await releaseAddress(trx, serviceId);
  },
  view(service) {
    const config = readStored(vpsConfig, service.config, `the config of service ${service.id}`);
    return { hostname: config.hostname ?? null, os: config.os ?? null, domain: config.domain ?? null };
  },
  login: (username, ipv4) => `ssh ${username}@${ipv4}`,
  jobs: {
    ...vpsJobs,
    snapshot: { ...snapshotJobs(driver, vmOrThrow), auto: autoSnapshotJob(driver, vmOrThrow) },
    resize: resizeJob,
  },
  live: createVpsLive,
  actions: vpsActions,
  wrongType: () => new AppError('not_supported', { message: 'This service is not a virtual server.' }),
  refused: vpsRefused,
  sso: 'console',
};
