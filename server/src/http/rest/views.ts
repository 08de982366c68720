// The token surface's success envelope, `{"ok": true, …payload}` (spec 4.0).

import { type TProperties, Type } from 'typebox';

export function okSchema<P extends TProperties>(payload: P) {
  // Closed, so that in a union of answers the serializer picks the branch that fits exactly.
  return Type.Object({ ok: Type.Literal(true), ...payload }, { additionalProperties: false });
}

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });
