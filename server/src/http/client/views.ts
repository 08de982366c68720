// How session-surface responses look: the success envelope and the shapes of resources.

import { type TObject, type TProperties, type TSchema, Type } from 'typebox';
import { isoWithOffset } from '../../core/time.ts';
import type { Account } from '../../db/tables.ts';

/** `{"success": true, "message": …, …payload}` (spec 4.0). */
export function okSchema<P extends TProperties>(payload: P): TObject {
  // Closed, so that in a union of answers the serializer picks the branch that fits exactly.
  return Type.Object(
    { success: Type.Literal(true), message: Type.String(), ...payload },
    { additionalProperties: false },
  );
}

/** The body of a session-surface mutation: its own fields plus the optional `csrf_token`. */
export function mutationBody<P extends TProperties>(properties: P, description?: string): TSchema {
  return Type.Object(
    { ...properties, csrf_token: Type.Optional(Type.String({ description: 'or send the X-CSRF-Token header' })) },
    { additionalProperties: false, ...(description ? { description } : {}) },
  );
}

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
