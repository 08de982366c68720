// Schemas shared by every route: the error envelopes of each surface, as OpenAPI sees them.
// A route lists the statuses it can fail with through `tokenErrors(...)` / `sessionErrors(...)`,
// so the OpenAPI document names every error response a client must handle.

import { type TSchema, Type } from 'typebox';

/** `ptero_forbidden` was renamed `upstream_forbidden`; clients matching the old code are told here, for one release. */
const ERROR_CODE =
  'Stable snake_case code (CONTRACT §2). Deprecated: `ptero_forbidden`, no longer sent, replaced by `upstream_forbidden` (403).';

export const TokenError = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String({ description: ERROR_CODE }),
    status: Type.Integer(),
    message: Type.String(),
    request_id: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'TokenError', description: 'Token-surface failure envelope' },
);

export const SessionError = Type.Object(
  {
    success: Type.Literal(false),
    message: Type.String(),
    code: Type.String({ description: ERROR_CODE }),
    errors: Type.Record(Type.String(), Type.String(), { description: 'Per-field reasons' }),
    details: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'e.g. balance, required, shortfall' }),
    ),
  },
  { $id: 'SessionError', description: 'Session-surface failure envelope' },
);

const DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request',
  401: 'Not authenticated',
  402: 'Payment required: the wallet cannot cover the price',
  403: 'Forbidden',
  404: 'Not found (also for rows owned by another account)',
  409: 'Conflict with the current state',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Validation failed; see the per-field reasons',
  429: 'Rate limited; see Retry-After',
  500: 'Internal error',
  503: 'A dependency is unavailable',
  507: 'Insufficient storage: the server is short of disk space for uploads, or ran out of it during this one',
};

export function errorResponses(schema: TSchema & { $id?: string }, statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  // Any route may fail with 500, and with 503 while the database is away (http/plugins/errors.ts).
  for (const status of [...new Set([...statuses, 500, 503])]) {
    out[status] = Type.Unsafe({ ...Type.Ref(String(schema.$id)), description: DESCRIPTIONS[status] ?? 'Error' });
  }
  return out;
}

/** Error responses of a token-surface route. 401, 403 (scope) and 429 apply to every one. */
export function tokenErrors(...statuses: number[]): Record<number, TSchema> {
  return errorResponses(TokenError, [401, 403, 429, ...statuses]);
}

/** Error responses of a session-surface route. */
export function sessionErrors(...statuses: number[]): Record<number, TSchema> {
  return errorResponses(SessionError, statuses);
}
