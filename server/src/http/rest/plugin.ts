// The token surface, /api/v1/… (spec 4.1, §5): `Authorization: Bearer svc_…` and nothing else
// (no query-string or body tokens, cookies ignored), the token's IPv4 allow-list, 600 requests
// a minute per token, and the scope each route declares next to its schema. Every route here
// must declare one; the OpenAPI document shows it as `x-required-scope`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { grants, type Principal, type RouteScope } from '../../core/tokens/token.service.ts';
import { clientIp, clientRateKey } from '../client/context.ts';
import { setRateLimitHeaders } from '../surfaces.ts';
import { accountRoutes } from './account.routes.ts';
import { billingRoutes } from './billing.routes.ts';
import { catalogRoutes } from './catalog.routes.ts';
import { instanceRoutes } from './instances.routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The token scope a token-surface route needs. */
    scope?: RouteScope;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('invalid_token');
  return request.principal;
}

export async function restSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    if (!route.config?.scope) throw new Error(`token-surface route ${route.method} ${route.url} declares no scope`);
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    route.schema = {
      ...schema,
      security: [{ bearer: [] }],
      'x-required-scope': route.config.scope,
    } as typeof route.schema;
  });

  app.addHook('onRequest', async (request, reply) => {
    const required = request.routeOptions.config.scope;
    if (!required) return;
    const ip = clientIp(request);
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    reply.header('WWW-Authenticate', 'Bearer realm="hostplane"');
    let principal: Principal;
    try {
      if (!match)
        throw new AppError('invalid_token', { message: 'Send the API token as `Authorization: Bearer svc_…`.' });
      principal = await deps.tokens.authenticate(match[1] as string, ip);
    } catch (error) {
      // Guessing tokens costs: bad tokens are limited per address.
      if (error instanceof AppError && error.code === 'invalid_token')
        await deps.limits.consume('token_auth_fail_ip', clientRateKey(request));
      throw error;
    }
    reply.removeHeader('WWW-Authenticate');
    request.principal = principal;
    setRateLimitHeaders(reply, await deps.limits.consume('token_requests', `token:${principal.tokenId}`));
    if (!grants(principal.scopes, required)) {
      throw new AppError('insufficient_scope', {
        message: `This route needs the "${required}" scope; the token has ${principal.scopes.join(', ')}.`,
        details: { required, granted: principal.scopes },
      });
    }
  });

  // No body at all reads as an empty object: actions that take none accept a bare POST, and
  // routes with required fields name them instead of saying "must be a JSON object".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) request.body = {};
  });

  await app.register(accountRoutes, { deps });
  await app.register(catalogRoutes, { deps });
  await app.register(instanceRoutes, { deps });
  await app.register(billingRoutes, { deps });
}
