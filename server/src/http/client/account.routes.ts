// Spec 4.4: GET/POST /api/v1/client/account/ — the profile, renaming, password change; and
// (CONTRACT §11) `{action: "delete", password}` / `{action: "cancel_deletion"}` (core/privacy/).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { profileProblems } from '../../core/accounts/rules.ts';
import { csrfTokenFor } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset, istTime } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { AccountSchema, accountView } from '../views/account.view.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['account'];

/** The field problems of a profile change; an action's body has its own (checked by the handler). */
const fieldRules = (body: Record<string, unknown>) => (body.action === undefined ? profileProblems(body) : {});

/** An action's body holds the action (and, to delete, the password), nothing of a profile change. */
function refuseOtherFields(action: string, body: Record<string, unknown>): void {
  const others = action === 'delete' ? ['name', 'current_password'] : ['name', 'current_password', 'password'];
  const given = others.filter((field) => body[field] !== undefined);
  if (given.length > 0) {
    throw AppError.fields(Object.fromEntries(given.map((field) => [field, `is not taken with action ${action}`])));
  }
}

const Deletion = Type.Object({
  scheduled_for: Type.String({ format: 'date-time', description: 'when the account will be erased' }),
});

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
      config: { fieldRules },
      schema: {
        operationId: 'updateAccount',
        tags,
        summary: 'Rename, change the password (needs current_password; ends the other sessions), or delete the account',
        description:
          '`{name}` and/or `{current_password, password}` change the profile. `{action:"delete", password}` (the ' +
          'current password; a wrong one is 422 errors.password and counts toward the sign-in lockout) schedules ' +
          'the erasure of the account 7 days later (202 `{deletion: {scheduled_for}}`, and a mail saying how to ' +
          'cancel), or answers 409 `deletion_blocked` with `details.reasons` `[{code, message, items}]` (codes ' +
          '`services`, `unpaid_orders`, `pending_deposits`, `wallet_balance`) while something must be settled ' +
          'first. Asking again keeps the date. `{action:"cancel_deletion"}` cancels it; so does signing in.',
        body: mutationBody({
          action: Type.Optional(Type.Union([Type.Literal('delete'), Type.Literal('cancel_deletion')])),
          name: Type.Optional(Type.String({ maxLength: 512 })),
          current_password: Type.Optional(Type.String({ maxLength: 1024 })),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
        response: {
          200: Type.Union([
            okSchema({ account: AccountSchema, sessions_ended: Type.Integer() }),
            okSchema({ account: AccountSchema, deletion: Type.Null() }),
          ]),
          202: okSchema({ account: AccountSchema, deletion: Deletion }),
          ...sessionErrors(400, 401, 403, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      await limit(deps, reply, [['account_update', `account:${session.account.id}`]]);
      const body = request.body;
      if (body.action !== undefined) refuseOtherFields(body.action, body);
      if (body.action === 'delete') {
        const scheduledFor = await deps.privacy.deletion.request(
          session.account.id,
          body.password ?? '',
          whoOf(request),
        );
        reply.code(202);
        return {
          success: true as const,
          message: `Your account will be deleted on ${istTime(scheduledFor)}. Sign in or cancel before then to keep it.`,
          account: accountView(await deps.accounts.get(session.account.id)),
          deletion: { scheduled_for: isoWithOffset(scheduledFor) },
        };
      }
      if (body.action === 'cancel_deletion') {
        const cancelled = await deps.privacy.deletion.cancel(session.account.id, whoOf(request));
        return {
          success: true as const,
          message: cancelled ? 'The deletion of your account is cancelled.' : 'No deletion was scheduled.',
          account: accountView(await deps.accounts.get(session.account.id)),
          deletion: null,
        };
      }
      const { account, endedSessions } = await deps.accounts.update(
        session.account.id,
        body,
        session.idHash,
        whoOf(request),
      );
      return {
        success: true as const,
        message:
          endedSessions > 0
            ? `Account updated; ${counted(endedSessions, 'other session')} signed out.`
            : 'Account updated.',
        account: accountView(account),
        sessions_ended: endedSessions,
      };
    },
  );
}
