// DMTF Redfish as a client sees it (DSP0266): JSON resources reached by following `@odata.id`
// links from the service root `/redfish/v1/`, with a session: `POST` of `{UserName, Password}`
// to the sessions collection (the root's `Links.Sessions`) answers `X-Auth-Token` and the
// session's `Location`; the token goes with every request; a 401 (the session expired or was
// dropped) logs in again once and repeats the request; close() DELETEs the session. PATCHes
// carry `If-Match` with the resource's ETag when it has one (a stale one is re-read and
// retried). Every URI is resolved against the endpoint's origin and must stay on it, so the
// token never goes to another host. Refusals are mapped by ./errors.ts; transport (keep-alive,
// deadlines, size cap, TLS) is ../http.ts.

import type { IncomingHttpHeaders } from 'node:http';
import { nodeHttpClient } from '../driver-config.ts';
import { UpstreamError } from '../errors.ts';
import type { HttpClient, HttpResponse } from '../http.ts';
import { labelOf, type RedfishConfig, type ResolvedConfig, resolveConfig } from './config.ts';
import { classify, redact } from './errors.ts';

export type Json = Record<string, unknown>;

export interface RedfishResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The JSON object of a 2xx answer with a body; null otherwise. */
  body: Json | null;
  /** The raw text (what an error is classified from). */
  text: string;
  reason: string;
}

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the session token (default true); the service root and login go without. */
  auth?: boolean;
}

/** Largest JSON answer read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** The service root's fixed URI (DSP0266 §6.1). */
export const SERVICE_ROOT = '/redfish/v1/';
/** Times a PATCH is retried after 412 (the resource changed between our read and our write). */
const STALE_ETAG_RETRIES = 2;
/** The longest close() waits for the session's DELETE before it drops the connections. */
const LOGOUT_WAIT_MS = 5_000;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A resource's `@odata.id`, or null. */
export function idOf(value: unknown): string | null {
  return isObject(value) && typeof value['@odata.id'] === 'string' && value['@odata.id'] !== ''
    ? value['@odata.id']
    : null;
}

export class RedfishClient {
  readonly config: ResolvedConfig;
  /** Names the BMC in every message: `BMC bmc-r12.example.in`. */
  readonly label: string;
  /** What discovery found (./discovery.ts), kept while the driver lives. */
  readonly found = new Map<string, string>();
  readonly #problem: UpstreamError | null;
  readonly #http: HttpClient;
  #token: string | null = null;
  #session: URL | null = null;
  #login: Promise<string> | null = null;
  #root: Json | null = null;
  #closed = false;

  constructor(config: RedfishConfig) {
    const { resolved, problem } = resolveConfig(config);
    this.config = resolved;
    this.#problem = problem;
    this.label = labelOf(config);
    this.#http = nodeHttpClient(config, this.label, {
      timeoutMs: resolved.requestTimeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
  }

  /** Throws the configuration's problem, if it has one (every call starts here). */
  check(): void {
    if (this.#problem) throw this.#problem;
    if (this.#closed) throw new UpstreamError('rejected', `${this.label}: the driver was closed`, { retryable: false });
  }

  /** Run a call; whatever it throws becomes an UpstreamError without the password or token in it. */
  async guard<T>(run: () => Promise<T>, extraSecrets: string[] = []): Promise<T> {
    try {
      this.check();
      return await run();
    } catch (error) {
      const secrets = [this.config.password, this.#token ?? '', ...extraSecrets];
      if (error instanceof UpstreamError) throw redact(error, secrets);
      // Not a network failure (those are UpstreamError already): e.g. a header Node refuses. Only
      // the error's name is kept: its message could quote the request.
      throw new UpstreamError('protocol', `${this.label}: the request could not be made (${(error as Error).name})`, {
        retryable: false,
      });
    }
  }

  garbled(what: string): UpstreamError {
    return new UpstreamError('protocol', `${this.label}: answered something other than ${what}`, { retryable: false });
  }

  /** A link (`@odata.id`, `Location`, an action's `target`) as a URL on the BMC; another host is refused. */
  uri(ref: string): URL {
    let url: URL;
    try {
      url = new URL(ref, this.config.origin);
    } catch {
      throw this.garbled('a usable link');
    }
    if (url.origin !== this.config.origin) {
      throw new UpstreamError('protocol', `${this.label}: a link points to another host (${url.host})`, {
        retryable: false,
      });
    }
    return url;
  }

  async #raw(method: string, url: URL, options: SendOptions, token: string | null): Promise<HttpResponse> {
    const headers: Record<string, string> = { accept: 'application/json', 'odata-version': '4.0', ...options.headers };
    if (token !== null) headers['x-auth-token'] = token;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    return this.#http.send({ method, url, headers, ...(body === undefined ? {} : { body }) });
  }

  #answer(res: HttpResponse, what: string): RedfishResponse {
    let body: Json | null = null;
    const ok = res.status >= 200 && res.status < 300;
    if (ok && res.text.trim() !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(res.text);
      } catch {
        // A 200 that is not the API: a login page, a proxy's page.
        throw new UpstreamError('protocol', `${this.label}: answered ${what} with a body that is not JSON`, {
          status: res.status,
          retryable: false,
        });
      }
      if (!isObject(parsed)) throw this.garbled(`a JSON object for ${what}`);
      body = parsed;
    }
    return { status: res.status, headers: res.headers, body, text: res.text, reason: res.reason };
  }

