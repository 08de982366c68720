// How an account looks, on every surface.

import { Type } from 'typebox';
import { isoWithOffset } from '../../core/time.ts';
import type { Account } from '../../db/tables.ts';

export const AccountSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  username: Type.String(),
  email_verified: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  deletion_scheduled_for: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the account will be erased, if its owner asked for that (signing in cancels it); else null',
  }),
});

export function accountView(
  account: Pick<
    Account,
    'id' | 'name' | 'email' | 'username' | 'email_verified_at' | 'created_at' | 'deletion_scheduled_for'
  >,
) {
  return {
    id: account.id,
    name: account.name,
    email: account.email,
    username: account.username,
    email_verified: account.email_verified_at !== null,
    created_at: isoWithOffset(account.created_at),
    deletion_scheduled_for: account.deletion_scheduled_for ? isoWithOffset(account.deletion_scheduled_for) : null,
  };
}
