// What the emulated machines hold: per machine (one BMC each) its hardware, member ids, power,
// boot override, virtual media slots, drives with what was installed on them, the install
// parameters the platform PATCHed (the stand-in for a seed ISO, see ./install.ts) and the
// install's progress. Persisted to a JSON file when asked (after every change), so a demo keeps
// its installed machines across restarts. Sessions, tasks and timers live only in memory.

import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export type PowerState = 'On' | 'Off' | 'PoweringOn' | 'PoweringOff';
export type InstallState = 'idle' | 'installing' | 'done' | 'failed';
export type BootEnabled = 'Disabled' | 'Once' | 'Continuous';

export const BOOT_ENABLED: readonly BootEnabled[] = ['Disabled', 'Once', 'Continuous'];
export const BOOT_TARGETS = ['None', 'Pxe', 'Floppy', 'Cd', 'Usb', 'Hdd', 'BiosSetup', 'UefiShell', 'UsbCd'] as const;
export type BootTarget = (typeof BOOT_TARGETS)[number];
export const RESET_TYPES = [
  'On',
  'ForceOff',
  'GracefulShutdown',
  'GracefulRestart',
  'ForceRestart',
  'PowerCycle',
  'Nmi',
] as const;
export type ResetType = (typeof RESET_TYPES)[number];

/** How member ids look: Dell iDRAC's, or random ones (so a client must follow `@odata.id`). */
export type IdStyle = 'dell' | 'random';

/** The install parameters as PATCHed into `Oem.Hostplane.Install` (the emulator's seed ISO). */
export interface InstallParams {
  Hostname: string;
  SshKeys: string[];
  /** A crypt(3) hash (`$6$…`); never a clear password. */
  PasswordHash: string | null;
  IPv4: { Address: string; PrefixLength: number; Gateway: string } | null;
}

/** What an install wrote on the boot drive. */
export interface InstalledOs {
  image: string;
  hostname: string;
  sshKeys: string[];
  passwordHash: string | null;
  ipv4: InstallParams['IPv4'];
  /** ISO 8601. */
  installedAt: string;
}

export interface MediaSlot {
  id: string;
  name: string;
  mediaTypes: string[];
  image: string | null;
  inserted: boolean;
  writeProtected: boolean;
}

export interface DriveState {
  id: string;
  name: string;
  capacityBytes: number;
  /** The OS written on it, or null (erased, stock). */
  os: InstalledOs | null;
  /** Times it was securely erased (tests read it). */
  erasures: number;
}

export interface Nic {
  id: string;
  mac: string;
}

export interface Machine {
  index: number;
  serial: string;
  uuid: string;
  manufacturer: string;
  model: string;
  cpus: number;
  memoryGiB: number;
  systemId: string;
  managerId: string;
  storageId: string;
  firmware: string;
  power: PowerState;
  boot: { enabled: BootEnabled; target: BootTarget };
  assetTag: string;
  /** Oem.Hostplane.Install: what the next install reads. */
  installParams: InstallParams | null;
  installState: InstallState;
  /** Why the last install failed, or null. */
  installMessage: string | null;
  /** The image being installed, while installing. */
  installImage: string | null;
  /** When the running install finishes (ms since the epoch), or null (none running, or one that never will). */
  installDueAt: number | null;
  media: MediaSlot[];
  drives: DriveState[];
  nics: Nic[];
  /** Boots since the machine was created (or last restocked), and what the last one booted. */
  boots: number;
  lastBoot: string | null;
  /** Bumped on every change of the system resource: its ETag. */
  revision: number;
  /** The state-changing requests it received, oldest first (at most 200): what tests look at. */
  actions: string[];
}

const MAX_ACTIONS = 200;

