// The request log of token calls (spec §1): every call of a token holder to a route behind token
// auth (token-auth.ts, whatever its prefix) is filed under the token it was made with, refused
// tokens included, and so are calls to unknown routes under a token-auth prefix. Calls with no
// token, or one we do not know, have no holder who could ever read the row: they go to the access
// log and an in-process counter only (security review F8). The rows themselves are buffered and
// written by core/tokens/request-log.ts.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import type { TokenHolder } from '../../core/tokens/token.service.ts';
import { bearerToken, clientIp } from '../request-context.ts';
import { surfaceOf } from '../surfaces.ts';
import { underTokenPrefix } from './token-auth.ts';

/** What an onResponse hook hands over: the route's options, read once (undefined for a 404). */
export type LogTokenCall = (
  request: FastifyRequest,
  reply: FastifyReply,
  options: FastifyRequest['routeOptions'] | undefined,
  done: () => void,
) => void;

/**
 * Decorate the root with the token-auth prefixes and answer the function its onResponse hook
 * calls for every request (a callback, not a hook of its own: the root's one hook reads the
 * route's options once for the metrics and the log).
 */
export function tokenCallLog(app: FastifyInstance, deps: Deps): LogTokenCall {
  app.decorate('tokenPrefixes', [] as string[]);

  const file = (
    request: FastifyRequest,
    reply: FastifyReply,
    path: string,
    route: string | undefined,
    holder: TokenHolder | null,
  ): void => {
    if (holder === null) {
      deps.requestLog.countAnonymous(reply.statusCode);
      return;
    }
    deps.requestLog.record({
      tokenId: holder.tokenId,
      accountId: holder.accountId,
      method: request.method,
      path,
      route: route ?? null,
      status: reply.statusCode,
      ip: clientIp(request),
      durationMs: reply.elapsedTime,
      requestId: request.id,
      at: Date.now(),
    });
  };

  return (request, reply, options, done) => {
    const route = options?.url;
    const path = request.url.split('?', 1)[0] ?? '';
    const logged =
      route === undefined
        ? surfaceOf(path, request.headers.authorization) === 'token' && underTokenPrefix(app, path)
        : options?.config.tokenAuth === true;
    if (!logged) return done();
    // Token auth found the holder, or that there is none: refused tokens (expired, revoked, wrong
    // address) go to the log of the token they are.
    const holder = request.tokenHolder;
    if (holder !== undefined) {
      file(request, reply, path, route, holder);
      return done();
    }
    // Token auth did not look (unknown routes: tickets, DNS, typos; or its lookup failed): look
    // now. Unknown tokens are remembered for a few seconds, so a flood of them costs one lookup each.
    const token = bearerToken(request.headers.authorization);
    if (token === null) {
      file(request, reply, path, route, null);
      return done();
    }
    deps.tokens
      .authenticate(token, clientIp(request))
      .then(
        (checked) => ('principal' in checked ? checked.principal : checked.token),
        () => null,
      )
      .then((found) => file(request, reply, path, route, found))
      .catch((error) => request.log.error({ err: error }, 'call not logged'))
      .finally(() => done());
  };
}
