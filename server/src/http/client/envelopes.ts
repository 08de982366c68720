// How session-surface responses are wrapped: the success envelope and a mutation's body (with its
// CSRF token). The resources inside them are http/views/.

import { type TProperties, Type } from 'typebox';

/** `{"success": true, "message": …, …payload}` (spec 4.0). */
export function okSchema<P extends TProperties>(payload: P) {
  // Closed, so that in a union of answers the serializer picks the branch that fits exactly.
  return Type.Object(
    { success: Type.Literal(true), message: Type.String(), ...payload },
    { additionalProperties: false },
  );
}

/** The body of a session-surface mutation: its own fields plus the optional `csrf_token`. */
export function mutationBody<P extends TProperties>(properties: P, description?: string) {
  return Type.Object(
    { ...properties, csrf_token: Type.Optional(Type.String({ description: 'or send the X-CSRF-Token header' })) },
    { additionalProperties: false, ...(description ? { description } : {}) },
  );
}
