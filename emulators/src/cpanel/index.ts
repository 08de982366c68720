// A cPanel & WHM server on loopback that speaks the real APIs (upstreams.md §3), for the demo and
// the tests. ONE listener serves both WHM API 1 (`/json-api/<fn>`, real port 2087) and cPanel
// UAPI (`/execute/<Module>/<fn>`, real port 2083), plus the one-click login pages that WHM's
// create_user_session points at. Fault knobs make it slow, dead, hanging, crashing (500),
// upgrading (503), losing answers after doing the work, or failing chosen functions;
// /__emulator/* sets them over HTTP and shows the state and per-route call counters.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { tokenHash } from './account-modules.ts';
import type { Ctx, Settings } from './context.ts';
import { type CpanelFaultKnobs, noFaults, parseFaults, takeError, takeFailure, takeLoss } from './faults.ts';
import {
  type Credentials,
  HttpFailure,
  makeToken,
  parseAuthorization,
  parseParams,
  randomText,
  readBody,
  sameSecret,
  sendHtml,
  sendJson,
  sendText,
} from './http.ts';
import { verifyPassword } from './password.ts';
import { handleSessionPage, isSessionPath } from './session.ts';
import { finishDueAutossl, scheduleTick } from './ssl.ts';
import { type Account, CpanelState, DEFAULT_PACKAGE } from './state.ts';
import { knownFunction, runUapi, uapiFailure } from './uapi.ts';
import { legacyShape, runWhm, uapiTarget, whmFailure, whmKnown } from './whm.ts';

export type { CpanelFaultKnobs } from './faults.ts';
export type { Account as CpanelAccount, Mailbox as CpanelMailbox, Package as CpanelPackage } from './state.ts';
export { CpanelState } from './state.ts';

export interface CpanelEmulatorOptions {
  /** 0 (the default) picks a free port. One listener serves WHM (/json-api) and UAPI (/execute); real servers use 2087 and 2083. */
  port?: number;
  /** The WHM user the token belongs to (default 'root'). */
  whmUser?: string;
  /** The WHM API token; 32 random upper-case letters and digits when absent (kept in the state file). */
  whmToken?: string;
  /** JSON file keeping packages, accounts and sessions across restarts, written after every change. */
  stateFile?: string | null;
  /** AutoSSL installs a certificate this long after the account is created or a check is started (default 3000). */
  autosslDelayMs?: number;
  /** Required password strength (cPanel's 0–100 score) for accounts, DB users and mailboxes (default 65). */
  minPasswordStrength?: number;
  /** Database prefix length (default 8). */
  prefixSize?: 8 | 16;
  /** The shared IP accounts get (default 192.0.2.10, a documentation address). */
  ip?: string;
  /** Server nameservers (default ns1/ns2.hostplane.test). */
  nameservers?: string[];
  /** How long a create_user_session URL stays valid before it is used (default 300 s, cPanel's preauth lifetime). */
  sessionTtlSeconds?: number;
  /** The server's hostname (default server.hostplane.test). */
  hostname?: string;
}

export interface CpanelEmulator {
  url: string;
  port: number;
  whmUser: string;
  whmToken: string;
  /** The live knobs; change them with setFaults (or directly). */
  faults: CpanelFaultKnobs;
  setFaults(faults: Partial<CpanelFaultKnobs>): Promise<void>;
  /**
   * Calls received, by `METHOD /path` (e.g. `GET /json-api/createacct`, `POST /execute/Mysql/create_database`),
   * and by UAPI function whichever way it came (`uapi Mysql::create_database`).
   */
  calls: Map<string, number>;
  /**
   * Everything the server holds: `packages` by name; `accounts` by username (domain, plan,
   * password hash, suspended + reason, limits, databases, dbUsers, grants, mailboxes, php per
   * vhost, zone lines, certs by vhost, sslRedirects, autossl state, tokens); `sessions`.
   */
  state: CpanelState;
  /** Whether `password` is the account's password. */
  checkPassword(username: string, password: string): boolean;
  /** Whether `password` is the mailbox's password (`user@domain`). */
  checkMailboxPassword(email: string, password: string): boolean;
  /** Whether `password` is the database user's password (`prefix_name`, on any account). */
  checkDbUserPassword(dbUser: string, password: string): boolean;
  /** Clear the knobs and counters; with `accounts`, also every account, session and package but 'default'. */
  reset(options?: { accounts?: boolean }): void;
  stop(): Promise<void>;
}

/** Cut a connection as a dead host does. */
function cut(socket: Socket): void {
  socket.resetAndDestroy();
}

function loginPage(): string {
  return '<!DOCTYPE html><html><head><title>WHM Login</title></head><body><h1>Login</h1><p>Access denied</p></body></html>';
}

function xid(): string {
  return randomText(6, 'abcdefghijklmnopqrstuvwxyz0123456789');
}

