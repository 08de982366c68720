// API token management on the session surface (CONTRACT §4): GET /api/v1/client/tokens/ lists
// (never the secret), `?id=&action=logs` a token's recent calls; POST {name, scopes, expires_at?,
// allowed_cidrs?} creates one and shows its secret once; POST {action: "revoke", id} revokes.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { checkNewToken, MAX_CIDRS_PER_TOKEN, MAX_TOKENS_PER_ACCOUNT, SCOPES } from '../../core/tokens/token.service.ts';
import { counted } from '../../core/words.ts';
import type { ApiToken } from '../../db/tables.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['tokens'];
const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const TokenSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  hint: Type.String({ description: 'the first characters, to recognise it' }),
  scopes: Type.Array(Type.String()),
  allowed_cidrs: Type.Array(Type.String()),
  expires_at: Time,
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Time,
  last_used_ip: Type.Union([Type.String(), Type.Null()]),
  revoked_at: Time,
  status: Type.String({ description: 'active, expired or revoked' }),
});

function view(t: ApiToken, now: Date) {
  return {
    id: t.id,
    name: t.name,
    hint: `${t.hint}…`,
    scopes: t.scopes,
    allowed_cidrs: t.allowed_cidrs,
    expires_at: t.expires_at ? isoWithOffset(t.expires_at) : null,
    created_at: isoWithOffset(t.created_at),
    last_used_at: t.last_used_at ? isoWithOffset(t.last_used_at) : null,
    last_used_ip: t.last_used_ip,
    revoked_at: t.revoked_at ? isoWithOffset(t.revoked_at) : null,
    status: t.revoked_at ? 'revoked' : t.expires_at && t.expires_at <= now ? 'expired' : 'active',
  };
}

/** Calls shown by ?action=logs without ?limit= (validation fills it in; the type cannot say so). */
const LOG_LIMIT_DEFAULT = 100;

export async function tokenRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/tokens/',
    {
      schema: {
        operationId: 'listTokens',
        tags,
        summary: "Your API tokens (never their secrets); ?id=&action=logs a token's latest calls",
        querystring: Type.Object(
          {
            id: Type.Optional(Type.Integer({ minimum: 1 })),
            action: Type.Optional(Type.Literal('logs')),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: LOG_LIMIT_DEFAULT })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({ tokens: Type.Array(TokenSchema) }),
            okSchema({ token: TokenSchema }),
            okSchema({
              token: TokenSchema,
              calls: Type.Array(
                Type.Object({
                  method: Type.String(),
                  path: Type.String(),
                  status: Type.Integer(),
                  ip: Type.Union([Type.String(), Type.Null()]),
                  duration_ms: Type.Number(),
                  at: Type.String(),
                }),
              ),
            }),
          ]),
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const q = request.query;
      const now = deps.clock();
      if (q.id === undefined) {
        if (q.action) throw AppError.fields({ id: 'is required with action' });
        return {
          success: true as const,
          message: 'Tokens loaded.',
          tokens: (await deps.tokens.list(session.account.id)).map((t) => view(t, now)),
        };
      }
      const token = await deps.tokens.get(session.account.id, q.id);
      if (q.action !== 'logs') return { success: true as const, message: 'Token loaded.', token: view(token, now) };
      await deps.requestLog.flush();
      const calls = await deps.tokens.logs(session.account.id, q.id, q.limit ?? LOG_LIMIT_DEFAULT);
      return {
        success: true as const,
        message: `${counted(calls.length, 'call')}.`,
        token: view(token, now),
        calls: calls.map((c) => ({
          method: c.method,
          path: c.path,
          status: c.status,
          ip: c.ip,
          duration_ms: c.duration_ms,
          at: isoWithOffset(c.created_at),
        })),
      };
    },
  );

  app.post(
    '/tokens/',
    {
      config: {
        fieldRules: (body) => (body.action === 'revoke' ? {} : checkNewToken(body, deps.clock()).fields),
      },
      schema: {
        operationId: 'createOrRevokeToken',
        tags,
        summary: 'Create a token (the secret is shown once), or {action: "revoke", id}',
        description:
          `scopes: ${SCOPES.join(', ')}. expires_at: optional ISO 8601, within two years. allowed_cidrs: optional, ` +
          `up to ${MAX_CIDRS_PER_TOKEN} IPv4 addresses or CIDRs. At most ${MAX_TOKENS_PER_ACCOUNT} unrevoked tokens per account. ` +
          'Revocation takes effect on the next request.',
        body: mutationBody({
          action: Type.Optional(Type.Union([Type.Literal('create'), Type.Literal('revoke')])),
          id: Type.Optional(Type.Integer({ minimum: 1 })),
          name: Type.Optional(Type.String({ maxLength: 200 })),
          scopes: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
          expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
          allowed_cidrs: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
        }),
        response: {
          200: okSchema({ token: TokenSchema }),
          201: okSchema({ token: TokenSchema, secret: Type.String({ description: 'svc_…, shown this once' }) }),
          ...sessionErrors(401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      if (body.action === 'revoke') {
        if (body.id === undefined) throw AppError.fields({ id: 'is required' });
        const token = await deps.tokens.revoke(session.account.id, body.id, whoOf(request));
        return { success: true as const, message: `Token "${token.name}" revoked.`, token: view(token, deps.clock()) };
      }
      const { token, secret } = await deps.tokens.create(
        session.account.id,
        {
          name: body.name,
          scopes: body.scopes,
          expires_at: body.expires_at,
          allowed_cidrs: body.allowed_cidrs,
        },
        whoOf(request),
      );
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send({
          success: true as const,
          message: 'Token created. Copy the secret now: it is not shown again.',
          token: view(token, deps.clock()),
          secret,
        });
    },
  );
}
