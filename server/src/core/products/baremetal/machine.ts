// A bare-metal service's machine: which one it holds (kept in `services.external` once
// provisioning has claimed it) and when its install was started, which the install deadline is
// counted from across attempts, crashes and restarts of the worker.

import type { Service } from '../../../db/tables.ts';
import { storedOrNull } from '../../product-kit/data.ts';
import { baremetalExternal } from './data.ts';

export interface MachineRef {
  /** The redfish node (one machine) the service runs on. */
  node: string;
  /** The machine's serial number, as its BMC reports it. */
  serial: string;
  /** The ComputerSystem's Id (informational). */
  system: string;
  /** When the install was (last) started, ISO 8601; null until then. */
  install_started_at: string | null;
  /** The MAC addresses of its network interfaces, lower-case colon form (search finds the server by them). */
  macs: string[];
}

/** The machine of a service, or null while it has none. */
export function machineRefOf(service: Pick<Service, 'external'>): MachineRef | null {
  // Nothing recorded yet (or not a machine): the service has none.
  const external = storedOrNull(baremetalExternal, service.external);
  if (!external) return null;
  return {
    node: external.node,
    serial: external.serial,
    system: external.system ?? '',
    install_started_at: external.install_started_at ?? null,
    macs: external.macs ?? [],
  };
}
