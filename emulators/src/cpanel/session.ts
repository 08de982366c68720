// One-click logins: WHM's create_user_session hands out a URL
// `<base>/cpsessNNNNNNNNNN/login/?session=USER:RANDOM:CREATE_USER_SESSION,HEX` that works once,
// before it expires; opening it sets a `cpsession` cookie and redirects to the cPanel home page,
// which this emulator answers with a small "cPanel" page while the cookie is valid.

import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, type Ctx, unixNow } from './context.ts';
import { type Params, randomText, sendHtml } from './http.ts';
import type { WhmAnswer } from './whm-types.ts';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SERVICES = ['cpaneld', 'webmaild', 'whostmgrd'];

export function createUserSession(ctx: Ctx, params: Params): WhmAnswer {
  for (const name of ['user', 'service']) {
    if (!params.has(name)) throw new ApiError(`The “${name}” parameter is required.`);
  }
  const user = params.get('user') ?? '';
  const service = params.get('service') ?? '';
  if (!SERVICES.includes(service)) {
    throw new ApiError(
      `The “service” parameter is invalid. The only supported services for this API call are “cpaneld”, “webmaild”, and “whostmgrd”.`,
    );
  }
  const account = ctx.state.accounts.get(user);
  if (!account) throw new ApiError(`You cannot create a session for the user “${user}” because they do not exist.`);
  if (account.suspended) {
    throw new ApiError(`You cannot create a session for the user “${user}” because they are currently suspended.`);
  }
  if (service === 'whostmgrd') {
    throw new ApiError(
      `You cannot create a “whostmgrd” session for the user “${user}” because they are not a reseller.`,
    );
  }
  const locale = params.get('locale');
  if (locale && locale.length > 16) {
    throw new ApiError(
      `The “${locale}” parameter is invalid. The “${locale}” parameter may not be longer than 16 characters.`,
    );
  }
  const securityToken = `/cpsess${randomText(10, '0123456789')}`;
  const session = `${user}:${randomText(16, ALNUM)}:CREATE_USER_SESSION,${randomBytes(16).toString('hex')}`;
  const expires = unixNow() + ctx.settings.sessionTtlSeconds;
  for (const [id, old] of ctx.state.sessions) if (old.expires < unixNow()) ctx.state.sessions.delete(id);
  ctx.state.sessions.set(session, { session, securityToken, user, service, expires, used: false, cookie: null });
  ctx.changed();
  const query = new URLSearchParams({ session, ...(locale ? { locale } : {}) });
  return {
    reason: 'Created session',
    data: {
      cp_security_token: securityToken,
      expires,
      service,
      session,
      url: `${ctx.url}${securityToken}/login/?${query.toString()}`,
      ...(locale ? { locale } : {}),
    },
  };
}

function loginPage(message: string): string {
  return `<!DOCTYPE html><html><head><title>cPanel Login</title></head><body><h1>cPanel</h1><p id="login-status">${message}</p><form action="/login/" method="post"><input name="user"><input name="pass" type="password"><button>Log in</button></form></body></html>`;
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return null;
}

/** Whether a path belongs to the session pages (`/cpsessN/...` or `/login/`). */
export function isSessionPath(path: string): boolean {
  return /^\/cpsess\d+\//.test(path) || path === '/login/' || path === '/login';
}

/** GET `/cpsessN/login/?session=…` and the pages behind it. */
export function handleSessionPage(ctx: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const match = /^(\/cpsess\d+)(\/.*)$/.exec(url.pathname);
  const now = unixNow();
  if (match && match[2] === '/login/' && url.searchParams.has('session')) {
    const id = url.searchParams.get('session') ?? '';
    const session = ctx.state.sessions.get(id);
    if (!session || session.securityToken !== match[1] || session.used || session.expires < now) {
      if (session && session.expires < now) ctx.state.sessions.delete(id);
      sendHtml(res, 401, loginPage('The login is invalid or has expired.'));
      return;
    }
    session.used = true;
    session.cookie = createHash('sha256')
      .update(`${id}:${randomBytes(8).toString('hex')}`)
      .digest('hex');
    // The logged-in session lasts like a normal cPanel session.
    session.expires = now + 3600;
    ctx.changed();
    sendHtml(res, 302, '', {
      location: `${session.securityToken}/frontend/jupiter/index.html?login=1&post_login=${Date.now()}`,
      'set-cookie': [`cpsession=${encodeURIComponent(`${session.user}:${session.cookie}`)}; HttpOnly; path=/`],
    });
    return;
  }
  const cookie = cookieOf(req, 'cpsession');
  const active = [...ctx.state.sessions.values()].find(
    (s) => s.used && s.expires >= now && cookie === `${s.user}:${s.cookie}` && match && s.securityToken === match[1],
  );
  if (!active) {
    sendHtml(res, 401, loginPage('Log in to your account.'));
    return;
  }
  const account = ctx.state.accounts.get(active.user);
  const title = `cPanel - Tools`;
  sendHtml(
    res,
    200,
    `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>cPanel</h1><p>Logged in as <span id="user">${active.user}</span> (${account?.domain ?? ''}).</p></body></html>`,
  );
}
