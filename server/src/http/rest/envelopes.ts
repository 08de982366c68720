// The token surface's success envelope, `{"ok": true, …payload}` (spec 4.0), and the id and page
// parameters and pagination block every token-surface list shares. Resources are http/views/.

import { type TProperties, Type } from 'typebox';

export function okSchema<P extends TProperties>(payload: P) {
  // Closed, so that in a union of answers the serializer picks the branch that fits exactly.
  return Type.Object({ ok: Type.Literal(true), ...payload }, { additionalProperties: false });
}

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

/** `?page=&per_page=` of a token-surface list (1-based; at most 100 a page). */
export function PageQuery(perPage: number) {
  return Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
      per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: perPage })),
    },
    { additionalProperties: false },
  );
}

export const PaginationSchema = Type.Object({ page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() });
