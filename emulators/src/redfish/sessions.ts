// Redfish authentication (DSP0266 §13): a client logs in with `POST /redfish/v1/SessionService/
// Sessions {UserName, Password}` → 201, `X-Auth-Token` and the session's `Location`; it sends
// `X-Auth-Token` afterwards and DELETEs the session to log out. HTTP Basic is accepted too.
// A session unused for longer than the `sessionTimeoutMs` knob expires (401 NoValidSession).

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Ctx, Runtime, Session } from './context.ts';
import { isObject, message, RedfishError } from './http.ts';
import { paths } from './resources.ts';

/** Sessions a BMC holds at once (iDRAC and iLO allow a handful); the oldest is dropped past it. */
const MAX_SESSIONS = 16;

function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function expired(ctx: Ctx, s: Session, now: number): boolean {
  const ttl = ctx.faults.sessionTimeoutMs;
  return ttl > 0 && now - s.lastUsedAt > ttl;
}

/** Who is calling (the session or Basic user), or null. Expired sessions are removed. */
export function authenticate(
  ctx: Ctx,
  rt: Runtime,
  req: IncomingMessage,
): { user: string; session: Session | null } | null {
  const now = Date.now();
  for (const [token, s] of rt.sessions) if (expired(ctx, s, now)) rt.sessions.delete(token);
  const token = req.headers['x-auth-token'];
  if (typeof token === 'string' && token !== '') {
    const s = rt.sessions.get(token);
    if (!s) return null;
    s.lastUsedAt = now;
    return { user: s.user, session: s };
  }
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^basic\s+/i.test(auth)) {
    const decoded = Buffer.from(auth.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      const user = decoded.slice(0, colon);
      const password = decoded.slice(colon + 1);
      if (same(user, ctx.settings.username) && same(password, ctx.settings.password)) return { user, session: null };
    }
  }
  return null;
}

/** POST Sessions: the new session, or 400 (fields missing) / 401 (wrong credentials). */
export function login(ctx: Ctx, rt: Runtime, body: unknown): Session {
  if (!isObject(body)) throw new RedfishError(400, message('PropertyMissing', ['UserName'], ['#/UserName']));
  const missing = ['UserName', 'Password'].filter((k) => typeof body[k] !== 'string');
  if (missing.length > 0) {
    throw new RedfishError(
      400,
      missing.map((k) => message('PropertyMissing', [k], [`#/${k}`])),
    );
  }
  const user = String(body.UserName);
  const password = String(body.Password);
  if (!same(user, ctx.settings.username) || !same(password, ctx.settings.password)) {
    throw new RedfishError(401, message('ResourceAtUriUnauthorized', [paths.sessions, 'Unauthorized']));
  }
  const now = Date.now();
  const s: Session = {
    id: randomBytes(8).toString('hex'),
    token: randomBytes(24).toString('hex'),
    user,
    createdAt: now,
    lastUsedAt: now,
  };
  rt.sessions.set(s.token, s);
  while (rt.sessions.size > MAX_SESSIONS) {
    const oldest = rt.sessions.keys().next().value;
    if (oldest === undefined) break;
    rt.sessions.delete(oldest);
  }
  return s;
}

export function findSession(rt: Runtime, id: string): Session | undefined {
  for (const s of rt.sessions.values()) if (s.id === id) return s;
  return undefined;
}
