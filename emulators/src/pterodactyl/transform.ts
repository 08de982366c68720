// The panel's Fractal transformers (upstreams.md §1.2, §1.7, §1.9): `{object, attributes}` items
// and `{object: "list", data}` collections, for the Application and the Client API.

import { createHash } from 'node:crypto';
import type { Ctx } from './context.ts';
import {
  type ActivityEvent,
  type Allocation,
  atom,
  type Backup,
  type Database,
  type Egg,
  type EggVariable,
  type Schedule,
  type ScheduleTask,
  type Server,
  type User,
} from './state.ts';

export function item(object: string, attributes: unknown): { object: string; attributes: unknown } {
  return { object, attributes };
}

export function list(items: unknown[]): { object: 'list'; data: unknown[] } {
  return { object: 'list', data: items };
}

/** A database id as a hashid-like string (the panel encodes ids with Hashids). */
export function hashid(id: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ1234567890';
  const h = createHash('sha256').update(`db-${id}`).digest();
  let prefix = '';
  for (let i = 0; i < 4; i++) prefix += alphabet[(h[i] ?? 0) % alphabet.length];
  let n = id;
  let body = '';
  do {
    body = (alphabet[n % alphabet.length] ?? 'a') + body;
    n = Math.floor(n / alphabet.length);
  } while (n > 0);
  return `${prefix}${body}`.padEnd(8, 'X');
}

export function unhash(ctx: Ctx, value: string): Database | undefined {
  for (const db of ctx.state.databases.values()) if (hashid(db.id) === value) return db;
  return undefined;
}

// ---- Application API ----

export function appUser(u: User): unknown {
  return item('user', {
    id: u.id,
    external_id: u.externalId,
    uuid: u.uuid,
    username: u.username,
    email: u.email,
    first_name: u.firstName,
    last_name: u.lastName,
    language: u.language,
    root_admin: u.rootAdmin,
    '2fa': false,
    created_at: u.createdAt,
    updated_at: u.updatedAt,
  });
}

export function appAllocation(a: Allocation): unknown {
  return item('allocation', {
    id: a.id,
    ip: a.ip,
    alias: a.alias,
    port: a.port,
    notes: a.notes,
    assigned: a.serverId !== null,
  });
}

/** The environment as the panel's EnvironmentService answers it: every egg variable, plus the server's. */
export function environment(ctx: Ctx, s: Server): Record<string, string | number | null> {
  const egg = ctx.state.eggs.get(s.eggId);
  const out: Record<string, string | number | null> = {};
  for (const v of egg?.variables ?? []) out[v.envVariable] = s.environment[v.envVariable] ?? v.defaultValue;
  const alloc = ctx.state.allocations.get(s.allocationId);
  out.STARTUP = s.startup;
  out.P_SERVER_LOCATION = ctx.state.locations.get(ctx.state.nodes.get(s.nodeId)?.locationId ?? 0)?.short ?? null;
  out.P_SERVER_UUID = s.uuid;
  out.P_SERVER_ALLOCATION_LIMIT = s.allocationLimit;
  if (alloc) {
    out.SERVER_IP = alloc.ip;
    out.SERVER_PORT = alloc.port;
  }
  return out;
}

function eggVariableArray(v: EggVariable, serverValue?: string | null): Record<string, unknown> {
  return {
    id: v.id,
    egg_id: v.eggId,
    name: v.name,
    description: v.description,
    env_variable: v.envVariable,
    default_value: v.defaultValue,
    user_viewable: v.userViewable,
    user_editable: v.userEditable,
    rules: v.rules,
    created_at: atom(0),
    updated_at: atom(0),
    ...(serverValue !== undefined ? { server_value: serverValue } : {}),
  };
}

