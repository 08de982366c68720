// Spec 4.4: GET/POST /api/v1/client/account/ — the profile, renaming, password change.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { profileProblems } from '../../core/accounts/rules.ts';
import { csrfTokenFor } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { AccountSchema, accountView } from '../views/account.view.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['account'];

export async function accountRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/account/',
    {
      schema: {
        operationId: 'getAccount',
        tags,
        summary: 'The signed-in account and the session CSRF token',
        response: { 200: okSchema({ account: AccountSchema, csrf_token: Type.String() }), ...sessionErrors(401) },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const account = await deps.accounts.get(session.account.id);
      return {
        success: true as const,
        message: 'Account loaded.',
        account: accountView(account),
        csrf_token: csrfTokenFor(deps.secretKey, request.clientSession.id as string),
      };
    },
  );

  app.post(
    '/account/',
    {
      config: { fieldRules: profileProblems },
      schema: {
        operationId: 'updateAccount',
        tags,
        summary: 'Rename, or change the password (needs current_password; ends the other sessions)',
        body: mutationBody({
          name: Type.Optional(Type.String({ maxLength: 512 })),
          current_password: Type.Optional(Type.String({ maxLength: 1024 })),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
        response: {
          200: okSchema({ account: AccountSchema, sessions_ended: Type.Integer() }),
          ...sessionErrors(400, 401, 403, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      await limit(deps, reply, [['account_update', `account:${session.account.id}`]]);
      const body = request.body;
      const { account, endedSessions } = await deps.accounts.update(
        session.account.id,
        body,
        session.idHash,
        whoOf(request),
      );
      return {
        success: true as const,
        message:
          endedSessions > 0 ? `Account updated; ${endedSessions} other session(s) signed out.` : 'Account updated.',
        account: accountView(account),
        sessions_ended: endedSessions,
      };
    },
  );
}
