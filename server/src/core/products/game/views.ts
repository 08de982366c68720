// What the game actions answer: the panel's objects as clients see them (snake_case, sizes in
// bytes, times ISO-8601), never the panel's ids of users or nodes, nor its credentials.

import type {
  GameActivity,
  GameAllocation,
  GameBackup,
  GameDatabase,
  GameFile,
  GameResources,
  GameSchedule,
  GameSubuser,
  GameVariable,
} from '../../../upstreams/game-panel.ts';

export const resourcesView = (r: GameResources) => ({
  state: r.state,
  memory_bytes: r.memoryBytes,
  cpu_percent: Math.round(r.cpuAbsolute * 100) / 100,
  disk_bytes: r.diskBytes,
  network: { rx_bytes: r.networkRxBytes, tx_bytes: r.networkTxBytes },
  uptime_seconds: Math.floor(r.uptimeMs / 1000),
});

export const allocationView = (a: GameAllocation) => ({
  ip: a.ipAlias ?? a.ip,
  port: a.port,
  address: `${a.ipAlias ?? a.ip}:${a.port}`,
  notes: a.notes,
  primary: a.isDefault,
});

export const activityView = (a: GameActivity) => ({
  id: a.id,
  event: a.event,
  description: a.description,
  properties: a.properties,
  ip: a.ip,
  via_api: a.isApi,
  at: a.timestamp,
});

export const fileView = (directory: string, f: GameFile) => ({
  name: f.name,
  path: directory === '/' ? `/${f.name}` : `${directory}/${f.name}`,
  is_file: f.isFile,
  is_symlink: f.isSymlink,
  size: f.size,
  mode: f.mode,
  mimetype: f.mimetype,
  created_at: f.createdAt,
  modified_at: f.modifiedAt,
});

export const backupView = (b: GameBackup) => ({
  uuid: b.uuid,
  name: b.name,
  status: b.completedAt === null ? 'in_progress' : b.isSuccessful ? 'completed' : 'failed',
  locked: b.isLocked,
  ignored: b.ignoredFiles,
  checksum: b.checksum,
  bytes: b.bytes,
  created_at: b.createdAt,
  completed_at: b.completedAt,
});

export const databaseView = (d: GameDatabase) => ({
  id: d.id,
  name: d.name,
  username: d.username,
  host: `${d.host.address}:${d.host.port}`,
  connections_from: d.connectionsFrom,
  max_connections: d.maxConnections,
  ...(d.password === null ? {} : { password: d.password }),
});

export const scheduleView = (s: GameSchedule) => ({
  id: s.id,
  name: s.name,
  cron: {
    minute: s.cron.minute,
    hour: s.cron.hour,
    day_of_month: s.cron.dayOfMonth,
    month: s.cron.month,
    day_of_week: s.cron.dayOfWeek,
  },
  is_active: s.isActive,
  is_processing: s.isProcessing,
  only_when_online: s.onlyWhenOnline,
  last_run_at: s.lastRunAt,
  next_run_at: s.nextRunAt,
  tasks: s.tasks.map((t) => ({
    id: t.id,
    sequence: t.sequenceId,
    action: t.action,
    payload: t.payload,
    time_offset: t.timeOffset,
    continue_on_failure: t.continueOnFailure,
    queued: t.isQueued,
  })),
});

export const variableView = (v: GameVariable) => ({
  key: v.envVariable,
  name: v.name,
  description: v.description,
  value: v.serverValue ?? v.defaultValue,
  default: v.defaultValue,
  editable: v.isEditable,
  rules: v.rules,
});

export const subuserView = (u: GameSubuser) => ({
  uuid: u.uuid,
  email: u.email,
  username: u.username,
  two_factor: u.twoFactor,
  permissions: u.permissions,
  created_at: u.createdAt,
});
