// A product the catalog sells and orders accept, but whose provisioning driver is not built
// yet (game servers, web hosting): its order rules and plan specs are real; its jobs fail the
// way a job on a node without a driver fails (409 hypervisor_not_configured, then the service
// is failed and refunded); nothing runs upstream, so suspending or terminating it only changes
// its record, and it has no live state.

import type { NodeKind, PlanType } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import type { Product, ProductOrder, SpecRule } from './index.ts';
import type { ProductJobs } from './jobs.ts';

const none = async () => {};

const noDriverJobs: ProductJobs<null> = {
  open(env) {
    if (['provision', 'reinstall', 'power'].includes(env.job.type)) throw new AppError('hypervisor_not_configured');
    return null;
  },
  provision: [],
  reinstall: { steps: [], done: none },
  power: {},
  suspend: none,
  unsuspend: none,
  terminate: none,
};

export function catalogOnlyProduct(options: {
  type: PlanType;
  nodeKind: NodeKind;
  specRules: Record<string, SpecRule>;
  order: Pick<ProductOrder, 'keys' | 'domain' | 'eulaRequired'>;
  wrongType: () => AppError;
}): Product<null, null> {
  return {
    type: options.type,
    nodeKind: options.nodeKind,
    specRules: options.specRules,
    order: {
      ...options.order,
      reservesIpv4: false,
      resolve: async () => null,
      checkGiven: none,
      available: () => {},
      serviceConfig: () => ({ hostname: null, os: null }),
      reserve: async () => ({ ipv4: null }),
    },
    release: none,
    view(service) {
      const config = service.config as { hostname?: string | null; os?: string | null; domain?: string | null };
      return { hostname: config.hostname ?? null, os: config.os ?? null, domain: config.domain ?? null };
    },
    login: () => null,
    jobs: noDriverJobs,
    live: null,
    actions: [],
    wrongType: options.wrongType,
    refused: (service) => new AppError('no_vm', { message: `The service is ${service.status}.` }),
  };
}
