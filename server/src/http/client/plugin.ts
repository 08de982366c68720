// The session surface, /api/v1/client/…: cookie sessions (SVCSESSID) and CSRF (spec §5).
// onRequest: resolve the cookie to a session (or an anonymous id). preValidation (the body is
// parsed, not yet validated): refuse anonymous callers of `client` routes, then check CSRF on
// mutations, so a forged request is refused before anything about its body is looked at.

import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { csrfMatches, isSessionId, loadSession, SESSION_COOKIE } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { accountRoutes } from './account.routes.ts';
import { authRoutes } from './auth.routes.ts';
import type { ClientSession } from './context.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function presentedCsrf(body: unknown, header: string | string[] | undefined): string | undefined {
  if (typeof header === 'string' && header !== '') return header;
  if (body !== null && typeof body === 'object' && 'csrf_token' in body) {
    const value = (body as { csrf_token: unknown }).csrf_token;
    if (typeof value === 'string') return value;
  }
  return undefined;
}

export async function clientSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(cookie);
  app.decorateRequest('clientSession', null as unknown as ClientSession);

  app.addHook('onRequest', async (request) => {
    const raw = request.cookies[SESSION_COOKIE];
    const id = isSessionId(raw) ? raw : null;
    const loaded = id === null ? null : await loadSession(deps.database.db, deps.clock, id);
    request.clientSession = { id, loaded };
  });

  app.addHook('preValidation', async (request) => {
    const config = request.routeOptions.config;
    const access = config.access ?? 'client';
    if (access === 'client' && request.clientSession.loaded === null) throw new AppError('unauthenticated');
    if (SAFE_METHODS.has(request.method)) return;
    // Fetch Metadata: a browser tells us when a request was started by another site.
    if (request.headers['sec-fetch-site'] === 'cross-site') {
      throw new AppError('csrf_failed', { message: 'Cross-site requests are refused.' });
    }
    const needsCsrf = config.csrf ?? access === 'client';
    if (!needsCsrf) return;
    const id = request.clientSession.id;
    if (id === null || !csrfMatches(deps.secretKey, id, presentedCsrf(request.body, request.headers['x-csrf-token']))) {
      throw new AppError('csrf_failed');
    }
  });

  await app.register(authRoutes, { deps, prefix: '/auth' });
  await app.register(accountRoutes, { deps });
}