export function appServer(ctx: Ctx, s: Server, include: Set<string>): unknown {
  const attributes: Record<string, unknown> = {
    id: s.id,
    external_id: s.externalId,
    uuid: s.uuid,
    identifier: s.identifier,
    name: s.name,
    description: s.description,
    status: s.status,
    suspended: s.status === 'suspended',
    limits: {
      memory: s.memory,
      swap: s.swap,
      disk: s.disk,
      io: s.io,
      cpu: s.cpu,
      threads: s.threads,
      oom_disabled: s.oomDisabled,
    },
    feature_limits: { databases: s.databaseLimit, allocations: s.allocationLimit, backups: s.backupLimit },
    user: s.ownerId,
    node: s.nodeId,
    allocation: s.allocationId,
    nest: s.nestId,
    egg: s.eggId,
    container: {
      startup_command: s.startup,
      image: s.image,
      installed: s.status === 'installing' || s.status === 'install_failed' ? 0 : 1,
      environment: environment(ctx, s),
    },
    updated_at: s.updatedAt,
    created_at: s.createdAt,
  };
  const rel: Record<string, unknown> = {};
  if (include.has('allocations')) {
    rel.allocations = list([...ctx.state.allocations.values()].filter((a) => a.serverId === s.id).map(appAllocation));
  }
  if (include.has('user')) {
    const owner = ctx.state.users.get(s.ownerId);
    rel.user = owner ? appUser(owner) : { object: 'null_resource', attributes: null };
  }
  if (include.has('egg')) {
    const egg = ctx.state.eggs.get(s.eggId);
    rel.egg = egg ? appEgg(egg, new Set()) : { object: 'null_resource', attributes: null };
  }
  if (include.has('variables')) {
    const egg = ctx.state.eggs.get(s.eggId);
    rel.variables = list(
      (egg?.variables ?? []).map((v) =>
        item('server_variable', eggVariableArray(v, s.environment[v.envVariable] ?? v.defaultValue)),
      ),
    );
  }
  if (include.has('location')) {
    const loc = ctx.state.locations.get(ctx.state.nodes.get(s.nodeId)?.locationId ?? 0);
    rel.location = loc
      ? item('location', { id: loc.id, short: loc.short, long: loc.long, updated_at: atom(0), created_at: atom(0) })
      : { object: 'null_resource', attributes: null };
  }
  if (include.has('node')) {
    rel.node = item('node', appNodeAttributes(ctx, s.nodeId));
  }
  if (include.has('databases')) {
    rel.databases = list(
      [...ctx.state.databases.values()]
        .filter((d) => d.serverId === s.id)
        .map((d) =>
          item('server_database', {
            id: d.id,
            server: s.id,
            host: d.hostId,
            database: d.database,
            username: d.username,
            remote: d.remote,
            max_connections: d.maxConnections,
            created_at: d.createdAt,
            updated_at: d.createdAt,
          }),
        ),
    );
  }
  if (Object.keys(rel).length > 0) attributes.relationships = rel;
  return item('server', attributes);
}

export function appNodeAttributes(ctx: Ctx, nodeId: number): Record<string, unknown> {
  const n = ctx.state.nodes.get(nodeId);
  if (!n) return {};
  const servers = [...ctx.state.servers.values()].filter((s) => s.nodeId === nodeId);
  const wings = new URL(ctx.wingsUrl);
  return {
    id: n.id,
    uuid: n.uuid,
    public: true,
    name: n.name,
    description: null,
    location_id: n.locationId,
    fqdn: n.fqdn,
    scheme: wings.protocol.replace(':', ''),
    behind_proxy: false,
    maintenance_mode: n.maintenance,
    memory: 65536,
    memory_overallocate: 0,
    disk: 512000,
    disk_overallocate: 0,
    upload_size: 100,
    daemon_listen: Number(wings.port),
    daemon_sftp: n.sftpPort,
    daemon_base: '/var/lib/pterodactyl/volumes',
    created_at: atom(0),
    updated_at: atom(0),
    allocated_resources: {
      memory: servers.reduce((t, s) => t + s.memory, 0),
      disk: servers.reduce((t, s) => t + s.disk, 0),
    },
  };
}

