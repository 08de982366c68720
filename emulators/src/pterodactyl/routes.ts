// Shared pieces of the Client API server routes: the route type, subuser permission checks
// (owners and root admins may do everything), and activity logging for the bound server.

import { activity, type Ctx, type Req } from './context.ts';
import { type Answer, forbidden } from './http.ts';
import type { Server } from './state.ts';

export interface ServerRoute {
  method: string;
  /** Matched against the path below /api/client/servers/{server} ('' for the server itself). */
  pattern: RegExp;
  /** Whether the panel calls Wings for this (wingsDown → 504). */
  wings?: boolean;
  handler: (ctx: Ctx, req: Req, server: Server, m: string[]) => Answer;
}

/** Every subuser permission the panel knows (app/Models/Permission.php). */
export const PERMISSIONS = [
  'websocket.connect',
  'control.console',
  'control.start',
  'control.stop',
  'control.restart',
  'user.create',
  'user.read',
  'user.update',
  'user.delete',
  'file.create',
  'file.read',
  'file.read-content',
  'file.update',
  'file.delete',
  'file.archive',
  'file.sftp',
  'backup.create',
  'backup.read',
  'backup.delete',
  'backup.download',
  'backup.restore',
  'allocation.read',
  'allocation.create',
  'allocation.update',
  'allocation.delete',
  'startup.read',
  'startup.update',
  'startup.docker-image',
  'database.create',
  'database.read',
  'database.update',
  'database.delete',
  'database.view_password',
  'schedule.create',
  'schedule.read',
  'schedule.update',
  'schedule.delete',
  'settings.rename',
  'settings.reinstall',
  'activity.read',
];

/** The permissions a user has on a server: ['*'] (+ admin grants) for owners and admins. */
export function userPermissions(ctx: Ctx, server: Server, userId: number): string[] {
  const user = ctx.state.users.get(userId);
  if (user?.rootAdmin || server.ownerId === userId) {
    return user?.rootAdmin
      ? ['*', 'admin.websocket.errors', 'admin.websocket.install', 'admin.websocket.transfer']
      : ['*'];
  }
  for (const su of ctx.state.subusers.values()) {
    if (su.serverId === server.id && su.userId === userId) return su.permissions;
  }
  return [];
}

export function can(ctx: Ctx, req: Req, server: Server, permission: string): boolean {
  const perms = userPermissions(ctx, server, req.user.id);
  return perms.includes('*') || perms.includes(permission);
}

/** Throw the panel's 403 when the user lacks `permission`. */
export function need(ctx: Ctx, req: Req, server: Server, permission: string): void {
  if (!can(ctx, req, server, permission)) throw forbidden();
}

export function log(ctx: Ctx, req: Req, server: Server, event: string, properties: Record<string, unknown> = {}): void {
  activity(ctx, req, server, event, properties);
}

export function route(method: string, pattern: RegExp, handler: ServerRoute['handler'], wings = false): ServerRoute {
  return { method, pattern, handler, wings };
}

export type { Answer };