export function logAction(machine: Machine, text: string): void {
  machine.actions.push(text);
  if (machine.actions.length > MAX_ACTIONS) machine.actions.splice(0, machine.actions.length - MAX_ACTIONS);
}

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomBytes(1)[0]! % (i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A locally administered unicast MAC, lower-case colon form. */
function mac(index: number, port: number): string {
  const bytes = [0x02, (0x48 + index) & 0xff, port & 0xff, ...randomBytes(3)];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** A machine fresh from the factory: off, nothing installed, nothing inserted. */
export function newMachine(index: number, style: IdStyle): Machine {
  const dell = style === 'dell';
  const storageId = dell ? 'RAID.Integrated.1-1' : `stor-${hex(3)}`;
  const media: MediaSlot[] = dell
    ? [
        { id: 'RemovableDisk', name: 'Virtual Removable Disk', mediaTypes: ['USBStick'] },
        { id: 'CD', name: 'Virtual CD', mediaTypes: ['CD', 'DVD'] },
      ].map((m) => ({ ...m, image: null, inserted: false, writeProtected: true }))
    : shuffle([
        { id: `vm-${hex(2)}`, name: 'Virtual USB', mediaTypes: ['USBStick'] },
        { id: `vm-${hex(2)}`, name: 'Virtual Floppy', mediaTypes: ['Floppy'] },
        { id: `vm-${hex(2)}`, name: 'Virtual DVD', mediaTypes: ['DVD', 'CD'] },
      ]).map((m) => ({ ...m, image: null, inserted: false, writeProtected: true }));
  const serial = `HPEMU${String(index + 1).padStart(3, '0')}${hex(2).toUpperCase()}`;
  return {
    index,
    serial,
    uuid: `4c4c4544-${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}`,
    manufacturer: 'Hostplane Emulated Hardware',
    model: 'HP-BM1 Rack Server',
    cpus: 2,
    memoryGiB: 64,
    systemId: dell ? 'System.Embedded.1' : `sys-${hex(4)}`,
    managerId: dell ? 'iDRAC.Embedded.1' : `bmc-${hex(4)}`,
    storageId,
    firmware: '7.10.30.00',
    power: 'Off',
    boot: { enabled: 'Disabled', target: 'None' },
    assetTag: '',
    installParams: null,
    installState: 'idle',
    installMessage: null,
    installImage: null,
    installDueAt: null,
    media,
    drives: [0, 1].map((bay) => ({
      id: dell ? `Disk.Bay.${bay}:Enclosure.Internal.0-1:${storageId}` : `drv-${hex(3)}`,
      name: `Solid State Disk 0:1:${bay}`,
      capacityBytes: 960_197_124_096,
      os: null,
      erasures: 0,
    })),
    nics: [1, 2].map((port) => ({
      id: dell ? `NIC.Integrated.1-${port}-1` : `nic-${hex(3)}`,
      mac: mac(index, port),
    })),
    boots: 0,
    lastBoot: null,
    revision: 1,
    actions: [],
  };
}

/** Back to stock, keeping the hardware and ids: off, disks empty, no media, no override, counters at 0. */
export function restock(machine: Machine): void {
  machine.power = 'Off';
  machine.boot = { enabled: 'Disabled', target: 'None' };
  machine.assetTag = '';
  machine.installParams = null;
  machine.installState = 'idle';
  machine.installMessage = null;
  machine.installImage = null;
  machine.installDueAt = null;
  for (const slot of machine.media) Object.assign(slot, { image: null, inserted: false, writeProtected: true });
  for (const drive of machine.drives) Object.assign(drive, { os: null, erasures: 0 });
  machine.boots = 0;
  machine.lastBoot = null;
  machine.revision++;
  machine.actions = [];
}

export class RedfishState {
  machines: Machine[] = [];
  readonly file: string | null;
  /** Set when the emulator stops: late timers must not write a file that may be gone. */
  frozen = false;

  constructor(file: string | null) {
    this.file = file;
  }

  /** Read the file if there is one; false when there is none. */
  load(): boolean {
    if (this.file === null) return false;
    let raw: string;
    try {
      raw = readFileSync(this.file, 'utf8');
    } catch {
      return false;
    }
    const saved = JSON.parse(raw) as { machines?: Machine[] };
    this.machines = saved.machines ?? [];
    return true;
  }

  save(): void {
    if (this.file === null || this.frozen) return;
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify({ version: 1, machines: this.machines }), { mode: 0o600 });
    renameSync(partial, this.file);
  }
}
