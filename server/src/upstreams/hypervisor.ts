// The one seam between the platform and whatever runs virtual servers. Everything the
// platform does to a VM goes through this interface; the Proxmox VE driver implements it, and
// the emulator in emulators/ stands in for a real node in the demo and the tests.
//
// Contract shared by every method: it resolves only when the operation has finished on the
// node (tasks are awaited), or throws UpstreamError. Messages never contain credentials.

export type PowerState = 'running' | 'stopped' | 'starting' | 'stopping' | 'unknown';
export type Timeframe = 'hour' | 'day' | 'week' | 'month' | 'year';
export const TIMEFRAMES: readonly Timeframe[] = ['hour', 'day', 'week', 'month', 'year'];

/** Where a VM lives. `name` is the platform's deterministic name (e.g. `hp-svc-42`). */
export interface VmRef {
  node: string;
  vmid: number;
  name: string;
}

export interface CloudInit {
  hostname: string;
  user: string;
  password: string;
  sshKeys: string[];
  ipv4: { address: string; prefix: number; gateway: string };
  nameservers: string[];
}

export interface VmSpec {
  /** Deterministic and unique per service: how a VM is found again after a crash. */
  name: string;
  templateVmid: number;
  cores: number;
  memoryMb: number;
  diskGb: number;
  cloudInit: CloudInit;
  tags: string[];
}

export interface VmStatus {
  power: PowerState;
  /** Fraction of the VM's CPUs in use, 0–1. */
  cpu: number;
  cpus: number;
  memoryBytes: number;
  memoryTotalBytes: number;
  diskTotalBytes: number;
  uptimeSeconds: number;
  netInBytes: number;
  netOutBytes: number;
  /** A task holds the VM (clone, backup, …). */
  locked: string | null;
}

export interface MetricPoint {
  time: number;
  cpu: number | null;
  memoryBytes: number | null;
  memoryTotalBytes: number | null;
  netInBytesPerSecond: number | null;
  netOutBytesPerSecond: number | null;
  diskReadBytesPerSecond: number | null;
  diskWriteBytesPerSecond: number | null;
}

export interface ConsoleTicket {
  kind: 'vnc' | 'serial';
  /** The node's ticket for /vncwebsocket (and, for VNC, the RFB password). */
  ticket: string;
  port: number;
  user: string;
  password: string | null;
  /** What a server-side proxy dials: the node's websocket URL (without credentials). */
  websocketPath: string;
}

export type UpstreamErrorKind = 'unreachable' | 'timeout' | 'auth' | 'not_found' | 'conflict' | 'rejected' | 'protocol';

/**
 * A failure talking to an upstream. `retryable` says whether the same call may succeed later
 * without anyone changing anything (the node was down, slow, or answered 5xx), as opposed to a
 * request the node will keep refusing (bad credentials, bad parameters, a conflicting state).
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly kind: UpstreamErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(
    kind: UpstreamErrorKind,
    message: string,
    options: { retryable?: boolean; status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.retryable = options.retryable ?? (kind === 'unreachable' || kind === 'timeout');
    this.status = options.status;
  }
}

export interface Hypervisor {
  /** The node answers and authenticates us: its software version. */
  ping(): Promise<{ version: string }>;

  /** The VM with this platform name, or null. The way a re-run job finds what an earlier run created. */
  findVm(name: string): Promise<VmRef | null>;

  /**
   * Make the VM of `spec` exist and be configured (not started): clone the template (full
   * clone, fresh vmid), set CPU, memory, cloud-init and tags, grow the disk. Resumable: when a
   * VM with `spec.name` already exists, it is configured rather than cloned again, so running
   * this twice never creates a second VM.
   */
  createVm(spec: VmSpec): Promise<VmRef>;

  /** Power on. Already running is success. */
  start(vm: VmRef): Promise<void>;
  /** Power off at once (the plug). Already stopped is success. */
  stop(vm: VmRef): Promise<void>;
  /** ACPI shutdown, then a hard stop if the guest has not stopped after `timeoutSeconds`. */
  shutdown(vm: VmRef, timeoutSeconds?: number): Promise<void>;
  /** Graceful reboot; a stopped VM is started instead. */
  reboot(vm: VmRef): Promise<void>;
  /** Hard reset (kill and boot); a stopped VM is started instead. */
  reset(vm: VmRef): Promise<void>;

  /** Live state. A VM that no longer exists throws UpstreamError `not_found`. */
  status(vm: VmRef): Promise<VmStatus>;
  /** Metric history over a timeframe, oldest first. */
  metrics(vm: VmRef, timeframe: Timeframe): Promise<MetricPoint[]>;
  /** A one-time console ticket on the node (the VM must be running). */
  console(vm: VmRef, kind: 'vnc' | 'serial'): Promise<ConsoleTicket>;

  /**
   * Replace the VM's disk with a fresh copy of another template, keeping vmid and name, and
   * apply `spec` (new password, keys); the VM is left stopped.
   */
  reinstall(vm: VmRef, spec: VmSpec): Promise<VmRef>;

  /** Stop if needed and delete with its disks. A VM that is already gone is success. */
  destroy(vm: VmRef): Promise<void>;
}
