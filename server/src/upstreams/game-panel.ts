// The seam between the platform and whatever runs game servers: every game-server operation
// goes through GamePanel (the Pterodactyl driver in ./pterodactyl/ implements it). Provisioning
// uses the panel's administrative API; everything a client does uses its client API as the
// panel's administrator, on the one server the platform's service points at.
//
// Contract shared by every method:
// - It resolves when the panel has answered, or it throws UpstreamError (./hypervisor.ts) and
//   nothing else, never with a credential in its message. How panel answers map:
//     401 → auth; 403 → forbidden (a permission or key refusal; `upstream_forbidden` to clients);
//     404 → not_found; 409 (the server's state) → conflict, the panel's text in `detail`;
//     400 (the panel's DisplayException: a limit, a business rule) → rejected with the text;
//     422 → rejected with `fields` (the panel's field → message);
//     429 → rate_limited with `retryAfterSeconds`; 5xx, 504 (Wings) and network failures →
//     unreachable / timeout (retryable).
// - Paths of files are relative to the server's root, already normalised by the caller
//   (`/`-separated, no `..`); the driver never checks them again and never builds them itself.
// - Methods that create are safe to call again after a lost answer when they say so.

import type { GameServerRef, NodeDriver } from './driver.ts';

// The server reference lives with the driver contract, beside the console ticket that names it;
// re-exported because every game module names its server this way.
export type { GameServerRef };

/** The panel's own lifecycle field (upstreams.md §1.5); null = installed and normal. */
export type PanelServerStatus =
  | 'installing'
  | 'install_failed'
  | 'reinstall_failed'
  | 'suspended'
  | 'restoring_backup'
  | null;

/** Wings' power state. */
export type GamePowerState = 'offline' | 'starting' | 'running' | 'stopping';

export interface PanelUserSpec {
  /** The platform's stable name of the account on the panel, e.g. `hp-k3v9x2ab-acct-42` (installation, account). */
  externalId: string;
  /** The platform's own address for the user (never the customer's: an invite may hold that one). */
  email: string;
  /** Unique on the panel; letters, digits, `.`, `-`, `_`. */
  username: string;
  firstName: string;
  lastName: string;
}

/** A panel user as the application API shows it. */
export interface PanelUser {
  id: number;
  username: string;
  email: string;
  externalId: string | null;
  rootAdmin: boolean;
}

export interface GameServerSpec {
  /**
   * Deterministic and unique per service (e.g. `hp-k3v9x2ab-svc-42`: installation, service): how a
   * server is found again after a crash. The caller decides whether a server found by it is its own.
   */
  externalId: string;
  name: string;
  description: string;
  /** The panel user that owns it. */
  userId: number;
  /** The egg's nest (the driver reads the egg's variables under it; the panel takes the nest from the egg). */
  nestId: number;
  eggId: number;
  dockerImage: string;
  startup: string;
  environment: Record<string, string>;
  limits: { memoryMb: number; cpuPercent: number; diskMb: number; swapMb: number; io: number };
  featureLimits: { databases: number; backups: number; allocations: number };
}

export interface GameServerInfo extends GameServerRef {
  externalId: string | null;
  name: string;
  status: PanelServerStatus;
  suspended: boolean;
}

export interface GameResources {
  state: GamePowerState;
  memoryBytes: number;
  /** % of one core (can exceed 100). */
  cpuAbsolute: number;
  diskBytes: number;
  networkRxBytes: number;
  networkTxBytes: number;
  uptimeMs: number;
}

export interface GameServerDetails {
  identifier: string;
  uuid: string;
  name: string;
  description: string;
  node: string;
  status: PanelServerStatus;
  sftp: { ip: string; port: number };
  limits: { memory: number; swap: number; disk: number; io: number; cpu: number };
  featureLimits: { databases: number; allocations: number; backups: number };
  dockerImage: string;
  invocation: string;
  allocations: GameAllocation[];
}

export interface GameAllocation {
  id: number;
  ip: string;
  ipAlias: string | null;
  port: number;
  notes: string | null;
  isDefault: boolean;
}

export interface GameActivity {
  id: string;
  event: string;
  description: string | null;
  properties: Record<string, unknown>;
  ip: string | null;
  isApi: boolean;
  timestamp: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
  totalPages: number;
}

export interface GameFile {
  name: string;
  /** e.g. `-rw-r--r--`. */
  mode: string;
  size: number;
  isFile: boolean;
  isSymlink: boolean;
  mimetype: string;
  createdAt: string;
  modifiedAt: string;
}

