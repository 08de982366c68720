// A virtual server's identity on its node: the VM reference kept in `services.external`, and
// the deterministic name by which a re-run finds what an earlier run created. The name carries
// the installation (`hp-<installation>-svc-<id>`), so another installation's VM of the same
// service id never matches; a VM made before that keeps its recorded `hp-svc-<id>`.

import type { Service } from '../../../db/tables.ts';
import type { VmRef } from '../../../upstreams/hypervisor.ts';
import { externalName } from '../../system/installation.ts';

/** The VM of a service, or null when it has none (yet); with its MAC addresses when recorded (search reads them). */
export function vmRefOf(service: Pick<Service, 'external'>): VmRef | null {
  const external = service.external as { node?: string; vmid?: number; name?: string; macs?: unknown } | null;
  if (!external || typeof external.vmid !== 'number' || !external.node || !external.name) return null;
  const ref: VmRef = { node: external.node, vmid: external.vmid, name: external.name };
  if (Array.isArray(external.macs)) ref.macs = external.macs.filter((m): m is string => typeof m === 'string');
  return ref;
}

/**
 * The VM name of a service: how a re-run finds what an earlier run created. The recorded VM's
 * name when there is one (it never changes, even when the installation id is rotated), else
 * this installation's name for the service.
 */
export function vmName(installationId: string, service: Pick<Service, 'id' | 'external'>): string {
  const recorded = (service.external ?? {}) as { name?: unknown };
  return typeof recorded.name === 'string' && recorded.name !== ''
    ? recorded.name
    : externalName(installationId, 'svc', service.id);
}
