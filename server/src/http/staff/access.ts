// The staff surface's access plumbing (CONTRACT §14), in the surface's scope: the STAFFSESSID
// cookie resolved to a session, and ONE hook that enforces each route's row of the route table
// (./route-table.ts) before anything about the request's body is looked at:
//   no session → 401 unauthenticated; a session whose second factor is still to come on a route
//   that needs a full one → 403 second_factor_required; a role below the route's → 403
//   forbidden_role.
// Then, once the body is parsed: the CSRF token on every POST (this session's own token, derived
// under a purpose of its own, so a customer's token never fits) and no cross-site request.
// onRoute: each route must have its row (refused at boot otherwise); its OpenAPI security,
// error statuses and required role are filled in from it.

import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { roleAtLeast } from '../../core/staff/roles.ts';
import {
  isStaffSessionId,
  type LoadedStaffSession,
  loadStaffSession,
  STAFF_SESSION_COOKIE,
  staffCsrfMatches,
} from '../../core/staff/staff-sessions.ts';
import { sessionErrors } from '../schemas.ts';
import { STAFF_ROUTES, type StaffRouteSpec, staffRouteOf } from './route-table.ts';

export interface StaffRequestState {
  /** The cookie's session id (possibly anonymous: no row), or null without a usable cookie. */
  id: string | null;
  /** The live session behind it, in whatever stage, or null. */
  session: LoadedStaffSession | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    staff: StaffRequestState;
  }
  interface FastifyContextConfig {
    /** The route's row of the staff route table, attached at registration (./route-table.ts). */
    staffRoute?: StaffRouteSpec;
  }
}

function presentedCsrf(body: unknown, header: string | string[] | undefined): string | undefined {
  if (typeof header === 'string' && header !== '') return header;
  if (body !== null && typeof body === 'object' && 'csrf_token' in body) {
    const value = (body as { csrf_token: unknown }).csrf_token;
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Who may call a route of this row, for the OpenAPI document. */
function describeAccess(spec: StaffRouteSpec): string {
  if (spec.access === 'public') return 'No staff session needed.';
  if (spec.access === 'session') return 'Any staff session, also one whose second factor is still to come.';
  return `Staff role: ${spec.access} or above (support ⊂ billing ⊂ admin); 403 forbidden_role otherwise.`;
}

/** The refusal a request gets from a route's row, or null when it may go on. */
export function accessRefusal(spec: StaffRouteSpec, session: LoadedStaffSession | null): AppError | null {
  if (spec.access === 'public') return null;
  if (session === null) return new AppError('unauthenticated');
  if (spec.access === 'session') return null;
  if (session.stage !== 'full') return new AppError('second_factor_required');
  if (!roleAtLeast(session.staff.role, spec.access)) {
    return new AppError('forbidden_role', { details: { required: spec.access, role: session.staff.role } });
  }
  return null;
}

function registerRouteChecks(app: FastifyInstance): void {
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat().map(String);
    const spec = staffRouteOf(methods[0] as string, route.url);
    if (spec === undefined) {
      throw new Error(
        `staff route ${methods.join(',')} ${route.url} is not in STAFF_ROUTES (http/staff/route-table.ts)`,
      );
    }
    if (spec.mutates && spec.method === 'GET') throw new Error(`staff route GET ${spec.path} cannot mutate`);
    seen.add(`${spec.method} ${spec.path}`);
    route.config = { ...route.config, staffRoute: spec };
    const schema = (route.schema ?? {}) as Record<string, unknown> & { response?: Record<string, unknown> };
    const post = spec.method === 'POST';
    const security =
      spec.access === 'public' && !post ? [] : [post ? { staffSession: [], staffCsrf: [] } : { staffSession: [] }];
    const statuses = [...(spec.access === 'public' ? [] : [401]), ...(spec.access === 'public' && !post ? [] : [403])];
    const refusals = sessionErrors(...statuses);
    const response = { ...schema.response };
    for (const status of statuses) if (!(status in response)) response[status] = refusals[status];
    const description = [schema.description, describeAccess(spec)].filter(Boolean).join('\n\n');
    route.schema = { ...schema, security, response, description } as typeof route.schema;
  });
  app.addHook('onReady', async () => {
    for (const row of STAFF_ROUTES) {
      if (!seen.has(`${row.method} ${row.path}`))
        throw new Error(`STAFF_ROUTES has ${row.method} ${row.path}, no route`);
    }
  });
}

async function staffAccessPlugin(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(cookie);
  app.decorateRequest('staff', null as unknown as StaffRequestState);
  registerRouteChecks(app);

  app.addHook('onRequest', async (request) => {
    const raw = request.cookies[STAFF_SESSION_COOKIE];
    const id = isStaffSessionId(raw) ? raw : null;
    const session = id === null ? null : await loadStaffSession(deps.database.db, deps.clock, id);
    request.staff = { id, session };
    const spec = request.routeOptions.config.staffRoute;
    // An unknown path under the prefix has no row: the not-found answer follows.
    if (spec === undefined) return;
    const refusal = accessRefusal(spec, session);
    if (refusal !== null) throw refusal;
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    if (request.headers['sec-fetch-site'] === 'cross-site') {
      throw new AppError('csrf_failed', { message: 'Cross-site requests are refused.' });
    }
    const id = request.staff.id;
    const presented = presentedCsrf(request.body, request.headers['x-csrf-token']);
    if (id === null || !staffCsrfMatches(deps.secretKey, id, presented)) throw new AppError('csrf_failed');
  });
}

// Not encapsulated: the hooks apply to the scope that registers it (the staff surface).
(staffAccessPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export const staffAccess: FastifyPluginAsync<{ deps: Deps }> = staffAccessPlugin;