function storedToken(state: CpanelState): string | null {
  const value = state.meta.whmToken;
  return typeof value === 'string' && value !== '' ? value : null;
}

export async function startCpanelEmulator(options: CpanelEmulatorOptions = {}): Promise<CpanelEmulator> {
  const state = new CpanelState(options.stateFile ?? null);
  const loaded = state.load();
  const whmToken = options.whmToken ?? (loaded ? storedToken(state) : null) ?? makeToken();
  state.meta.whmToken = whmToken;
  if (!state.packages.has(DEFAULT_PACKAGE.name)) {
    state.packages.set(DEFAULT_PACKAGE.name, { name: DEFAULT_PACKAGE.name, settings: { ...DEFAULT_PACKAGE.settings } });
  }
  const settings: Settings = {
    whmUser: options.whmUser ?? 'root',
    whmToken,
    autosslDelayMs: options.autosslDelayMs ?? 3000,
    minPasswordStrength: options.minPasswordStrength ?? 65,
    prefixSize: options.prefixSize ?? 8,
    ip: options.ip ?? '192.0.2.10',
    nameservers: options.nameservers ?? ['ns1.hostplane.test', 'ns2.hostplane.test'],
    sessionTtlSeconds: options.sessionTtlSeconds ?? 300,
    hostname: options.hostname ?? 'server.hostplane.test',
    version: '11.120.0.16',
  };
  const faults = noFaults();
  const calls = new Map<string, number>();
  const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  const sockets = new Set<Socket>();
  const ctx: Ctx = { state, faults, settings, url: '', timers: new Set(), changed: () => state.save() };

  /** The account a cPanel token or Basic password opens, or why not. */
  function cpanelUser(creds: Credentials): Account | 'denied' | 'suspended' {
    if (creds.kind !== 'cpanel' && creds.kind !== 'basic') return 'denied';
    const account = state.accounts.get(creds.user);
    if (!account) return 'denied';
    const ok =
      creds.kind === 'basic'
        ? verifyPassword(account.password, creds.password)
        : account.tokens.some((t) => sameSecret(tokenHash(creds.token), t.hash));
    if (!ok) return 'denied';
    return account.suspended ? 'suspended' : account;
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    if (faults.down) return void cut(req.socket);
    const raw = await readBody(req);
    if (faults.hang) return;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    const path = url.pathname.replace(/\/+$/, '');
    const routeKey = `${method} ${path.replace(/^\/cpsess\d+/, '/cpsess:')}`;
    count(routeKey);
    if (isSessionPath(url.pathname)) return handleSessionPage(ctx, req, res, url);

    const whm = /^\/json-api\/([A-Za-z0-9_]+)$/.exec(path);
    const uapi = /^\/execute\/([A-Za-z0-9_]+)\/([A-Za-z0-9_]+)$/.exec(path);
    if (!whm && !uapi) return sendHtml(res, 404, '<html><body><h1>404 Not Found</h1></body></html>');

    // Authentication: token auth answers HTTP errors, never login pages (except with no credentials at all).
    const creds = parseAuthorization(req.headers.authorization);
    if (creds.kind === 'none') return sendHtml(res, 401, loginPage());
    if (creds.kind === 'bad') return sendText(res, 401, 'Access denied');
    let account: Account | null = null;
    if (creds.kind === 'whm') {
      if (creds.user !== settings.whmUser || !sameSecret(creds.token, settings.whmToken)) {
        return sendText(res, 401, 'Access denied');
      }
      if (!whm) return sendText(res, 403, 'Token authentication allows access to WHM API 1 calls only on this port.');
    } else {
      const who = cpanelUser(creds);
      if (who === 'denied') return sendText(res, 401, 'Access denied');
      if (who === 'suspended') return sendText(res, 401, 'This account is currently suspended.');
      if (!uapi) return sendText(res, 403, 'Token authentication allows access to UAPI or API 2 calls only.');
      account = who;
    }

    let params: ReturnType<typeof parseParams>;
    try {
      if (raw === null) throw new HttpFailure(413, 'Request Entity Too Large');
      params = parseParams(req, url, raw);
    } catch (error) {
      const failure = error instanceof HttpFailure ? error : new HttpFailure(400, 'Bad Request');
      return sendText(res, failure.status, failure.message);
    }

    // Which function, for failNext / loseNext / counters.
    let fnKey: string;
    if (uapi) fnKey = `${uapi[1]}::${uapi[2]}`;
    else if (whm?.[1] === 'uapi_cpanel') {
      const target = uapiTarget(params);
      fnKey = 'metadata' in target ? 'uapi_cpanel' : `${target.module}::${target.fn}`;
    } else fnKey = whm?.[1] ?? '';
    const isUapiCall = fnKey.includes('::');
    if (isUapiCall) count(`uapi ${fnKey}`);
    const whmFn = whm?.[1] ?? '';

    if (faults.upgrading) {
      const reason = 'cPanel & WHM is being updated. Please try again after the update completes.';
      return sendJson(res, 503, uapi ? uapiFailure([reason]) : whmFailure(whmFn, reason));
    }
    if (takeError(faults)) {
      const reason = `Internal Error (ID ${xid()}): the API subprocess exited abnormally.`;
      return sendJson(res, 500, uapi ? uapiFailure([reason]) : whmFailure(whmFn, reason));
    }
    if (finishDueAutossl(ctx)) ctx.changed();

    const failing =
      (uapi ? knownFunction(uapi[1] ?? '', uapi[2] ?? '') : whmKnown(whmFn)) && takeFailure(faults, fnKey);
    const generic = `(XID ${xid()}) The system experienced an internal error while processing the request. Try again.`;
    let body: unknown;
    if (uapi && account) {
      body = failing ? uapiFailure([generic]) : runUapi(ctx, account, uapi[1] ?? '', uapi[2] ?? '', params);
    } else {
      const legacy = params.get('api.version') !== '1';
      if (failing && !isUapiCall) body = whmFailure(whmFn, generic);
      else {
        const envelope = runWhm(ctx, whmFn, params, failing, generic);
        body = legacy ? legacyShape(envelope) : envelope;
      }
    }
    // The work is done; the answer never arrives.
    if (takeLoss(faults, [routeKey, fnKey])) return void req.socket.destroy();
    sendJson(res, 200, body);
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const raw = (await readBody(req)) ?? '';
    if (path === '/__emulator/faults' && req.method === 'POST') {
      try {
        applyFaults(parseFaults(JSON.parse(raw || '{}')), req.socket);
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
      return sendJson(res, 200, { faults });
    }
    if (path === '/__emulator/faults') return sendJson(res, 200, { faults });
    if (path === '/__emulator/state') {
      if (finishDueAutossl(ctx)) ctx.changed();
      return sendJson(res, 200, {
        url: ctx.url,
        whm_user: settings.whmUser,
        packages: [...state.packages.values()],
        accounts: [...state.accounts.values()].map((a) => ({
          ...a,
          password: undefined,
          dbUsers: a.dbUsers.map((u) => ({ name: u.name })),
          mailboxes: a.mailboxes.map(({ password: _p, ...rest }) => rest),
          tokens: a.tokens.map((t) => ({ name: t.name, createTime: t.createTime })),
        })),
        sessions: [...state.sessions.values()].map((s) => ({ user: s.user, expires: s.expires, used: s.used })),
        calls: Object.fromEntries(calls),
        faults,
      });
    }
    if (path === '/__emulator/reset' && req.method === 'POST') {
      let body: { accounts?: unknown } = {};
      try {
        body = JSON.parse(raw || '{}') as { accounts?: unknown };
      } catch {}
      emulator.reset({ accounts: body.accounts === true });
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'unknown control path' });
  }

  function applyFaults(change: Partial<CpanelFaultKnobs>, keep?: Socket): void {
    Object.assign(faults, change);
    if (change.down) for (const socket of sockets) if (socket !== keep) cut(socket);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://cpanel');
    const work = url.pathname.startsWith('/__emulator/') ? control(req, res, url.pathname) : api(req, res, url);
    work.catch((error: unknown) => {
      console.error('cpanel emulator: request failed', error);
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  ctx.url = `http://127.0.0.1:${port}`;
  // AutoSSL runs that were pending when the state was saved finish on time (or at once).
  finishDueAutossl(ctx);
  for (const account of state.accounts.values()) {
    if (account.autosslDueAt !== null) scheduleTick(ctx, account.autosslDueAt - Date.now());
  }
  state.save();

  const emulator: CpanelEmulator = {
    url: ctx.url,
    port,
    whmUser: settings.whmUser,
    whmToken,
    faults,
    calls,
    state,
    async setFaults(change) {
      applyFaults(parseFaults(change));
    },
    checkPassword: (username, password) => verifyPassword(state.accounts.get(username)?.password, password),
    checkMailboxPassword(email, password) {
      const wanted = email.toLowerCase();
      for (const account of state.accounts.values()) {
        const box = account.mailboxes.find((m) => m.email === wanted);
        if (box) return verifyPassword(box.password, password);
      }
      return false;
    },
    checkDbUserPassword(dbUser, password) {
      for (const account of state.accounts.values()) {
        const user = account.dbUsers.find((u) => u.name === dbUser);
        if (user) return verifyPassword(user.password, password);
      }
      return false;
    },
    reset({ accounts = false } = {}) {
      Object.assign(faults, noFaults());
      calls.clear();
      if (!accounts) return;
      state.accounts.clear();
      state.sessions.clear();
      for (const name of [...state.packages.keys()]) if (name !== DEFAULT_PACKAGE.name) state.packages.delete(name);
      state.save();
    },
    async stop() {
      state.frozen = true;
      for (const timer of ctx.timers) clearTimeout(timer);
      ctx.timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}
