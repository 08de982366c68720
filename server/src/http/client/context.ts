// Per-request state of the session surface, and the helpers its routes share: the signed-in
// account, the client's address, rate limits with RateLimit-* headers, the session cookie.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LoadedSession } from '../../core/auth/sessions.ts';
import { SESSION_COOKIE, SESSION_POLICY } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import type { LimitName, LimitState } from '../../core/ratelimit/rate-limits.ts';
import { setRateLimitHeaders } from '../surfaces.ts';

export type { ClientSession } from '../plugins/session-auth.ts';

/** The signed-in session of a `client` route (the access hook has already refused anonymous callers). */
export function signedIn(request: FastifyRequest): LoadedSession {
  const loaded = request.clientSession.loaded;
  if (!loaded) throw new AppError('unauthenticated');
  return loaded;
}

/**
 * Count the request against each [limit, key]; the tightest remaining budget goes out in the
 * RateLimit-* headers. Throws a 429 AppError (carrying its own headers) on the first refusal.
 */
export async function limit(deps: Deps, reply: FastifyReply, rules: [LimitName, string][]): Promise<void> {
  let tightest: LimitState | null = null;
  for (const [name, key] of rules) {
    const state = await deps.limits.consume(name, key);
    if (tightest === null || state.remaining < tightest.remaining) tightest = state;
  }
  if (tightest) setRateLimitHeaders(reply, tightest);
}

/**
 * Run `work` counted against `rules` (see limit); if it is refused for its content only (a 422
 * about the format of what was sent), the attempt is given back to every limit, and the
 * RateLimit-Remaining sent says so. A 422 that tells about other records (a taken e-mail or
 * username, a used reference: AppError `existence`) keeps counting, or probing for them would
 * be free; so do attempts that fail for any other reason.
 */
export async function limited<T>(
  deps: Deps,
  reply: FastifyReply,
  rules: [LimitName, string][],
  work: () => Promise<T>,
): Promise<T> {
  await limit(deps, reply, rules);
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_failed' && !error.existence) {
      for (const [name, key] of rules) await deps.limits.refund(name, key);
      const remaining = Number(reply.getHeader('RateLimit-Remaining'));
      if (Number.isFinite(remaining)) reply.header('RateLimit-Remaining', String(remaining + 1));
    }
    throw error;
  }
}

export function setSessionCookie(deps: Deps, reply: FastifyReply, id: string, remember: boolean): void {
  reply.setCookie(SESSION_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.config.publicUrl.startsWith('https://'),
    ...(remember ? { maxAge: SESSION_POLICY.rememberSeconds } : {}),
  });
}

export function clearSessionCookie(deps: Deps, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.config.publicUrl.startsWith('https://'),
  });
}

const PAGE_DEFAULT = 1;
const PER_PAGE_DEFAULT = 20;

/** `?page=&per_page=` of list routes: page ≥ 1, 1–100 rows (default 20). */
export const PAGE_QUERY = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: PAGE_DEFAULT })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: PER_PAGE_DEFAULT })),
};

/**
 * The page a PAGE_QUERY asked for. Validation has already filled in the defaults; the schema's
 * type cannot say so (the fields are optional to the client), so they are named here once more.
 */
export function pageOf(q: { page?: number; per_page?: number }): { page: number; perPage: number } {
  return { page: q.page ?? PAGE_DEFAULT, perPage: q.per_page ?? PER_PAGE_DEFAULT };
}

export const PaginationSchema = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
});

export function pagination(page: number, perPage: number, total: number) {
  return { page, per_page: perPage, total, pages: Math.max(1, Math.ceil(total / perPage)) };
}
