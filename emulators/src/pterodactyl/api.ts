// The panel's request pipeline: fault knobs, Bearer-key auth (401), key type per API (403),
// the rate-limit knob (429 ThrottleRequestsException with Retry-After/X-RateLimit-*), JSON input
// (400 when malformed), route matching (404/405 as Laravel words them), the client server
// binding with its access (404) and state (409 ServerStateConflictException) checks, Wings being
// unreachable (504), and the error body `{errors:[...]}` for everything that fails.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { APPLICATION_ROUTES } from './application.ts';
import { BACKUP_ROUTES } from './backups.ts';
import { account, CORE_ROUTES, listServers } from './client.ts';
import { EXTRA_ROUTES } from './client-extra.ts';
import { FILE_ROUTES } from './client-files.ts';
import type { Ctx, Req } from './context.ts';
import { takeCount, takeError, takeLoss } from './faults.ts';
import {
  type Answer,
  findKey,
  forbidden,
  fromWings,
  notFound,
  PteroError,
  parseInput,
  readBody,
  routeKey,
  sendAnswer,
  sendError,
  UNEXPECTED,
  WingsError,
  wingsUnreachable,
} from './http.ts';
import type { ServerRoute } from './routes.ts';
import type { Server } from './state.ts';

const MAX_BODY = 64 * 1024 * 1024;
const SERVER_ROUTES: ServerRoute[] = [...CORE_ROUTES, ...FILE_ROUTES, ...BACKUP_ROUTES, ...EXTRA_ROUTES];

const CLIENT_LIMIT = 720;
const APPLICATION_LIMIT = 240;

/** Per key and minute: how many calls were made (for the X-RateLimit-* headers). */
const windows = new Map<string, { minute: number; count: number }>();

function rateHeaders(keyId: string, limit: number): Record<string, string> {
  const minute = Math.floor(Date.now() / 60_000);
  const w = windows.get(keyId);
  const current = w && w.minute === minute ? w : { minute, count: 0 };
  current.count += 1;
  windows.set(keyId, current);
  return { 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': String(Math.max(0, limit - current.count)) };
}

function throttled(limit: number): PteroError {
  return new PteroError(429, 'ThrottleRequestsException', 'Too Many Attempts.', {
    'Retry-After': '2',
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 2),
  });
}

