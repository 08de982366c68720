// The panel's attributes (upstreams.md §1.7, §1.9: the client and application transformers) as
// the GamePanel types of ../game-panel.ts. Only what the platform uses is read; a field the
// panel leaves out becomes its neutral value (0, '', null, []), never a guess.

import type {
  GameActivity,
  GameAllocation,
  GameBackup,
  GameDatabase,
  GameFile,
  GamePowerState,
  GameResources,
  GameSchedule,
  GameScheduleTask,
  GameServerDetails,
  GameServerInfo,
  GameStartup,
  GameSubuser,
  GameVariable,
  PanelServerStatus,
} from '../game-panel.ts';

type Attrs = Record<string, unknown>;

const isObject = (value: unknown): value is Attrs =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown, fallback = ''): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback;
const strOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown, fallback = 0): number => {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : fallback;
};
const bool = (value: unknown): boolean => value === true || value === 1 || value === '1';
const obj = (value: unknown): Attrs => (isObject(value) ? value : {});

/** The attributes of an included relation (`relationships.<name>`), item or list; [] when absent or hidden. */
export function related(attrs: Attrs, name: string): Attrs[] {
  const relation = obj(attrs.relationships)[name];
  if (!isObject(relation)) return [];
  if (Array.isArray(relation.data)) return relation.data.map((e) => obj(obj(e).attributes));
  return isObject(relation.attributes) ? [relation.attributes] : [];
}

const STATUSES = new Set(['installing', 'install_failed', 'reinstall_failed', 'suspended', 'restoring_backup']);

export function toStatus(value: unknown): PanelServerStatus {
  return typeof value === 'string' && STATUSES.has(value) ? (value as PanelServerStatus) : null;
}

/** An application-API `server`. */
export function toServerInfo(a: Attrs): GameServerInfo {
  const status = toStatus(a.status);
  return {
    id: num(a.id),
    uuid: str(a.uuid),
    identifier: str(a.identifier),
    externalId: strOrNull(a.external_id),
    name: str(a.name),
    status,
    suspended: bool(a.suspended) || status === 'suspended',
  };
}

export function toAllocation(a: Attrs): GameAllocation {
  return {
    id: num(a.id),
    ip: str(a.ip),
    ipAlias: strOrNull(a.ip_alias),
    port: num(a.port),
    notes: strOrNull(a.notes),
    isDefault: bool(a.is_default),
  };
}

/** A client-API `server` (with its default `allocations` include). */
export function toDetails(a: Attrs): GameServerDetails {
  const limits = obj(a.limits);
  const features = obj(a.feature_limits);
  const sftp = obj(a.sftp_details);
  return {
    identifier: str(a.identifier),
    uuid: str(a.uuid),
    name: str(a.name),
    description: str(a.description),
    node: str(a.node),
    status: toStatus(a.status),
    sftp: { ip: str(sftp.ip), port: num(sftp.port) },
    limits: {
      memory: num(limits.memory),
      swap: num(limits.swap),
      disk: num(limits.disk),
      io: num(limits.io),
      cpu: num(limits.cpu),
    },
    featureLimits: {
      databases: num(features.databases),
      allocations: num(features.allocations),
      backups: num(features.backups),
    },
    dockerImage: str(a.docker_image),
    invocation: str(a.invocation),
    allocations: related(a, 'allocations').map(toAllocation),
  };
}

const POWER: Record<string, GamePowerState> = {
  offline: 'offline',
  starting: 'starting',
  running: 'running',
  stopping: 'stopping',
  // The panel's default when Wings leaves current_state out.
  stopped: 'offline',
};

export function toResources(a: Attrs): GameResources {
  const r = obj(a.resources);
  return {
    state: POWER[str(a.current_state)] ?? 'offline',
    memoryBytes: num(r.memory_bytes),
    cpuAbsolute: num(r.cpu_absolute),
    diskBytes: num(r.disk_bytes),
    networkRxBytes: num(r.network_rx_bytes),
    networkTxBytes: num(r.network_tx_bytes),
    uptimeMs: num(r.uptime),
  };
}

