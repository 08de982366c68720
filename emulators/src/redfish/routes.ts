// The URI space of one machine's BMC and what each method does there. The service root (and
// `/redfish`) and login are open; everything else needs a session token or HTTP Basic. Ids in
// URIs must be the machine's own (any other is a 404, as on a real BMC). A PATCH of the system
// honours If-Match (412 on a stale ETag; 428 without one when the emulator requires it).

import type { IncomingMessage } from 'node:http';
import { ejectMedia, insertMedia, patchMedia, patchSystem, resetAction, secureErase } from './actions.ts';
import type { Ctx, Runtime, Task } from './context.ts';
import { message, RedfishError } from './http.ts';
import * as r from './resources.ts';
import { authenticate, findSession, login } from './sessions.ts';
import { findTask, monitorAnswer, monitorPath, taskResource } from './tasks.ts';

export interface Answer {
  status: number;
  /** undefined: no body. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** The name a state-changing request goes by in `calls` and `loseNext` (null for reads). */
export function actionKey(method: string, rest: string[]): string | null {
  const i = rest.indexOf('Actions');
  if (method === 'POST' && i >= 0) return rest[i + 1] ?? null;
  if (method === 'POST' && rest.join('/') === 'SessionService/Sessions') return 'Sessions';
  if (method === 'DELETE' && rest[0] === 'SessionService') return 'DELETE Session';
  if (method === 'PATCH' && rest[0] === 'Systems') return 'PATCH ComputerSystem';
  if (method === 'PATCH' && rest.includes('VirtualMedia')) return 'PATCH VirtualMedia';
  return null;
}

function missing(path: string): RedfishError {
  return new RedfishError(404, message('ResourceMissingAtURI', [path]));
}

function notAllowed(allow: string[]): RedfishError {
  return new RedfishError(
    405,
    message('GeneralError', [], [], `The HTTP method is not allowed on this resource; allowed: ${allow.join(', ')}.`),
    { allow: allow.join(', ') },
  );
}

/** Only these methods on this resource. */
function only(method: string, allow: string[]): void {
  if (!allow.includes(method)) throw notAllowed(allow);
}

function accepted(task: Task): Answer {
  return { status: 202, body: taskResource(task), headers: { location: monitorPath(task) } };
}

/** The path below `/redfish/v1` as decoded segments, or null outside it. */
export function segments(pathname: string): string[] | null {
  const parts = pathname.split('/').filter((p) => p !== '');
  if (parts[0] !== 'redfish') return null;
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
}

export function route(
  ctx: Ctx,
  rt: Runtime,
  req: IncomingMessage,
  method: string,
  path: string,
  parts: string[],
  body: unknown,
): Answer {
  const m = rt.machine;
  if (parts.length === 1) {
    only(method, ['GET']);
    return { status: 200, body: r.redfishLinks() };
  }
  if (parts[1] !== 'v1') throw missing(path);
  const rest = parts.slice(2);
  if (rest.length === 0) {
    only(method, ['GET']);
    return { status: 200, body: r.serviceRoot(rt) };
  }
  const joined = rest.join('/');
  if (joined === 'SessionService/Sessions' && method === 'POST') {
    const s = login(ctx, rt, body);
    return {
      status: 201,
      body: r.session(s),
      headers: { 'x-auth-token': s.token, location: r.paths.session(s) },
    };
  }

  const who = authenticate(ctx, rt, req);
  if (!who) {
    throw new RedfishError(401, message('NoValidSession'), { 'www-authenticate': 'Basic realm="Redfish"' });
  }

  const [head, id, sub, subId, a4, a5, a6, a7] = rest;
  switch (head) {
    case 'SessionService': {
      if (id === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.sessionService(rt, Math.round(ctx.faults.sessionTimeoutMs / 1000) || 1800) };
      }
      if (id !== 'Sessions') break;
      if (sub === undefined) {
        only(method, ['GET', 'POST']);
        return { status: 200, body: r.sessions(rt) };
      }
      if (subId !== undefined) break;
      const s = findSession(rt, sub);
      if (!s) throw missing(path);
      only(method, ['GET', 'DELETE']);
      if (method === 'DELETE') {
        rt.sessions.delete(s.token);
        return { status: 204 };
      }
      return { status: 200, body: r.session(s) };
    }
    case 'Systems': {
      if (id === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.systems(rt) };
      }
      if (id !== m.systemId) break;
      if (sub === undefined) {
        only(method, ['GET', 'PATCH']);
        const current = r.system(rt, ctx.settings);
        if (method === 'PATCH') {
          const ifMatch = req.headers['if-match'];
          if (typeof ifMatch === 'string') {
            const tags = ifMatch.split(',').map((t) => t.trim());
            if (!tags.includes('*') && !tags.includes(current.etag)) {
              throw new RedfishError(412, message('PreconditionFailed'));
            }
          } else if (ctx.settings.requireIfMatch) {
            throw new RedfishError(428, message('PreconditionRequired'));
          }
          patchSystem(rt, body);
          const after = r.system(rt, ctx.settings);
          return { status: 200, body: after.body, headers: { etag: after.etag } };
        }
        return { status: 200, body: current.body, headers: { etag: current.etag } };
      }
      if (sub === 'Actions' && subId === 'ComputerSystem.Reset' && a4 === undefined) {
        only(method, ['POST']);
        resetAction(ctx, rt, body);
        return { status: 204 };
      }
      if (sub === 'ResetActionInfo' && subId === undefined && ctx.settings.resetActionInfo) {
        only(method, ['GET']);
        return { status: 200, body: r.resetActionInfo(rt, ctx.settings) };
      }
      if (sub === 'EthernetInterfaces') {
        if (subId === undefined) {
          only(method, ['GET']);
          return { status: 200, body: r.nics(rt) };
        }
        const nic = m.nics.find((n) => n.id === subId);
        if (!nic || a4 !== undefined) break;
        only(method, ['GET']);
        return { status: 200, body: r.nic(rt, nic) };
      }
      if (sub === 'Storage') {
        if (subId === undefined) {
          only(method, ['GET']);
          return { status: 200, body: r.storages(rt) };
        }
        if (subId !== m.storageId) break;
        if (a4 === undefined) {
          only(method, ['GET']);
          return { status: 200, body: r.storage(rt) };
        }
        if (a4 !== 'Drives' || a5 === undefined) break;
        const drive = m.drives.find((d) => d.id === a5);
        if (!drive) break;
        if (a6 === undefined) {
          only(method, ['GET']);
          return { status: 200, body: r.drive(rt, drive, rt.erasing.has(drive.id)) };
        }
        if (a6 === 'Actions' && a7 === 'Drive.SecureErase' && rest.length === 8) {
          only(method, ['POST']);
          return accepted(secureErase(ctx, rt, drive, body));
        }
      }
      break;
    }
    case 'Managers': {
      if (id === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.managers(rt) };
      }
      if (id !== m.managerId) break;
      if (sub === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.manager(rt) };
      }
      if (sub !== 'VirtualMedia') break;
      if (subId === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.mediaCollection(rt) };
      }
      const slot = m.media.find((s) => s.id === subId);
      if (!slot) break;
      if (a4 === undefined) {
        only(method, ['GET', 'PATCH']);
        if (method === 'PATCH') {
          patchMedia(rt, slot, body);
          return { status: 200, body: r.mediaSlot(rt, slot, ctx.settings.mediaActions) };
        }
        return { status: 200, body: r.mediaSlot(rt, slot, ctx.settings.mediaActions) };
      }
      if (a4 === 'Actions' && rest.length === 6 && ctx.settings.mediaActions) {
        if (a5 === 'VirtualMedia.InsertMedia') {
          only(method, ['POST']);
          return accepted(insertMedia(ctx, rt, slot, body));
        }
        if (a5 === 'VirtualMedia.EjectMedia') {
          only(method, ['POST']);
          ejectMedia(rt, slot, body);
          return { status: 204 };
        }
      }
      break;
    }
    case 'TaskService': {
      if (id === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.taskService() };
      }
      if (id !== 'Tasks') break;
      if (sub === undefined) {
        only(method, ['GET']);
        return { status: 200, body: r.tasks(rt) };
      }
      const task = findTask(rt, sub, path);
      if (subId === undefined) {
        only(method, ['GET']);
        return { status: 200, body: taskResource(task) };
      }
      if (subId === 'Monitor' && a4 === undefined) {
        only(method, ['GET']);
        const answer = monitorAnswer(task);
        return answer.body === null
          ? { status: answer.status, headers: answer.headers }
          : { status: answer.status, body: answer.body, headers: answer.headers };
      }
      break;
    }
  }
  throw missing(path);
}