  /**
   * One request, any status answered (the caller decides). With `auth` (the default) it carries
   * the session token, logging in first when there is none, and once more after a 401.
   */
  async send(method: string, ref: string, options: SendOptions = {}): Promise<RedfishResponse> {
    const url = this.uri(ref);
    const what = `${method} ${url.pathname}`;
    if (options.auth === false) return this.#answer(await this.#raw(method, url, options, null), what);
    const token = await this.#sessionToken(null);
    const first = await this.#raw(method, url, options, token);
    if (first.status !== 401) return this.#answer(first, what);
    // The session expired (or the BMC dropped it): log in again, once.
    const renewed = await this.#sessionToken(token);
    return this.#answer(await this.#raw(method, url, options, renewed), what);
  }

  /** A request whose non-2xx answer is thrown as an UpstreamError; `what` names it in messages. */
  async request(method: string, ref: string, options: SendOptions = {}, what?: string): Promise<RedfishResponse> {
    const res = await this.send(method, ref, options);
    if (res.status >= 200 && res.status < 300) return res;
    throw classify(
      res.status,
      res.reason,
      res.text,
      res.headers,
      this.label,
      what ?? `${method} ${this.uri(ref).pathname}`,
    );
  }

  /** GET a resource: its JSON object (a 2xx without one is a protocol error). */
  async get(ref: string, what?: string): Promise<Json> {
    const res = await this.request('GET', ref, {}, what);
    if (!res.body) throw this.garbled(`a resource at ${this.uri(ref).pathname}`);
    return res.body;
  }

  /**
   * PATCH a resource with If-Match when it has an ETag (read first); a 412 (it changed
   * meanwhile) re-reads and retries. The answer (200 with the resource, 204, or 202 with a task).
   */
  async patch(ref: string, body: Json, what: string): Promise<RedfishResponse> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.request('GET', ref, {}, what);
      const etag = etagOf(current);
      const res = await this.send('PATCH', ref, { body, ...(etag ? { headers: { 'if-match': etag } } : {}) });
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status === 412 && attempt < STALE_ETAG_RETRIES) continue;
      throw classify(res.status, res.reason, res.text, res.headers, this.label, what);
    }
  }

  /** The service root (read without a session, as DSP0266 allows), kept once read. */
  async root(): Promise<Json> {
    if (this.#root) return this.#root;
    const res = await this.request('GET', SERVICE_ROOT, { auth: false }, 'the service root');
    if (!res.body || typeof res.body.RedfishVersion !== 'string') throw this.garbled('a Redfish service root');
    this.#root = res.body;
    return res.body;
  }

  /** A valid token: the current one, unless it is `stale` (then a new login, shared by concurrent callers). */
  async #sessionToken(stale: string | null): Promise<string> {
    if (this.#token !== null && this.#token !== stale) return this.#token;
    if (!this.#login) {
      this.#token = null;
      this.#login = this.#doLogin().finally(() => {
        this.#login = null;
      });
    }
    return this.#login;
  }

  async #doLogin(): Promise<string> {
    const root = await this.root();
    const links = isObject(root.Links) ? root.Links : {};
    const sessions =
      idOf(links.Sessions) ??
      (idOf(root.SessionService) ? `${idOf(root.SessionService)}/Sessions` : '/redfish/v1/SessionService/Sessions');
    const url = this.uri(sessions);
    const res = await this.#raw(
      'POST',
      url,
      { body: { UserName: this.config.username, Password: this.config.password } },
      null,
    );
    if (res.status === 401 || res.status === 403) {
      throw new UpstreamError('auth', `${this.label}: the BMC refused the account (login answered ${res.status})`, {
        status: res.status,
        retryable: false,
      });
    }
    if (res.status < 200 || res.status >= 300) {
      throw classify(res.status, res.reason, res.text, res.headers, this.label, 'the login');
    }
    const token = res.headers['x-auth-token'];
    if (typeof token !== 'string' || token === '')
      throw this.garbled('a session (no X-Auth-Token in the login answer)');
    let location = typeof res.headers.location === 'string' ? res.headers.location : null;
    if (!location) {
      try {
        location = idOf(JSON.parse(res.text));
      } catch {
        location = null;
      }
    }
    this.#session = location ? this.uri(location) : null;
    this.#token = token;
    return token;
  }

  /** DELETE the session (best effort: a BMC holds few, and drops it at its timeout anyway). */
  async logout(): Promise<void> {
    const token = this.#token;
    const session = this.#session;
    this.#token = null;
    this.#session = null;
    if (!token || !session) return;
    try {
      await this.#raw('DELETE', session, {}, token);
    } catch {
      // Unreachable or already gone: the BMC expires it on its own.
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const timer = setTimeout(() => this.#http.close(), LOGOUT_WAIT_MS);
    timer.unref();
    void this.logout().finally(() => {
      clearTimeout(timer);
      this.#http.close();
    });
  }
}

/** A resource's ETag: the header, else `@odata.etag`; null when it has none. */
export function etagOf(res: RedfishResponse): string | null {
  const header = res.headers.etag;
  if (typeof header === 'string' && header !== '') return header;
  const inBody = res.body?.['@odata.etag'];
  return typeof inBody === 'string' && inBody !== '' ? inBody : null;
}
