// Bearer-token auth for a token surface (spec 4.1, §5), as a plugin any prefix registers in its
// own scope: `Authorization: Bearer svc_…` and nothing else (no query-string or body tokens,
// cookies ignored), the token's IPv4 allow-list, 600 requests a minute per token, and the scope
// each route declares next to its schema. Every route of the scope must declare one (refused at
// boot otherwise); the OpenAPI document shows it as `x-required-scope` with `bearer` security.
// Routes of the scope are marked `tokenAuth` and each call's token holder is kept on the request,
// which the request log (request-log.ts) files the call under; the scope's prefix is remembered
// so that calls to unknown routes under it are logged too.

import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import type { LimitName, LimitState } from '../../core/ratelimit/rate-limits.ts';
import { grants, type Principal, type RouteScope, type TokenHolder } from '../../core/tokens/token.service.ts';
import { bearerToken, clientIp, clientRateKey } from '../request-context.ts';
import { setRateLimitHeaders } from '../surfaces.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /**
     * Whose token the call was made with, once token auth has looked: the principal's, or the
     * refused token's holder; null when the call carried no token we know. Undefined while token
     * auth has not looked (a route it does not guard, or its lookup failed).
     */
    tokenHolder: TokenHolder | null | undefined;
  }
  interface FastifyContextConfig {
    /** The token scope a token-surface route needs. */
    scope?: RouteScope;
    /** Set by the token-auth plugin on every route it guards: the call goes to the request log. */
    tokenAuth?: boolean;
    /**
     * Limits this route counts per token besides the 600 a minute (search: 30 per 10 s), counted
     * with it at once (one round trip to the limit store, not one each) once the scope is granted.
     */
    tokenLimits?: LimitName[];
  }
  interface FastifyInstance {
    /** The prefixes under which token auth is registered (shared by the whole app; see request-log.ts). */
    tokenPrefixes: string[];
  }
}

/** The authenticated token of a route behind token auth. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('invalid_token');
  return request.principal;
}

/** Whether `path` lies under a prefix where token auth is registered. */
export function underTokenPrefix(app: FastifyInstance, path: string): boolean {
  return app.tokenPrefixes.some((prefix) => path.startsWith(`${prefix}/`));
}

async function tokenAuthPlugin(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  if (!app.hasDecorator('tokenPrefixes')) throw new Error('token auth needs the root decorated with tokenPrefixes');
  app.tokenPrefixes.push(app.prefix);
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null);
  if (!app.hasRequestDecorator('tokenHolder')) app.decorateRequest('tokenHolder', undefined);

  app.addHook('onRoute', (route) => {
    if (!route.config?.scope) throw new Error(`token-surface route ${route.method} ${route.url} declares no scope`);
    route.config = { ...route.config, tokenAuth: true };
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    route.schema = {
      ...schema,
      security: [{ bearer: [] }],
      'x-required-scope': route.config.scope,
    } as typeof route.schema;
  });

  app.addHook('onRequest', async (request, reply) => {
    // Fastify builds the route's options on each read: once here.
    const config = request.routeOptions.config;
    const required = config.scope;
    if (!required) return;
    const principal = await authenticated(deps, request, reply);
    request.principal = principal;
    const key = `token:${principal.tokenId}`;
    const granted = grants(principal.scopes, required);
    const extra = granted ? config.tokenLimits : undefined;
    setRateLimitHeaders(
      reply,
      extra ? await consumeTogether(deps, key, extra) : await deps.limits.consume('token_requests', key),
    );
    if (!granted) {
      throw new AppError('insufficient_scope', {
        message: `This route needs the "${required}" scope; the token has ${principal.scopes.join(', ')}.`,
        details: { required, granted: principal.scopes },
      });
    }
  });
}

/**
 * The principal of the request's bearer token, with its holder kept for the request log. A refused
 * token answers its auth error, naming the scheme; an invalid one (malformed, unknown, revoked)
 * counts against the caller's address, since guessing tokens must cost.
 */
async function authenticated(deps: Deps, request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
  const token = bearerToken(request.headers.authorization);
  let refused: unknown;
  try {
    if (token === null) {
      request.tokenHolder = null;
      refused = new AppError('invalid_token', { message: 'Send the API token as `Authorization: Bearer svc_…`.' });
    } else {
      const checked = await deps.tokens.authenticate(token, clientIp(request));
      if ('principal' in checked) {
        request.tokenHolder = checked.principal;
        return checked.principal;
      }
      request.tokenHolder = checked.token;
      refused = checked.refused;
    }
  } catch (error) {
    // The lookup failed (the database away): the request log looks again when the call is over.
    refused = error;
  }
  // On refusals only: set on every request and removed from those that pass, it was measurable.
  reply.header('WWW-Authenticate', 'Bearer realm="hostplane"');
  if (refused instanceof AppError && refused.code === 'invalid_token')
    await deps.limits.consume('token_auth_fail_ip', clientRateKey(request));
  throw refused;
}

/**
 * Count the general per-token limit and a route's own (`tokenLimits`) at once: one round trip to
 * the limit store. A request the general limit refuses is not one of the route's own, so what
 * those counted is given back. Answers the tightest state, for the RateLimit headers.
 */
async function consumeTogether(deps: Deps, key: string, extra: LimitName[]): Promise<LimitState> {
  const names: LimitName[] = ['token_requests', ...extra];
  const counted = await Promise.allSettled(names.map((name) => deps.limits.consume(name, key)));
  const [general] = counted;
  if (general?.status === 'rejected') {
    await Promise.all(
      names.flatMap((name, i) => (i > 0 && counted[i]?.status === 'fulfilled' ? [deps.limits.refund(name, key)] : [])),
    );
    throw general.reason;
  }
  let tightest: LimitState | null = null;
  for (const c of counted) {
    if (c.status === 'rejected') throw c.reason;
    if (tightest === null || c.value.remaining < tightest.remaining) tightest = c.value;
  }
  return tightest as LimitState;
}

// Not encapsulated (what fastify-plugin does): the hooks apply to the scope that registers it.
(tokenAuthPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

/** Register in a surface's scope, before its routes: `await app.register(tokenAuth, { deps })`. */
export const tokenAuth: FastifyPluginAsync<{ deps: Deps }> = tokenAuthPlugin;
