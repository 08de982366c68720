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
});

export function accountView(
  account: Pick<Account, 'id' | 'name' | 'email' | 'username' | 'email_verified_at' | 'created_at'>,
) {
  return {
    id: account.id,
    name: account.name,
    email: account.email,
    username: account.username,
    email_verified: account.email_verified_at !== null,
    created_at: isoWithOffset(account.created_at),
  };
}