export function appEgg(e: Egg, include: Set<string>): unknown {
  const attributes: Record<string, unknown> = {
    id: e.id,
    uuid: e.uuid,
    name: e.name,
    nest: e.nestId,
    author: e.author,
    description: e.description,
    docker_image: Object.values(e.dockerImages)[0] ?? '',
    docker_images: e.dockerImages,
    config: {
      files:
        e.game === 'paper'
          ? {
              'server.properties': {
                parser: 'properties',
                find: {
                  'server-ip': '0.0.0.0',
                  'server-port': '{{server.build.default.port}}',
                  'query.port': '{{server.build.default.port}}',
                },
              },
            }
          : {},
      startup: {
        done:
          e.game === 'paper' ? ')! For help, type ' : e.game === 'bedrock' ? 'Server started' : 'Game server connected',
      },
      stop: e.game === 'valheim' ? '^C' : 'stop',
      logs: {},
      file_denylist: [],
      extends: null,
    },
    startup: e.startup,
    script: {
      privileged: true,
      install: '#!/bin/bash\n# Server install script (emulated)\n',
      entry: 'bash',
      container: 'ghcr.io/pterodactyl/installers:alpine',
      extends: null,
    },
    created_at: atom(0),
    updated_at: atom(0),
  };
  if (include.has('variables')) {
    attributes.relationships = {
      variables: list(e.variables.map((v) => item('egg_variable', eggVariableArray(v)))),
    };
  }
  return item('egg', attributes);
}

// ---- Client API ----

export function clientAllocation(a: Allocation, server: Server): unknown {
  return item('allocation', {
    id: a.id,
    ip: a.ip,
    ip_alias: a.alias,
    port: a.port,
    notes: a.notes,
    is_default: a.id === server.allocationId,
  });
}

export function clientEggVariable(v: EggVariable, server: Server): unknown {
  return item('egg_variable', {
    name: v.name,
    description: v.description,
    env_variable: v.envVariable,
    default_value: v.defaultValue,
    server_value: server.environment[v.envVariable] ?? v.defaultValue,
    is_editable: v.userEditable,
    rules: v.rules,
  });
}

/** The startup command with variables filled in (hidden ones as `[hidden]` for non-admins). */
export function invocation(ctx: Ctx, s: Server): string {
  const egg = ctx.state.eggs.get(s.eggId);
  const alloc = ctx.state.allocations.get(s.allocationId);
  const values: Record<string, string> = {
    '{{SERVER_MEMORY}}': String(s.memory),
    '{{SERVER_IP}}': alloc?.ip ?? '',
    '{{SERVER_PORT}}': String(alloc?.port ?? ''),
  };
  for (const v of egg?.variables ?? []) values[`{{${v.envVariable}}}`] = s.environment[v.envVariable] ?? v.defaultValue;
  return s.startup.replace(/\{\{[\w.]+\}\}/g, (m) => values[m] ?? m);
}

export function clientUser(u: User): Record<string, unknown> {
  return {
    uuid: u.uuid,
    username: u.username,
    email: u.email,
    image: `https://gravatar.com/avatar/${createHash('md5').update(u.email.toLowerCase()).digest('hex')}`,
    '2fa_enabled': false,
    created_at: u.createdAt,
  };
}