export interface GameBackup {
  uuid: string;
  name: string;
  isSuccessful: boolean;
  isLocked: boolean;
  ignoredFiles: string[];
  checksum: string | null;
  bytes: number;
  createdAt: string;
  completedAt: string | null;
}

export interface GameDatabase {
  /** The panel's hashid. */
  id: string;
  name: string;
  username: string;
  host: { address: string; port: number };
  connectionsFrom: string;
  maxConnections: number | null;
  /** Only in the answers of create and rotate (lists never carry it). */
  password: string | null;
}

export interface CronSpec {
  minute: string;
  hour: string;
  dayOfMonth: string;
  month: string;
  dayOfWeek: string;
}

export interface ScheduleInput {
  name: string;
  cron: CronSpec;
  isActive: boolean;
  onlyWhenOnline: boolean;
}

export interface ScheduleTaskInput {
  action: 'command' | 'power' | 'backup';
  payload: string;
  timeOffset: number;
  continueOnFailure: boolean;
}

export interface GameScheduleTask extends ScheduleTaskInput {
  id: number;
  sequenceId: number;
  isQueued: boolean;
}

export interface GameSchedule {
  id: number;
  name: string;
  cron: CronSpec;
  isActive: boolean;
  isProcessing: boolean;
  onlyWhenOnline: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
  tasks: GameScheduleTask[];
}

export interface GameVariable {
  name: string;
  description: string;
  envVariable: string;
  defaultValue: string;
  serverValue: string | null;
  isEditable: boolean;
  /** Laravel validation rules, e.g. `required|string|max:20`. */
  rules: string;
}

export interface GameStartup {
  variables: GameVariable[];
  startupCommand: string;
  rawStartupCommand: string;
  dockerImages: Record<string, string>;
}

export interface GameSubuser {
  uuid: string;
  username: string;
  email: string;
  twoFactor: boolean;
  createdAt: string;
  permissions: string[];
}

/** What the console relay needs to dial Wings: short-lived, never shown to a client. */
export interface GameConsoleCredentials {
  /** The JWT Wings expects in `auth`. */
  token: string;
  /** wss://node:port/api/servers/<uuid>/ws */
  socket: string;
}

export interface GamePanel extends NodeDriver {
  // ---- Application API (provisioning) ----

  /** The panel user with this external id, created when missing (safe to repeat). */
  ensureUser(spec: PanelUserSpec): Promise<{ id: number }>;
  /** The panel user that owns the server: who signs in to manage it on the panel. */
  serverOwner(ref: GameServerRef): Promise<PanelUser>;
  /** Set a panel user's password (the panel keeps only its hash). */
  setUserPassword(userId: number, password: string): Promise<void>;
  /** The server carrying this external id, or null. */
  findServer(externalId: string): Promise<GameServerInfo | null>;
  /**
   * Make the server of `spec` exist: when one carries `spec.externalId` it is returned as it is,
   * unchanged (the caller judges whether it is its own); otherwise a free allocation of the
   * configured panel node is taken and the server created (status `installing`). Calling it twice
   * never creates a second server.
   */
  createServer(spec: GameServerSpec): Promise<GameServerInfo>;
  /** The server's lifecycle as the application API reports it; `not_found` when it is gone. */
  server(ref: GameServerRef): Promise<GameServerInfo>;
  suspend(ref: GameServerRef): Promise<void>;
  unsuspend(ref: GameServerRef): Promise<void>;
  /** Reinstall through the application API (status back to `installing`). */
  reinstall(ref: GameServerRef): Promise<void>;
  /** Delete (forced: the node may be gone). Already gone is success. */
  deleteServer(ref: GameServerRef): Promise<void>;

  // ---- Client API (what the client does) ----

  details(ref: GameServerRef): Promise<GameServerDetails>;
  resources(ref: GameServerRef): Promise<GameResources>;
  activity(ref: GameServerRef, page: number, perPage: number): Promise<Page<GameActivity>>;
  allocations(ref: GameServerRef): Promise<GameAllocation[]>;
  consoleCredentials(ref: GameServerRef): Promise<GameConsoleCredentials>;
  command(ref: GameServerRef, command: string): Promise<void>;
  power(ref: GameServerRef, signal: 'start' | 'stop' | 'restart' | 'kill'): Promise<void>;

