// Backups as the panel and Wings run them (upstreams.md §1.4, §1.6): the 2-per-600-s throttle
// (429, counted over every backup made in the window, deleted ones too), the server's backup
// limit (400), Wings archiving the tree after backupDelayMs (checksum `sha1:<hex>`, bytes, the
// `backup completed:<uuid>` socket event), restore (status restoring_backup, then the tree put
// back, `backup restore completed`), lock toggle, soft delete and signed download URLs.

import { createHash, randomUUID } from 'node:crypto';
import { nodeToken } from './client.ts';
import { signedUrl } from './client-files.ts';
import { type Ctx, emit, later, type Req } from './context.ts';
import { restore, snapshot } from './files.ts';
import { power } from './game.ts';
import {
  type Answer,
  badRequest,
  display,
  NO_CONTENT,
  notFound,
  ok,
  PteroError,
  pageParams,
  pagination,
  str,
  wingsUnreachable,
} from './http.ts';
import { can, log, need, route, type ServerRoute } from './routes.ts';
import { atom, type Backup, type Server } from './state.ts';
import { clientBackup, list } from './transform.ts';
import { validate } from './validate.ts';

export const THROTTLE_LIMIT = 2;
export const THROTTLE_PERIOD = 600;

function nonFailed(ctx: Ctx, server: Server): Backup[] {
  return [...ctx.state.backups.values()].filter(
    (b) => b.serverId === server.id && b.deletedAt === null && (b.completedAt === null || b.isSuccessful),
  );
}

function backupOf(ctx: Ctx, server: Server, uuid: string): Backup {
  const b = ctx.state.backups.get(uuid);
  if (!b || b.serverId !== server.id || b.deletedAt !== null) throw notFound();
  return b;
}

/** Start a backup (InitiateBackupService); used by the API and by schedule tasks. */
export function startBackup(ctx: Ctx, server: Server, name: string | null, ignored: string[], locked: boolean): Backup {
  const now = Date.now();
  const recent = [...ctx.state.backups.values()]
    .filter(
      (b) =>
        b.serverId === server.id &&
        (b.completedAt === null || b.isSuccessful) &&
        Date.parse(b.createdAt) >= now - THROTTLE_PERIOD * 1000 - 999,
    )
    .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  if (recent.length >= THROTTLE_LIMIT) {
    const last = recent.at(-1) as Backup;
    const retry = Math.max(0, Math.ceil((Date.parse(last.createdAt) + THROTTLE_PERIOD * 1000 - now) / 1000));
    throw new PteroError(
      429,
      'TooManyRequestsHttpException',
      `Only ${THROTTLE_LIMIT} backups may be generated within a ${THROTTLE_PERIOD} second span of time.`,
      { 'Retry-After': String(retry) },
    );
  }
  if (!server.backupLimit || nonFailed(ctx, server).length >= server.backupLimit) {
    throw display(
      `Cannot create a new backup, this server has reached its limit of ${server.backupLimit ?? 0} backups.`,
      'TooManyBackupsException',
    );
  }
  if (ctx.faults.wingsDown) throw wingsUnreachable();
  const trimmed = (name ?? '').trim();
  const backup: Backup = {
    uuid: randomUUID(),
    serverId: server.id,
    name: trimmed || `Backup at ${new Date(now).toISOString().slice(0, 19).replace('T', ' ')}`,
    ignoredFiles: ignored.filter((l) => l !== ''),
    isSuccessful: false,
    isLocked: locked,
    checksum: null,
    bytes: 0,
    createdAt: atom(now),
    completedAt: null,
    deletedAt: null,
    archive: null,
  };
  ctx.state.backups.set(backup.uuid, backup);
  ctx.state.save();
  later(ctx, ctx.delays.backupMs, () => {
    const current = ctx.state.backups.get(backup.uuid);
    const owner = ctx.state.servers.get(server.id);
    if (!current || !owner) return;
    const archive = snapshot(ctx.state.treeOf(owner.id), current.ignoredFiles);
    const sha1 = createHash('sha1').update(archive).digest('hex');
    current.archive = archive;
    current.checksum = `sha1:${sha1}`;
    current.bytes = archive.length;
    current.isSuccessful = true;
    current.completedAt = atom();
    emit(
      ctx,
      owner,
      `backup completed:${current.uuid}`,
      JSON.stringify({
        uuid: current.uuid,
        is_successful: true,
        checksum: sha1,
        checksum_type: 'sha1',
        file_size: archive.length,
      }),
    );
    ctx.state.addActivity({
      serverId: owner.id,
      batch: null,
      event: 'server:backup.complete',
      isApi: false,
      ip: '127.0.0.1',
      description: null,
      properties: { name: current.name },
      actorId: null,
    });
    ctx.state.save();
  });
  return backup;
}