export function toActivity(a: Attrs): GameActivity {
  return {
    id: str(a.id),
    event: str(a.event),
    description: strOrNull(a.description),
    // PHP renders an empty map as [].
    properties: obj(a.properties),
    ip: strOrNull(a.ip),
    isApi: bool(a.is_api),
    timestamp: str(a.timestamp),
  };
}

export function toFile(a: Attrs): GameFile {
  return {
    name: str(a.name),
    mode: str(a.mode),
    size: num(a.size),
    isFile: bool(a.is_file),
    isSymlink: bool(a.is_symlink),
    mimetype: str(a.mimetype),
    createdAt: str(a.created_at),
    modifiedAt: str(a.modified_at),
  };
}

export function toBackup(a: Attrs): GameBackup {
  return {
    uuid: str(a.uuid),
    name: str(a.name),
    isSuccessful: bool(a.is_successful),
    isLocked: bool(a.is_locked),
    ignoredFiles: Array.isArray(a.ignored_files) ? a.ignored_files.filter((f) => typeof f === 'string') : [],
    checksum: strOrNull(a.checksum),
    bytes: num(a.bytes),
    createdAt: str(a.created_at),
    completedAt: strOrNull(a.completed_at),
  };
}

export function toDatabase(a: Attrs): GameDatabase {
  const host = obj(a.host);
  const password = related(a, 'password')[0];
  return {
    id: str(a.id),
    name: str(a.name),
    username: str(a.username),
    host: { address: str(host.address), port: num(host.port) },
    connectionsFrom: str(a.connections_from),
    maxConnections: a.max_connections === null || a.max_connections === undefined ? null : num(a.max_connections),
    password: password && typeof password.password === 'string' ? password.password : null,
  };
}

export function toTask(a: Attrs): GameScheduleTask {
  const action = str(a.action);
  return {
    id: num(a.id),
    sequenceId: num(a.sequence_id),
    action: action === 'power' || action === 'backup' ? action : 'command',
    payload: str(a.payload),
    timeOffset: num(a.time_offset),
    continueOnFailure: bool(a.continue_on_failure),
    isQueued: bool(a.is_queued),
  };
}

export function toSchedule(a: Attrs, tasks?: GameScheduleTask[]): GameSchedule {
  const cron = obj(a.cron);
  return {
    id: num(a.id),
    name: str(a.name),
    cron: {
      minute: str(cron.minute, '*'),
      hour: str(cron.hour, '*'),
      dayOfMonth: str(cron.day_of_month, '*'),
      month: str(cron.month, '*'),
      dayOfWeek: str(cron.day_of_week, '*'),
    },
    isActive: bool(a.is_active),
    isProcessing: bool(a.is_processing),
    onlyWhenOnline: bool(a.only_when_online),
    lastRunAt: strOrNull(a.last_run_at),
    nextRunAt: strOrNull(a.next_run_at),
    tasks: (tasks ?? related(a, 'tasks').map(toTask)).sort((x, y) => x.sequenceId - y.sequenceId),
  };
}

export function toVariable(a: Attrs): GameVariable {
  return {
    name: str(a.name),
    description: str(a.description),
    envVariable: str(a.env_variable),
    defaultValue: str(a.default_value),
    serverValue: strOrNull(a.server_value),
    isEditable: bool(a.is_editable),
    rules: str(a.rules),
  };
}

export function toStartup(variables: Attrs[], meta: Attrs): GameStartup {
  const images = obj(meta.docker_images);
  return {
    variables: variables.map(toVariable),
    startupCommand: str(meta.startup_command),
    rawStartupCommand: str(meta.raw_startup_command),
    dockerImages: Object.fromEntries(
      Object.entries(images).filter((e): e is [string, string] => typeof e[1] === 'string'),
    ),
  };
}

export function toSubuser(a: Attrs): GameSubuser {
  return {
    uuid: str(a.uuid),
    username: str(a.username),
    email: str(a.email),
    twoFactor: bool(a['2fa_enabled']),
    createdAt: str(a.created_at),
    permissions: Array.isArray(a.permissions) ? a.permissions.filter((p) => typeof p === 'string') : [],
  };
}