  listFiles(ref: GameServerRef, directory: string): Promise<GameFile[]>;
  /** The raw bytes of a file (the caller decides whether it is text); `maxBytes` caps what is read. */
  readFile(ref: GameServerRef, path: string, maxBytes: number): Promise<Buffer>;
  writeFile(ref: GameServerRef, path: string, content: Buffer | string): Promise<void>;
  /**
   * Stream one file into `directory` under `name` through the panel's upload URL (Wings'
   * multipart endpoint); memory stays bounded whatever the size.
   */
  uploadFile(
    ref: GameServerRef,
    directory: string,
    name: string,
    body: NodeJS.ReadableStream,
    size: number | null,
  ): Promise<void>;
  /** A signed URL on the node that accepts a multipart upload (valid minutes). */
  uploadUrl(ref: GameServerRef): Promise<string>;
  downloadUrl(ref: GameServerRef, path: string): Promise<string>;
  deleteFiles(ref: GameServerRef, root: string, names: string[]): Promise<void>;
  renameFiles(ref: GameServerRef, root: string, moves: { from: string; to: string }[]): Promise<void>;
  copyFile(ref: GameServerRef, location: string): Promise<void>;
  compressFiles(ref: GameServerRef, root: string, names: string[]): Promise<GameFile>;
  decompressFile(ref: GameServerRef, root: string, name: string): Promise<void>;
  createFolder(ref: GameServerRef, root: string, name: string): Promise<void>;

  listBackups(ref: GameServerRef): Promise<{ backups: GameBackup[]; count: number }>;
  createBackup(
    ref: GameServerRef,
    input: { name: string | null; ignored: string[]; locked: boolean },
  ): Promise<GameBackup>;
  restoreBackup(ref: GameServerRef, uuid: string, truncate: boolean): Promise<void>;
  deleteBackup(ref: GameServerRef, uuid: string): Promise<void>;
  backupDownloadUrl(ref: GameServerRef, uuid: string): Promise<string>;

  listDatabases(ref: GameServerRef): Promise<GameDatabase[]>;
  createDatabase(ref: GameServerRef, input: { database: string; remote: string }): Promise<GameDatabase>;
  deleteDatabase(ref: GameServerRef, id: string): Promise<void>;
  rotateDatabasePassword(ref: GameServerRef, id: string): Promise<GameDatabase>;

  listSchedules(ref: GameServerRef): Promise<GameSchedule[]>;
  /** Create with its tasks (one call per task after the schedule). */
  createSchedule(ref: GameServerRef, input: ScheduleInput, tasks: ScheduleTaskInput[]): Promise<GameSchedule>;
  /** Update the schedule; when `tasks` is given, the tasks are replaced by these. */
  updateSchedule(
    ref: GameServerRef,
    id: number,
    input: ScheduleInput,
    tasks: ScheduleTaskInput[] | null,
  ): Promise<GameSchedule>;
  deleteSchedule(ref: GameServerRef, id: number): Promise<void>;
  executeSchedule(ref: GameServerRef, id: number): Promise<void>;

  startup(ref: GameServerRef): Promise<GameStartup>;
  setVariable(ref: GameServerRef, key: string, value: string): Promise<GameVariable>;

  listSubusers(ref: GameServerRef): Promise<GameSubuser[]>;
  inviteSubuser(ref: GameServerRef, email: string, permissions: string[]): Promise<GameSubuser>;
  updateSubuser(ref: GameServerRef, uuid: string, permissions: string[]): Promise<GameSubuser>;
  removeSubuser(ref: GameServerRef, uuid: string): Promise<void>;

  rename(ref: GameServerRef, name: string, description: string | null): Promise<void>;
}

/** Subuser permissions the panel knows (upstreams.md §1.6). */
export const PANEL_PERMISSIONS = [
  'websocket.connect',
  'control.console',
  'control.start',
  'control.stop',
  'control.restart',
  'database.read',
  'database.create',
  'database.update',
  'database.delete',
  'database.view_password',
  'schedule.read',
  'schedule.create',
  'schedule.update',
  'schedule.delete',
  'user.read',
  'user.create',
  'user.update',
  'user.delete',
  'backup.read',
  'backup.create',
  'backup.delete',
  'backup.download',
  'backup.restore',
  'allocation.read',
  'allocation.create',
  'allocation.update',
  'allocation.delete',
  'file.read',
  'file.read-content',
  'file.create',
  'file.update',
  'file.delete',
  'file.archive',
  'file.sftp',
  'startup.read',
  'startup.update',
  'startup.docker-image',
  'settings.rename',
  'settings.reinstall',
  'activity.read',
] as const;