export function clientServer(ctx: Ctx, s: Server, user: User, include: Set<string>): unknown {
  const node = ctx.state.nodes.get(s.nodeId);
  const egg = ctx.state.eggs.get(s.eggId);
  const attributes: Record<string, unknown> = {
    server_owner: user.id === s.ownerId,
    identifier: s.identifier,
    internal_id: s.id,
    uuid: s.uuid,
    name: s.name,
    node: node?.name ?? '',
    is_node_under_maintenance: node?.maintenance ?? false,
    sftp_details: { ip: node?.fqdn ?? '127.0.0.1', port: node?.sftpPort ?? 2022 },
    description: s.description,
    limits: {
      memory: s.memory,
      swap: s.swap,
      disk: s.disk,
      io: s.io,
      cpu: s.cpu,
      threads: s.threads,
      oom_disabled: s.oomDisabled,
    },
    invocation: invocation(ctx, s),
    docker_image: s.image,
    egg_features: egg?.features ?? null,
    feature_limits: { databases: s.databaseLimit, allocations: s.allocationLimit, backups: s.backupLimit },
    status: s.status,
    is_suspended: s.status === 'suspended',
    is_installing: s.status === 'installing' || s.status === 'install_failed',
    is_transferring: false,
  };
  const rel: Record<string, unknown> = {
    allocations: list(
      [...ctx.state.allocations.values()].filter((a) => a.serverId === s.id).map((a) => clientAllocation(a, s)),
    ),
    variables: list((egg?.variables ?? []).filter((v) => v.userViewable).map((v) => clientEggVariable(v, s))),
  };
  if (include.has('egg')) {
    rel.egg = egg ? item('egg', { uuid: egg.uuid, name: egg.name }) : { object: 'null_resource', attributes: null };
  }
  if (include.has('subusers')) {
    rel.subusers = list(
      [...ctx.state.subusers.values()]
        .filter((su) => su.serverId === s.id)
        .flatMap((su) => {
          const u = ctx.state.users.get(su.userId);
          return u ? [item('server_subuser', { ...clientUser(u), permissions: su.permissions })] : [];
        }),
    );
  }
  attributes.relationships = rel;
  return item('server', attributes);
}

export function clientActivity(ctx: Ctx, a: ActivityEvent, includeActor: boolean): unknown {
  const attributes: Record<string, unknown> = {
    id: createHash('sha1').update(String(a.id)).digest('hex'),
    batch: a.batch,
    event: a.event,
    is_api: a.isApi,
    ip: a.ip,
    description: a.description,
    properties: a.properties,
    has_additional_metadata: false,
    timestamp: a.timestamp,
  };
  if (includeActor) {
    const actor = a.actorId === null ? undefined : ctx.state.users.get(a.actorId);
    attributes.relationships = {
      actor: actor ? item('user', clientUser(actor)) : { object: 'null_resource', attributes: null },
    };
  }
  return item('activity_log', attributes);
}

export function clientBackup(b: Backup): unknown {
  return item('backup', {
    uuid: b.uuid,
    is_successful: b.isSuccessful,
    is_locked: b.isLocked,
    name: b.name,
    ignored_files: b.ignoredFiles,
    checksum: b.checksum,
    bytes: b.bytes,
    created_at: b.createdAt,
    completed_at: b.completedAt,
  });
}

export function clientDatabase(ctx: Ctx, d: Database, withPassword: boolean): unknown {
  const host = ctx.state.databaseHosts.get(d.hostId);
  const attributes: Record<string, unknown> = {
    id: hashid(d.id),
    host: { address: host?.host ?? '127.0.0.1', port: host?.port ?? 3306 },
    name: d.database,
    username: d.username,
    connections_from: d.remote,
    max_connections: d.maxConnections,
  };
  if (withPassword) {
    attributes.relationships = { password: item('database_password', { password: d.password }) };
  }
  return item('server_database', attributes);
}

export function clientTask(t: ScheduleTask): unknown {
  return item('schedule_task', {
    id: t.id,
    sequence_id: t.sequenceId,
    action: t.action,
    payload: t.payload,
    time_offset: t.timeOffset,
    is_queued: t.isQueued,
    continue_on_failure: t.continueOnFailure,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  });
}

export function clientSchedule(s: Schedule): unknown {
  return item('server_schedule', {
    id: s.id,
    name: s.name,
    cron: {
      day_of_week: s.cron.dayOfWeek,
      day_of_month: s.cron.dayOfMonth,
      month: s.cron.month,
      hour: s.cron.hour,
      minute: s.cron.minute,
    },
    is_active: s.isActive,
    is_processing: s.isProcessing,
    only_when_online: s.onlyWhenOnline,
    last_run_at: s.lastRunAt,
    next_run_at: s.nextRunAt,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    relationships: { tasks: list([...s.tasks].sort((a, b) => a.sequenceId - b.sequenceId).map(clientTask)) },
  });
}
