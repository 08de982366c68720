// What the emulated panel and its Wings node know: users and API keys, the location, node,
// allocations, nests and eggs, servers with their files, backups, databases, schedules,
// subusers and activity, plus each server's live power state and console (not persisted).
// Persisted to a JSON file when asked (after every change), so a demo survives restarts.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export type PowerState = 'offline' | 'starting' | 'running' | 'stopping';
export type ServerStatus =
  | null
  | 'installing'
  | 'install_failed'
  | 'reinstall_failed'
  | 'suspended'
  | 'restoring_backup';

export interface User {
  id: number;
  uuid: string;
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  externalId: string | null;
  language: string;
  rootAdmin: boolean;
  /** The panel keeps only a hash of a user's password (bcrypt there; scrypt here); null: none set. */
  passwordHash?: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  /** The first 16 characters: prefix + 11 random. */
  identifier: string;
  /** The other 32 characters. */
  secret: string;
  /** 1 = account (ptlc_), 2 = application (ptla_). */
  type: 1 | 2;
  userId: number;
}

export interface Location {
  id: number;
  short: string;
  long: string;
}

export interface PanelNode {
  id: number;
  uuid: string;
  name: string;
  fqdn: string;
  locationId: number;
  sftpPort: number;
  maintenance: boolean;
  /** The secret Wings and the panel sign JWTs with (`daemon_token`). */
  daemonToken: string;
}

export interface Allocation {
  id: number;
  nodeId: number;
  ip: string;
  alias: string | null;
  port: number;
  notes: string | null;
  serverId: number | null;
}

export interface EggVariable {
  id: number;
  eggId: number;
  name: string;
  description: string;
  envVariable: string;
  defaultValue: string;
  userViewable: boolean;
  userEditable: boolean;
  rules: string;
}

export interface Egg {
  id: number;
  uuid: string;
  nestId: number;
  name: string;
  author: string;
  description: string;
  features: string[] | null;
  dockerImages: Record<string, string>;
  startup: string;
  variables: EggVariable[];
  /** Which fake game runs on it (what the console prints). */
  game: 'paper' | 'bedrock' | 'valheim';
}

export interface Nest {
  id: number;
  uuid: string;
  author: string;
  name: string;
  description: string;
}

/** One entry of a server's file tree; paths are relative to the root, without a leading slash. */
export interface FileEntry {
  dir: boolean;
  /** Base64 in the state file; a Buffer in memory. */
  content: Buffer;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  created: string;
  modified: string;
}

export interface Backup {
  uuid: string;
  serverId: number;
  name: string;
  ignoredFiles: string[];
  isSuccessful: boolean;
  isLocked: boolean;
  checksum: string | null;
  bytes: number;
  createdAt: string;
  completedAt: string | null;
  /** Soft-deleted backups still count for the 600 s throttle, as in the panel (withTrashed). */
  deletedAt: string | null;
  /** The archive: a serialized snapshot of the tree (see files.ts). */
  archive: Buffer | null;
}

export interface Database {
  id: number;
  serverId: number;
  hostId: number;
  database: string;
  username: string;
  password: string;
  remote: string;
  maxConnections: number;
  createdAt: string;
}

export interface DatabaseHost {
  id: number;
  name: string;
  host: string;
  port: number;
}

