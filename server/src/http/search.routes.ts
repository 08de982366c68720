// Search (spec 4.13, CONTRACT §8): `GET /api/v1/search/?q=` on both surfaces. The same path is
// two routes told apart by the `auth` constraint: with `Authorization: Bearer` it is the token
// surface (a token with `read`, its request log and limits, the token envelope), otherwise the
// session surface (cookie session, session envelope). Both answer
// `{q, kind, took_ms, groups: [{type, label, total, items: [{id, title, url}]}]}` and count
// 30 searches per 10 seconds per session or token.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { parseSearch, type SearchType, typeFilterOf } from '../core/search/query.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, type SearchScope } from '../core/search/search.service.ts';
import { limit, signedIn } from './client/context.ts';
import { useFastSerializer } from './plugins/serializer.ts';
import { sessionAuth } from './plugins/session-auth.ts';
import { principalOf, tokenAuth } from './plugins/token-auth.ts';
import { isBearer } from './request-context.ts';
import { sessionErrors, tokenErrors } from './schemas.ts';

/** Routes constrained `{auth: 'bearer' | 'session'}` match by the Authorization header. */
export const authConstraint = {
  name: 'auth',
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (value: string) => (handlers.get(value) ?? null) as never,
      set: (value: string, handler: unknown) => void handlers.set(value, handler),
    };
  },
  deriveConstraint: (request: { headers: Record<string, string | string[] | undefined> }) =>
    isBearer(request.headers.authorization) ? 'bearer' : 'session',
  // Routes without the constraint (all the others) still match every request.
  mustMatchWhenDerived: false,
};

const Query = Type.Object(
  {
    q: Type.String({
      maxLength: 4000,
      description: 'the query: free text and operators type: status: loc: node: user:',
    }),
    type: Type.Optional(
      Type.String({ maxLength: 32, description: 'only this group (service, ip, order, transaction, deposit)' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `items per group (default ${DEFAULT_LIMIT})` }),
    ),
  },
  { additionalProperties: false },
);

const Group = Type.Object({
  type: Type.String(),
  label: Type.String(),
  total: Type.Integer(),
  items: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), url: Type.String() })),
});
const Result = { q: Type.String(), kind: Type.String(), took_ms: Type.Integer(), groups: Type.Array(Group) };
const SessionResult = Type.Object({ success: Type.Literal(true), message: Type.String(), ...Result });
const TokenResult = Type.Object({ ok: Type.Literal(true), ...Result });

/**
 * The one documented operation answers in the envelope of the surface the credentials chose
 * (OpenAPI has one operation per path and method): each status lists the envelopes it can take.
 */
function eitherEnvelope(session: Record<number, TSchema>, token: Record<number, TSchema>): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of new Set([...Object.keys(session), ...Object.keys(token)].map(Number))) {
    const branches = [session[status], token[status]].filter((s): s is TSchema => s !== undefined);
    const description = (branches[0] as { description?: string }).description;
    out[status] = branches.length === 1 ? (branches[0] as TSchema) : Type.Union(branches, { description });
  }
  return out;
}

const DESCRIPTION =
  'Shapes of q (the answer names it in `kind`): IPv4/IPv6 addresses, prefixes and CIDRs (containment), MAC ' +
  'addresses, e-mail addresses, pay_ and order_ identifiers, #<number> (a service, order, transaction or deposit ' +
  'id), domains, plain text (labels, hostnames, domains, plan names, notes, references; substring and fuzzy, case ' +
  'and accent insensitive; a space stands for any one space or punctuation mark). Operators, in any order: type:, status:, loc:, node:, user: (a client names only ' +
  'itself); repeated ones OR, different ones AND; values may be quoted. An unknown operator is 422. Groups: ' +
  'service, ip, order, transaction, deposit, each with its exact total. 30 searches per 10 seconds per session or token.';

/** `key`: the session's search limit to count (token routes count theirs in token auth: tokenLimits). */
async function run(deps: Deps, request: FastifyRequest, scope: SearchScope, key: string | null, reply: FastifyReply) {
  if (key !== null) await limit(deps, reply, [['search', key]]);
  const started = performance.now();
  const q = request.query as { q: string; type?: string; limit?: number };
  let type: SearchType | null = null;
  if (q.type !== undefined) {
    const filter = typeFilterOf(q.type);
    if (!filter || !('type' in filter)) {
      throw AppError.fields({ type: 'must be service, ip, order, transaction or deposit' });
    }
    type = filter.type;
  }
  const parsed = parseSearch(q.q);
  const groups = await deps.search.search(parsed, scope, { ...(q.limit ? { limit: q.limit } : {}), type });
  return { q: parsed.q, kind: parsed.kind, took_ms: Math.round(performance.now() - started), groups };
}

export async function searchRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  useFastSerializer(app);
  await app.register(async (scope) => {
    await scope.register(sessionAuth, { deps });
    scope.withTypeProvider<TypeBoxTypeProvider>().get(
      '/',
      {
        // Documented (and served) as /api/v1/search/, like the session surface's paths (CONTRACT §8).
        prefixTrailingSlash: 'slash',
        constraints: { auth: 'session' } as never,
        config: { alsoBearer: true },
        schema: {
          tags: ['search'],
          operationId: 'search',
          summary: 'Search your services, IP addresses, orders, wallet transactions and deposits',
          description: `${DESCRIPTION} With a session cookie: the session envelope; with \`Authorization: Bearer\` and a token holding \`read\`: the token envelope.`,
          querystring: Query,
          response: {
            200: Type.Union([SessionResult, TokenResult], {
              description: 'The session envelope with a session cookie, the token envelope with a bearer token',
            }),
            ...eitherEnvelope(sessionErrors(401, 422, 429), tokenErrors(422, 429)),
          },
        },
      },
      async (request, reply) => {
        const session = signedIn(request);
        // Keyed by the session id's hash, as the sessions table keeps it: a limit store (a shared
        // Redis, the rate_limits table) must never hold a cookie value (T3-M6).
        const result = await run(deps, request, { accountId: session.account.id }, `session:${session.idHash}`, reply);
        return {
          success: true as const,
          message: `${result.groups.reduce((n, g) => n + g.total, 0)} found.`,
          ...result,
        };
      },
    );
  });
  await app.register(async (scope) => {
    await scope.register(tokenAuth, { deps });
    scope.withTypeProvider<TypeBoxTypeProvider>().get(
      '/',
      {
        prefixTrailingSlash: 'slash',
        constraints: { auth: 'bearer' } as never,
        config: { scope: 'read', tokenLimits: ['search'] },
        schema: {
          // The same path as the session route: documented there (one operation per path and method).
          hide: true,
          operationId: 'searchWithToken',
          querystring: Query,
          response: { 200: TokenResult, ...tokenErrors(422, 429) },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await run(deps, request, { accountId: principal.accountId }, null, reply);
        return { ok: true as const, ...result };
      },
    );
  });
}
