// Builds the driver for a node from its row: endpoint, sealed credentials and settings. Drivers
// keep connections open, so one is kept per node and replaced when the node's row changes.

import type { NodeRow } from '../../db/tables.ts';
import type { Hypervisor } from '../../upstreams/hypervisor.ts';
import { createProxmoxHypervisor } from '../../upstreams/proxmox/hypervisor.ts';
import { AppError } from '../errors.ts';
import type { NodeService } from '../nodes/node.service.ts';

export interface DriverTiming {
  requestTimeoutMs?: number;
  taskTimeoutMs?: number;
  pollIntervalMs?: number;
}

export interface Backends {
  /** The hypervisor driver of a Proxmox node; 409 hypervisor_not_configured for anything else. */
  hypervisor(node: NodeRow | undefined | null): Hypervisor;
  close(): void;
}

export function createBackends(nodes: NodeService, timing: DriverTiming = {}): Backends {
  const cache = new Map<number, { fingerprint: string; driver: Hypervisor & { close(): void } }>();
  return {
    hypervisor(node) {
      if (node?.kind !== 'proxmox' || !node.active) throw new AppError('hypervisor_not_configured');
      const fingerprint = `${node.endpoint}|${node.credentials_sealed}|${JSON.stringify(node.settings)}`;
      const cached = cache.get(node.id);
      if (cached?.fingerprint === fingerprint) return cached.driver;
      cached?.driver.close();
      let credentials: Record<string, string>;
      try {
        credentials = nodes.credentials(node);
      } catch {
        throw new AppError('hypervisor_not_configured', {
          message: `The credentials of node ${node.name} cannot be read.`,
        });
      }
      const settings = node.settings as { node?: string; storage?: string; tls_insecure?: boolean; ca?: string };
      const driver = createProxmoxHypervisor({
        endpoint: node.endpoint,
        node: settings.node ?? 'pve',
        tokenId: credentials.token_id ?? '',
        tokenSecret: credentials.token_secret ?? '',
        ...(settings.storage ? { storage: settings.storage } : {}),
        tls: { insecure: settings.tls_insecure === true, ...(settings.ca ? { ca: settings.ca } : {}) },
        ...timing,
      });
      cache.set(node.id, { fingerprint, driver });
      return driver;
    },
    close() {
      for (const { driver } of cache.values()) driver.close();
      cache.clear();
    },
  };
}
