// Which API surface a URL belongs to, and how each renders success and failure (CONTRACT §2).
// The error handler, the not-found handler and the routes all go through here, so a surface's
// envelope is defined in exactly one place.

import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../core/errors.ts';
import { isBearer } from './request-context.ts';

export type Surface = 'token' | 'session' | 'health';

export function surfaceOf(url: string, authorization?: string | string[]): Surface {
  const path = url.split('?', 1)[0] ?? '';
  if (path === '/api/v1/health' || path === '/api/v1/health/' || path === '/livez' || path === '/readyz')
    return 'health';
  if (/^\/api\/v1\/client(\/|$)/.test(path)) return 'session';
  // The staff console's API answers in the session envelope too (CONTRACT §14).
  if (/^\/api\/v1\/staff(\/|$)/.test(path)) return 'session';
  // Search answers both surfaces (CONTRACT §8): a bearer token makes it the token surface.
  if (/^\/api\/v1\/search(\/|$)/.test(path)) return isBearer(authorization) ? 'token' : 'session';
  return 'token';
}

export interface TokenErrorBody {
  ok: false;
  error: string;
  status: number;
  message: string;
  request_id: string;
  details?: Record<string, unknown>;
}

export interface SessionErrorBody {
  success: false;
  message: string;
  code: string;
  errors: Record<string, string>;
  /** What a client can act on, when the error has it (e.g. balance, required, shortfall). */
  details?: Record<string, unknown>;
}

export function errorBody(surface: Surface, error: AppError, requestId: string): object {
  switch (surface) {
    case 'session':
      return {
        success: false,
        message: error.message,
        code: error.code,
        errors: error.fields ?? {},
        ...(error.details === undefined ? {} : { details: error.details }),
      } satisfies SessionErrorBody;
    case 'health':
      return { status: 'error', data: { error: error.code, message: error.message } };
    case 'token': {
      const details = error.fields === undefined ? error.details : { ...(error.details ?? {}), fields: error.fields };
      return {
        ok: false,
        error: error.code,
        status: error.status,
        message: error.message,
        request_id: requestId,
        ...(details === undefined ? {} : { details }),
      } satisfies TokenErrorBody;
    }
  }
}

/** RateLimit-Limit / -Remaining / -Reset (seconds), as CONTRACT §4 specifies. */
export function setRateLimitHeaders(
  reply: FastifyReply,
  state: { limit: number; remaining: number; reset: number },
): void {
  reply.header('RateLimit-Limit', String(state.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, state.remaining)));
  reply.header('RateLimit-Reset', String(Math.max(0, Math.ceil(state.reset))));
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfter))));
  if (error.rateLimit !== undefined) setRateLimitHeaders(reply, error.rateLimit);
  return (
    reply
      .code(error.status)
      .header('Cache-Control', 'no-store')
      .type('application/json; charset=utf-8')
      // Pre-serialised, so a route's response schema can never reshape or drop error fields.
      .send(JSON.stringify(errorBody(surfaceOf(request.url, request.headers.authorization), error, request.id)))
  );
}

/**
 * What is not the route's schema-typed answer, for the handler to return as its answer: JSON
 * already serialised (a stored idempotent answer, a cached list, as text or bytes) or a file
 * stream, sent as it is (Fastify does not serialise any of them again). `reply` is where its
 * status and headers were set. Returned, not sent here: a handler that sends and returns the
 * reply hands Fastify a thenable, and Fastify then waits for the response to finish with
 * end-of-stream listeners on every response, which is costly; a returned payload is sent at once.
 */
export function sendAsIs(_reply: FastifyReply, body: string | Buffer | Readable): never {
  return body as never;
}
