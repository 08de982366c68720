// A virtual server's identity on its node: the VM reference kept in `services.external`, and
// the deterministic name by which a re-run finds what an earlier run created. The name carries
// the installation (`hp-<installation>-svc-<id>`), so another installation's VM of the same
// service id never matches; a VM made before that keeps its recorded `hp-svc-<id>`.

import type { Service } from '../../../db/tables.ts';
import type { VmRef } from '../../../upstreams/hypervisor.ts';
import { storedOrNull } from '../../product-kit/data.ts';
import { externalName } from '../../system/installation.ts';
import { vpsExternal } from './data.ts';

/** The VM of a service, or null when it has none (yet); with its MAC addresses when recorded (search reads them). */
export function vmRefOf(service: Pick<Service, 'external'>): VmRef | null {
  // Nothing recorded yet (or not a VM): the service has none.
  const external = storedOrNull(vpsExternal, service.external);
  if (!external) return null;
  const ref: VmRef = { node: external.node, vmid: external.vmid, name: external.name };
  if (external.macs) ref.macs = external.macs;
  return ref;
}

/**
 * The VM name of a service: how a re-run finds what an earlier run created. The recorded VM's
 * name when there is one (it never changes, even when the installation id is rotated), else
 * this installation's name for the service.
 */
export function vmName(installationId: string, service: Pick<Service, 'id' | 'external'>): string {
  return vmRefOf(service)?.name ?? externalName(installationId, 'svc', service.id);
}