function listBackups(ctx: Ctx, req: Req, server: Server): Answer {
  need(ctx, req, server, 'backup.read');
  const rows = [...ctx.state.backups.values()].filter((b) => b.serverId === server.id && b.deletedAt === null);
  const { page, perPage } = pageParams(req.query, 20, 50);
  const slice = rows.slice((page - 1) * perPage, page * perPage);
  return ok({
    ...list(slice.map(clientBackup)),
    meta: {
      pagination: pagination(ctx.panelUrl, req.path, req.query, rows.length, slice.length, perPage, page),
      backup_count: nonFailed(ctx, server).length,
    },
  });
}

export const BACKUP_ROUTES: ServerRoute[] = [
  route('GET', /^\/backups$/, (ctx, req, server) => listBackups(ctx, req, server)),
  route('POST', /^\/backups$/, (ctx, req, server) => {
    need(ctx, req, server, 'backup.create');
    validate(req.body, {
      name: ['nullable', 'string', 'max:191'],
      is_locked: ['nullable', 'boolean'],
      ignored: ['nullable', 'string'],
    });
    const locked = can(ctx, req, server, 'backup.delete') && (req.body.is_locked === true || req.body.is_locked === 1);
    const backup = startBackup(
      ctx,
      server,
      str(req.body, 'name') ?? null,
      (str(req.body, 'ignored') ?? '').split('\n'),
      locked,
    );
    log(ctx, req, server, 'server:backup.start', { name: backup.name, locked: req.body.is_locked === true });
    return ok(clientBackup(backup));
  }),
  route('GET', /^\/backups\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'backup.read');
    return ok(clientBackup(backupOf(ctx, server, m[1] ?? '')));
  }),
  route('POST', /^\/backups\/([^/]+)\/lock$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'backup.delete');
    const b = backupOf(ctx, server, m[1] ?? '');
    b.isLocked = !b.isLocked;
    log(ctx, req, server, b.isLocked ? 'server:backup.lock' : 'server:backup.unlock', { name: b.name });
    ctx.state.save();
    return ok(clientBackup(b));
  }),
  route(
    'POST',
    /^\/backups\/([^/]+)\/restore$/,
    (ctx, req, server, m) => {
      need(ctx, req, server, 'backup.restore');
      const b = backupOf(ctx, server, m[1] ?? '');
      validate(req.body, { truncate: ['required', 'boolean'] });
      if (server.status !== null) {
        throw badRequest('This server is not currently in a state that allows for a backup to be restored.');
      }
      if (!b.isSuccessful && b.completedAt === null) {
        throw badRequest('This backup cannot be restored at this time: not completed or failed.');
      }
      const truncate = req.body.truncate === true || req.body.truncate === 1 || req.body.truncate === '1';
      log(ctx, req, server, 'server:backup.restore', { name: b.name, truncate: req.body.truncate });
      server.status = 'restoring_backup';
      if (ctx.state.runtimeOf(server.id).state !== 'offline') power(ctx, server, 'kill');
      ctx.state.save();
      later(ctx, ctx.delays.backupMs, () => {
        const current = ctx.state.servers.get(server.id);
        if (current?.status !== 'restoring_backup') return;
        if (b.archive) {
          restore(ctx.state.treeOf(current.id), b.archive, truncate);
          for (const path of ctx.state.treeOf(current.id).keys()) {
            if (path !== '') emit(ctx, current, 'daemon message', `(restoring): ${path}`);
          }
        }
        current.status = null;
        emit(ctx, current, 'backup restore completed', '');
        ctx.state.addActivity({
          serverId: current.id,
          batch: null,
          event: 'server:backup.restore-complete',
          isApi: false,
          ip: '127.0.0.1',
          description: null,
          properties: { name: b.name },
          actorId: null,
        });
        ctx.state.save();
      });
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'DELETE',
    /^\/backups\/([^/]+)$/,
    (ctx, req, server, m) => {
      need(ctx, req, server, 'backup.delete');
      const b = backupOf(ctx, server, m[1] ?? '');
      if (b.isLocked && (b.completedAt === null || b.isSuccessful)) {
        throw display('Cannot delete a backup that is marked as locked.', 'BackupLockedException');
      }
      b.deletedAt = atom();
      b.archive = null;
      log(ctx, req, server, 'server:backup.delete', { name: b.name, failed: !b.isSuccessful });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route('GET', /^\/backups\/([^/]+)\/download$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'backup.download');
    const b = backupOf(ctx, server, m[1] ?? '');
    const token = nodeToken(ctx, req, server, 15 * 60, { backup_uuid: b.uuid, server_uuid: server.uuid });
    log(ctx, req, server, 'server:backup.download', { name: b.name });
    return ok(signedUrl(`${ctx.wingsUrl}/download/backup?token=${token}`));
  }),
];