export interface ScheduleTask {
  id: number;
  sequenceId: number;
  action: 'command' | 'power' | 'backup';
  payload: string;
  timeOffset: number;
  isQueued: boolean;
  continueOnFailure: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Schedule {
  id: number;
  serverId: number;
  name: string;
  cron: { minute: string; hour: string; dayOfMonth: string; month: string; dayOfWeek: string };
  isActive: boolean;
  isProcessing: boolean;
  onlyWhenOnline: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
  tasks: ScheduleTask[];
}

export interface Subuser {
  id: number;
  serverId: number;
  userId: number;
  permissions: string[];
  createdAt: string;
  updatedAt: string;
}

export interface ActivityEvent {
  id: number;
  serverId: number | null;
  batch: string | null;
  event: string;
  isApi: boolean;
  ip: string;
  description: string | null;
  properties: Record<string, unknown>;
  actorId: number | null;
  timestamp: string;
}

export interface Server {
  id: number;
  uuid: string;
  /** uuidShort: the first 8 characters of the uuid. */
  identifier: string;
  externalId: string | null;
  name: string;
  description: string;
  status: ServerStatus;
  ownerId: number;
  nodeId: number;
  allocationId: number;
  nestId: number;
  eggId: number;
  startup: string;
  image: string;
  memory: number;
  swap: number;
  disk: number;
  io: number;
  cpu: number;
  threads: string | null;
  oomDisabled: boolean;
  databaseLimit: number | null;
  allocationLimit: number | null;
  backupLimit: number | null;
  environment: Record<string, string | null>;
  skipScripts: boolean;
  installedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Wings' view of a server: power, console, counters. Not persisted (a restart leaves it offline). */
export interface Runtime {
  state: PowerState;
  startedAt: number | null;
  /** The last console lines, newest last (what `send logs` replays). */
  console: string[];
  /** A power action is being processed (Wings' power lock). */
  busy: boolean;
  rxBytes: number;
  txBytes: number;
  players: string[];
  ops: string[];
}

export interface Counters {
  user: number;
  server: number;
  allocation: number;
  database: number;
  schedule: number;
  task: number;
  subuser: number;
  activity: number;
  variable: number;
}

const MAX_CONSOLE = 150;
const MAX_ACTIVITY = 2000;

/** ISO-8601 with +00:00, as Carbon's toAtomString() answers. */
export function atom(ms: number = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

interface Saved {
  version: number;
  counters: Counters;
  users: User[];
  keys: ApiKey[];
  locations: Location[];
  nodes: PanelNode[];
  allocations: Allocation[];
  nests: Nest[];
  eggs: Egg[];
  servers: Server[];
  files: Record<string, Record<string, Omit<FileEntry, 'content'> & { content: string }>>;
  backups: (Omit<Backup, 'archive'> & { archive: string | null })[];
  databases: Database[];
  databaseHosts: DatabaseHost[];
  schedules: Schedule[];
  subusers: Subuser[];
  activity: ActivityEvent[];
}

export class PanelState {
  counters: Counters = {
    user: 0,
    server: 0,
    allocation: 0,
    database: 0,
    schedule: 0,
    task: 0,
    subuser: 0,
    activity: 0,
    variable: 0,
  };
  readonly users = new Map<number, User>();
  readonly keys = new Map<string, ApiKey>();
  readonly locations = new Map<number, Location>();
  readonly nodes = new Map<number, PanelNode>();
  readonly allocations = new Map<number, Allocation>();
  readonly nests = new Map<number, Nest>();
  readonly eggs = new Map<number, Egg>();
  readonly servers = new Map<number, Server>();
  /** Server id → (path → entry); the root is the empty path. */
  readonly files = new Map<number, Map<string, FileEntry>>();
  readonly backups = new Map<string, Backup>();
  readonly databases = new Map<number, Database>();
  readonly databaseHosts = new Map<number, DatabaseHost>();
  readonly schedules = new Map<number, Schedule>();
  readonly subusers = new Map<number, Subuser>();
  readonly activity: ActivityEvent[] = [];
  /** Wings runtime by server id. */
  readonly runtime = new Map<number, Runtime>();
  readonly file: string | null;
  /** Set when the emulator stops: late timers must not write a file that may be gone. */
  frozen = false;

  constructor(file: string | null) {
    this.file = file;
  }

  next(kind: keyof Counters): number {
    this.counters[kind] += 1;
    return this.counters[kind];
  }

  runtimeOf(serverId: number): Runtime {
    let rt = this.runtime.get(serverId);
    if (!rt) {
      rt = {
        state: 'offline',
        startedAt: null,
        console: [],
        busy: false,
        rxBytes: 0,
        txBytes: 0,
        players: [],
        ops: [],
      };
      this.runtime.set(serverId, rt);
    }
    return rt;
  }

  consoleLine(serverId: number, line: string): void {
    const rt = this.runtimeOf(serverId);
    rt.console.push(line);
    if (rt.console.length > MAX_CONSOLE) rt.console.splice(0, rt.console.length - MAX_CONSOLE);
  }

  treeOf(serverId: number): Map<string, FileEntry> {
    let tree = this.files.get(serverId);
    if (!tree) {
      const now = atom();
      tree = new Map([['', { dir: true, content: Buffer.alloc(0), mode: 0o755, created: now, modified: now }]]);
      this.files.set(serverId, tree);
    }
    return tree;
  }

  addActivity(event: Omit<ActivityEvent, 'id' | 'timestamp'>): ActivityEvent {
    const entry: ActivityEvent = { ...event, id: this.next('activity'), timestamp: atom() };
    this.activity.push(entry);
    if (this.activity.length > MAX_ACTIVITY) this.activity.splice(0, this.activity.length - MAX_ACTIVITY);
    return entry;
  }

  userByEmail(email: string): User | undefined {
    const lower = email.toLowerCase();
    for (const u of this.users.values()) if (u.email.toLowerCase() === lower) return u;
    return undefined;
  }

  /** Remove a server and everything that hangs on it. */
  deleteServer(id: number): void {
    this.servers.delete(id);
    this.files.delete(id);
    this.runtime.delete(id);
    for (const a of this.allocations.values()) if (a.serverId === id) Object.assign(a, { serverId: null, notes: null });
    for (const [k, b] of this.backups) if (b.serverId === id) this.backups.delete(k);
    for (const [k, d] of this.databases) if (d.serverId === id) this.databases.delete(k);
    for (const [k, s] of this.schedules) if (s.serverId === id) this.schedules.delete(k);
    for (const [k, s] of this.subusers) if (s.serverId === id) this.subusers.delete(k);
  }

  /** Read the file if there is one; false when there is none (the caller seeds). */
  load(): boolean {
    if (this.file === null) return false;
    let raw: string;
    try {
      raw = readFileSync(this.file, 'utf8');
    } catch {
      return false;
    }
    const saved = JSON.parse(raw) as Partial<Saved>;
    if (saved.counters) this.counters = { ...this.counters, ...saved.counters };
    for (const u of saved.users ?? []) this.users.set(u.id, u);
    for (const k of saved.keys ?? []) this.keys.set(k.identifier, k);
    for (const l of saved.locations ?? []) this.locations.set(l.id, l);
    for (const n of saved.nodes ?? []) this.nodes.set(n.id, n);
    for (const a of saved.allocations ?? []) this.allocations.set(a.id, a);
    for (const n of saved.nests ?? []) this.nests.set(n.id, n);
    for (const e of saved.eggs ?? []) this.eggs.set(e.id, e);
    for (const s of saved.servers ?? []) this.servers.set(s.id, s);
    for (const [id, entries] of Object.entries(saved.files ?? {})) {
      const tree = new Map<string, FileEntry>();
      for (const [path, e] of Object.entries(entries))
        tree.set(path, { ...e, content: Buffer.from(e.content, 'base64') });
      this.files.set(Number(id), tree);
    }
    for (const b of saved.backups ?? []) {
      this.backups.set(b.uuid, { ...b, archive: b.archive === null ? null : Buffer.from(b.archive, 'base64') });
    }
    for (const d of saved.databases ?? []) this.databases.set(d.id, d);
    for (const h of saved.databaseHosts ?? []) this.databaseHosts.set(h.id, h);
    for (const s of saved.schedules ?? []) this.schedules.set(s.id, { ...s, isProcessing: false });
    for (const s of saved.subusers ?? []) this.subusers.set(s.id, s);
    this.activity.push(...(saved.activity ?? []));
    return true;
  }

  save(): void {
    if (this.file === null || this.frozen) return;
    const files: Saved['files'] = {};
    for (const [id, tree] of this.files) {
      const out: Saved['files'][string] = {};
      for (const [path, e] of tree) out[path] = { ...e, content: e.content.toString('base64') };
      files[String(id)] = out;
    }
    const saved: Saved = {
      version: 1,
      counters: this.counters,
      users: [...this.users.values()],
      keys: [...this.keys.values()],
      locations: [...this.locations.values()],
      nodes: [...this.nodes.values()],
      allocations: [...this.allocations.values()],
      nests: [...this.nests.values()],
      eggs: [...this.eggs.values()],
      servers: [...this.servers.values()],
      files,
      backups: [...this.backups.values()].map((b) => ({
        ...b,
        archive: b.archive === null ? null : b.archive.toString('base64'),
      })),
      databases: [...this.databases.values()],
      databaseHosts: [...this.databaseHosts.values()],
      schedules: [...this.schedules.values()],
      subusers: [...this.subusers.values()],
      activity: this.activity,
    };
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(partial, JSON.stringify(saved), { mode: 0o600 });
    renameSync(partial, this.file);
  }
}
