// A client of the session surface with its own cookie jar, as a browser (or curl -c/-b) would be.

import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './harness.ts';

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Send this CSRF token in the X-CSRF-Token header; `true` sends the jar's current one. */
  csrf?: string | boolean;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;
  readonly t: TestApp;
  readonly ip: string;

  constructor(t: TestApp, ip = '127.0.0.1') {
    this.t = t;
    this.ip = ip;
  }

  get sessionId(): string | undefined {
    return this.cookies.get('SVCSESSID');
  }

  async request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: RequestOptions = {},
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (options.csrf === true && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    else if (typeof options.csrf === 'string') headers['x-csrf-token'] = options.csrf;
    const res = await this.t.inject({
      method,
      url,
      headers,
      remoteAddress: this.ip,
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });
    const setCookie = res.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair = ''] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const body = String(res.headers['content-type'] ?? '').includes('json')
      ? (res.json() as { csrf_token?: unknown })
      : null;
    if (typeof body?.csrf_token === 'string') this.csrfToken = body.csrf_token;
    return res;
  }

  get(url: string, options?: RequestOptions) {
    return this.request('GET', url, options);
  }

  post(url: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}) {
    return this.request('POST', url, { ...options, body });
  }

  /** GET auth/csrf/: an anonymous session and its token. */
  async bootstrap(): Promise<string> {
    const res = await this.get('/api/v1/client/auth/csrf/');
    if (res.statusCode !== 200) throw new Error(`csrf bootstrap: ${res.statusCode} ${res.body}`);
    return this.csrfToken as string;
  }

  async login(
    identifier: string,
    password: string,
    extra: Record<string, unknown> = {},
  ): Promise<LightMyRequestResponse> {
    if (!this.sessionId) await this.bootstrap();
    return this.post('/api/v1/client/auth/login/', { identifier, password, csrf_token: this.csrfToken, ...extra });
  }
}
