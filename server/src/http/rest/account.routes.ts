// GET /api/v1/me (read): the account, its wallet and the calling token's scopes.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { tokenErrors } from '../schemas.ts';
import { AccountSchema, accountView } from '../views/account.view.ts';
import { okSchema } from './envelopes.ts';

export async function accountRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getMe',
        tags: ['token: account'],
        summary: 'The account, its wallet and this token',
        response: {
          200: okSchema({
            account: AccountSchema,
            wallet: Type.Object({ balance: Type.String(), currency: Type.Literal('INR') }),
            token: Type.Object({
              id: Type.Integer(),
              name: Type.String(),
              scopes: Type.Array(Type.String()),
              expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
            }),
          }),
          ...tokenErrors(),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const [account, balance] = await Promise.all([
        deps.accounts.get(principal.accountId),
        deps.wallet.balance(principal.accountId),
      ]);
      return {
        ok: true as const,
        account: accountView(account),
        wallet: { balance: formatPaise(balance), currency: 'INR' as const },
        token: {
          id: principal.tokenId,
          name: principal.name,
          scopes: principal.scopes,
          expires_at: principal.expiresAt ? isoWithOffset(principal.expiresAt) : null,
        },
      };
    },
  );
}
