// A bare-metal service's machine: which one it holds (kept in `services.external` once
// provisioning has claimed it) and when its install was started, which the install deadline is
// counted from across attempts, crashes and restarts of the worker.

import type { Service } from '../../../db/tables.ts';

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
  const external = service.external as Partial<MachineRef> | null;
  if (!external || typeof external.node !== 'string' || typeof external.serial !== 'string') return null;
  return {
    node: external.node,
    serial: external.serial,
    system: typeof external.system === 'string' ? external.system : '',
    install_started_at: typeof external.install_started_at === 'string' ? external.install_started_at : null,
    macs: Array.isArray(external.macs) ? external.macs.filter((m): m is string => typeof m === 'string') : [],
  };
}