function routeMissing(method: string, path: string, allowed: string[]): PteroError {
  const route = path.replace(/^\//, '');
  if (allowed.length > 0) {
    const methods = [...new Set(allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ');
    return new PteroError(
      405,
      'MethodNotAllowedHttpException',
      `The ${method} method is not supported for route ${route}. Supported methods: ${methods}.`,
    );
  }
  return new PteroError(404, 'NotFoundHttpException', `The route ${route} could not be found.`);
}

/** The client `{server}` binding: 8 characters = identifier, else uuid. */
function bindServer(ctx: Ctx, value: string): Server {
  for (const s of ctx.state.servers.values()) {
    if (value.length === 8 ? s.identifier === value : s.uuid === value) return s;
  }
  throw notFound();
}

/** AuthenticateServerAccess: who may see it, and which states block which routes. */
function guardServer(ctx: Ctx, req: Req, server: Server, sub: string): void {
  const user = req.user;
  const isSubuser = [...ctx.state.subusers.values()].some((su) => su.serverId === server.id && su.userId === user.id);
  if (user.id !== server.ownerId && !user.rootAdmin && !isSubuser) {
    throw new PteroError(404, 'NotFoundHttpException', 'The requested resource does not exist on this server.');
  }
  const node = ctx.state.nodes.get(server.nodeId);
  let message: string | null = null;
  if (server.status === 'suspended') {
    message = 'This server is currently suspended and the functionality requested is unavailable.';
  } else if (node?.maintenance) {
    message = 'The node of this server is currently under maintenance and the functionality requested is unavailable.';
  } else if (server.status === 'installing' || server.status === 'install_failed') {
    message = 'This server has not yet completed its installation process, please try again later.';
  } else if (server.status === 'restoring_backup') {
    message = 'This server is currently restoring from a backup, please try again later.';
  }
  if (message === null || (req.method === 'GET' && sub === '')) return;
  const hard = server.status === 'suspended' || node?.maintenance === true;
  if (!hard && user.rootAdmin && req.method === 'GET' && sub === '/websocket') return;
  throw new PteroError(409, 'ServerStateConflictException', message);
}

function serverCall(ctx: Ctx, req: Req, rest: string): Answer {
  const m = /^\/api\/client\/servers\/([^/]+)(\/.*)?$/.exec(rest);
  const id = decodeURIComponent(m?.[1] ?? '');
  const sub = (m?.[2] ?? '').replace(/\/+$/, '');
  const candidates = SERVER_ROUTES.filter((r) => r.pattern.test(sub));
  const match = candidates.find((r) => r.method === req.method);
  if (!match)
    throw routeMissing(
      req.method,
      req.path,
      candidates.map((r) => r.method),
    );
  const server = bindServer(ctx, id);
  guardServer(ctx, req, server, sub);
  if (match.wings && ctx.faults.wingsDown) throw wingsUnreachable();
  return match.handler(ctx, req, server, [...(match.pattern.exec(sub) ?? [])]);
}

function dispatch(ctx: Ctx, req: Req): Answer {
  const path = req.path.replace(/\/+$/, '') || '/';
  if (path.startsWith('/api/application')) {
    const candidates = APPLICATION_ROUTES.filter(([, pattern]) => pattern.test(path));
    const match = candidates.find(([method]) => method === req.method);
    if (!match)
      throw routeMissing(
        req.method,
        path,
        candidates.map(([method]) => method),
      );
    return match[2](ctx, req, [...(match[1].exec(path) ?? [])]);
  }
  if (path === '/api/client' && req.method === 'GET') return listServers(ctx, req);
  if (path === '/api/client/account' && req.method === 'GET') return account(req);
  if (path.startsWith('/api/client/servers/')) return serverCall(ctx, req, path);
  throw routeMissing(req.method, path, []);
}

/** Cut a connection as a dead host does. */
export function cut(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

/** Answer one panel request. `count` records the call; returns when the answer is sent (or withheld). */
export async function handlePanel(
  ctx: Ctx,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  count: (key: string) => void,
): Promise<void> {
  if (ctx.faults.down) return cut(req);
  const raw = await readBody(req, MAX_BODY);
  if (ctx.faults.hang) return;
  if (ctx.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, ctx.faults.latencyMs));
  const method = req.method ?? 'GET';
  const path = url.pathname;
  const key = routeKey(method, path.replace(/\/+$/, '') || '/');
  count(key);
  if (!path.startsWith('/api/')) {
    return sendError(
      res,
      new PteroError(404, 'NotFoundHttpException', `The route ${path.replace(/^\//, '')} could not be found.`),
    );
  }
  const auth = findKey(ctx.state, req.headers.authorization);
  if (!auth) {
    const unauthenticated = new PteroError(401, 'AuthenticationException', 'Unauthenticated.');
    if (!expectsJson(req)) return sendNonJsonError(ctx, req, res, unauthenticated);
    return sendError(res, unauthenticated);
  }
  const application = path.startsWith('/api/application');
  const limit = application ? APPLICATION_LIMIT : CLIENT_LIMIT;
  const headers = rateHeaders(auth.key.identifier, limit);
  let answer: Answer | null = null;
  let failure: PteroError | null = null;
  try {
    if (application && !auth.user.rootAdmin) {
      throw forbidden('This account does not have permission to access the API.');
    }
    if (application && auth.key.type !== 2) {
      // A real panel lets a root admin's client key through here; the emulator is stricter.
      throw forbidden('This account does not have permission to access the API.');
    }
    if (!application && auth.key.type === 2) {
      throw forbidden(
        'You are attempting to use an application API key on an endpoint that requires a client API key.',
      );
    }
    if (takeCount(ctx.faults, 'rateLimitNext')) throw throttled(limit);
    if (raw === null) throw new PteroError(413, 'PostTooLargeException', UNEXPECTED);
    const body = parseInput(req, raw);
    if (!application && takeCount(ctx.faults, 'forbidNext')) throw forbidden();
    if (takeError(ctx.faults)) throw new PteroError(500, 'ErrorException', UNEXPECTED);
    answer = dispatch(ctx, {
      method,
      path: path.replace(/\/+$/, '') || '/',
      query: url.searchParams,
      body,
      raw,
      user: auth.user,
      key: auth.key,
      ip: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
    });
  } catch (error) {
    if (error instanceof PteroError) failure = error;
    else if (error instanceof WingsError) failure = fromWings(error);
    else {
      console.error('pterodactyl emulator: handler failed', error);
      failure = new PteroError(500, 'ErrorException', UNEXPECTED);
    }
  }
  if (takeLoss(ctx.faults, key)) return void req.socket.destroy();
  if (failure && !expectsJson(req)) return sendNonJsonError(ctx, req, res, failure);
  if (failure) return sendError(res, failure, failure.status === 429 ? {} : headers);
  sendAnswer(res, answer as Answer, headers);
}

/** Laravel's `expectsJson()`: an Accept header that wants JSON (or an XHR that is not PJAX). */
function expectsJson(req: IncomingMessage): boolean {
  const accept = String(req.headers.accept ?? '');
  if (/\/json|\+json/i.test(accept)) return true;
  return req.headers['x-requested-with'] === 'XMLHttpRequest' && req.headers['x-pjax'] === undefined;
}

/**
 * Errors for a client that did not ask for JSON, as Laravel renders them: unauthenticated is a
 * redirect to the login page, DisplayException and validation errors redirect back, any other
 * HTTP error is an HTML page with its status.
 */
function sendNonJsonError(ctx: Ctx, req: IncomingMessage, res: ServerResponse, failure: PteroError): void {
  const redirect = (location: string) => {
    res.writeHead(302, { location, 'content-type': 'text/html; charset=UTF-8', 'content-length': 0 });
    res.end();
  };
  if (failure.status === 401) {
    redirect(`${ctx.panelUrl}/auth/login`);
    return;
  }
  if (failure.status === 422 || DISPLAY_CODES.has(failure.code)) {
    redirect(typeof req.headers.referer === 'string' ? req.headers.referer : `${ctx.panelUrl}/`);
    return;
  }
  const html = `<!DOCTYPE html><html><head><title>${failure.status}</title></head><body>${failure.status}</body></html>`;
  res.writeHead(failure.status, {
    ...failure.headers,
    'content-type': 'text/html; charset=UTF-8',
    'content-length': Buffer.byteLength(html),
  });
  res.end(html);
}

/** Exceptions that are DisplayException subclasses (they redirect back instead of rendering). */
const DISPLAY_CODES = new Set([
  'DisplayException',
  'DaemonConnectionException',
  'TooManyBackupsException',
  'BackupLockedException',
  'TooManyDatabasesException',
  'NoSuitableDatabaseHostException',
  'ServiceLimitExceededException',
  'UserIsServerOwnerException',
  'ServerSubuserExistsException',
  'FileSizeTooLargeException',
  'NoViableNodeException',
  'NoAutoAllocationSpaceAvailableException',
]);
