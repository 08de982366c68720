// The seam between the platform and physical servers (issue 16): every bare-metal operation goes
// through BareMetal. A bare-metal node is ONE machine, reached through its BMC's DMTF Redfish API
// (iDRAC, iLO, Supermicro, OpenBMC); the Redfish driver in ./redfish/ implements it.
//
// Contract shared by every method:
// - It resolves when the BMC has finished (task monitors awaited), or throws UpstreamError
//   (./hypervisor.ts) and nothing else, never with a credential in its message. Redfish errors
//   (`error.@Message.ExtendedInfo[].MessageId`, e.g. `Base.1.8.ResourceInUse`,
//   `Base.1.8.PropertyValueNotInList`) map to: 401 → auth (a session that expired is renewed
//   once, transparently); 403 → forbidden; 404 → not_found; 409 / ResourceInUse → conflict;
//   400 → rejected with `detail` (the message text) and `fields` where a property is named;
//   5xx, 503 with Retry-After, network → unreachable / timeout (retryable).
// - Resources are found by following `@odata.id` links from the service root (`/redfish/v1`):
//   the driver never assumes member ids such as `System.Embedded.1`.
// - Methods that change state are safe to call again after a lost answer (inserting the same
//   image again, a reset to the state the machine is in, ejecting nothing are success).

import type { NodeDriver } from './driver.ts';
import type { PowerState } from './hypervisor.ts';

export interface MachineInfo {
  /** The system's `Id` as the BMC reports it (informational). */
  id: string;
  manufacturer: string;
  model: string;
  serialNumber: string;
  power: PowerState;
  /** `Status.Health`: OK, Warning, Critical. */
  health: string;
  cpus: number;
  memoryGiB: number;
  /** MAC addresses of its network interfaces, lower-case colon form. */
  macs: string[];
}

export interface InstallSpec {
  /** The OS image the BMC mounts as virtual media (an http(s) URL it can reach). */
  imageUrl: string;
  hostname: string;
  /** OpenSSH public keys put into the install (the image's answer file or cloud-init). */
  sshKeys: string[];
  /** The root password, generated and stored by the platform before the BMC sees it. */
  password: string;
  /** IPv4 configuration of the install. */
  ipv4: { address: string; prefix: number; gateway: string } | null;
}

export type BareMetalPowerAction =
  | 'GracefulShutdown'
  | 'GracefulRestart'
  | 'ForceRestart'
  | 'PowerCycle'
  | 'On'
  | 'ForceOff';

export interface BareMetal extends NodeDriver {
  /** The machine behind the BMC. */
  machine(): Promise<MachineInfo>;
  /**
   * Start an install: insert `spec.imageUrl` as virtual media (ejecting what was there), pass the
   * install parameters the way the image takes them, set a one-time boot override to the virtual
   * CD, and power-cycle (power on when off). Returns once the machine is booting the installer.
   */
  startInstall(spec: InstallSpec): Promise<void>;
  /**
   * Where the install is: `installing` until the machine reports it done (its OEM/BIOS attribute,
   * or the image's completion marker the emulator models), then `done`; `failed` when it reports
   * failure. Read-only.
   */
  installState(): Promise<'idle' | 'installing' | 'done' | 'failed'>;
  /**
   * The install reported done: eject the virtual media and remove the install parameters from the
   * BMC (they hold the root password's hash and the keys), and make sure the machine is on, so it
   * runs the installed system. Safe to repeat.
   */
  finishInstall(): Promise<void>;
  /** `ComputerSystem.Reset` with this ResetType; waits for the power state it leads to. */
  reset(action: BareMetalPowerAction): Promise<void>;
  /**
   * `GracefulShutdown` (ACPI), then `ForceOff` when the machine is still on after `graceMs` (an OS
   * that ignores ACPI). Resolves once it is off; nothing is sent to a machine that is off.
   */
  shutdown(graceMs: number): Promise<void>;
  /** Power off at once, eject virtual media, wipe the disks (a secure erase task), back to stock. */
  wipe(): Promise<void>;
  /** Live power state (lists); `unknown` is never returned: a BMC that does not answer throws. */
  power(): Promise<PowerState>;
}
