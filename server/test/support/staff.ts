// The staff console's side in tests: a browser with its own STAFFSESSID jar and CSRF token, and a
// staff member made the way an operator makes one (`staff add`, the invitation mail, a password,
// sign-in, the authenticator enrolled), with the authenticator's codes at the app's clock.

import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { OPERATOR } from '../../src/core/audit/audit.ts';
import type { StaffRole } from '../../src/core/staff/roles.ts';
import { lastMail } from './factories.ts';
import type { ManualClock, TestApp } from './harness.ts';

export const STAFF = '/api/v1/staff';

export class StaffBrowser {
  readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;
  readonly t: TestApp;
  readonly ip: string;
  constructor(t: TestApp, ip = '127.0.0.1') {
    this.t = t;
    this.ip = ip;
  }

  get sessionId(): string | undefined {
    return this.cookies.get('STAFFSESSID');
  }

  async request(
    method: 'GET' | 'POST',
    url: string,
    options: { body?: unknown; csrf?: boolean | string; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const csrf = options.csrf ?? method === 'POST';
    if (csrf === true && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    else if (typeof csrf === 'string') headers['x-csrf-token'] = csrf;
    const res = await this.t.inject({
      method,
      url: url.startsWith('/') && !url.startsWith('/api/') ? `${STAFF}${url}` : url,
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
    if (String(res.headers['content-type'] ?? '').includes('json')) {
      const body = res.json() as { csrf_token?: unknown };
      if (typeof body?.csrf_token === 'string') this.csrfToken = body.csrf_token;
    }
    return res;
  }

  get(url: string, options: { csrf?: boolean | string } = {}) {
    return this.request('GET', url, options);
  }

  post(url: string, body?: unknown, options: { csrf?: boolean | string; headers?: Record<string, string> } = {}) {
    return this.request('POST', url, { ...options, body });
  }

  async bootstrap(): Promise<void> {
    const res = await this.get('/auth/csrf');
    if (res.statusCode !== 200) throw new Error(`staff csrf: ${res.statusCode} ${res.body}`);
  }

  async login(email: string, password: string): Promise<LightMyRequestResponse> {
    if (!this.sessionId) await this.bootstrap();
    return this.post('/auth/login', { email, password });
  }
}

/** The code an authenticator app shows at the app's clock, `offsetSteps` 30-second steps away. */
export function totpCode(clock: ManualClock, secret: string, offsetSteps = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() + offsetSteps * 30_000 });
}

/** The token of the newest invitation mailed to `email`. */
export async function inviteToken(t: TestApp, email: string): Promise<string> {
  const mail = await lastMail(t, email);
  const match = /\/staff\/invite\?token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no invitation link in: ${mail.text}`);
  return match[1];
}

export interface SignedInStaff {
  browser: StaffBrowser;
  id: number;
  email: string;
  password: string;
  secret: string;
  role: StaffRole;
}

let counter = 0;

/**
 * An invited member's first sign-in, through the API in a browser of its own: the mailed invitation
 * accepted with `password`, signed in, the authenticator enrolled and its first code verified. The
 * clock then moves a step on (the next code accepted is of a later step).
 */
export async function enrolInvited(
  t: TestApp,
  clock: ManualClock,
  email: string,
  password: string,
  ip?: string,
): Promise<{ browser: StaffBrowser; secret: string }> {
  const browser = new StaffBrowser(t, ip);
  await browser.bootstrap();
  const accepted = await browser.post('/auth/invite', { token: await inviteToken(t, email), password });
  if (accepted.statusCode !== 200) throw new Error(`invite: ${accepted.statusCode} ${accepted.body}`);
  const login = await browser.login(email, password);
  if (login.statusCode !== 200) throw new Error(`login: ${login.statusCode} ${login.body}`);
  const begun = await browser.post('/auth/totp', { action: 'enrol' });
  if (begun.statusCode !== 200) throw new Error(`enrol: ${begun.statusCode} ${begun.body}`);
  const secret = begun.json().secret as string;
  const done = await browser.post('/auth/totp', { action: 'verify', code: totpCode(clock, secret) });
  if (done.statusCode !== 200) throw new Error(`verify: ${done.statusCode} ${done.body}`);
  clock.advance(30);
  return { browser, secret };
}

/** A staff member added by the operator, through the invitation, signed in with an enrolled authenticator. */
export async function signedInStaff(
  t: TestApp,
  clock: ManualClock,
  role: StaffRole,
  ip?: string,
): Promise<SignedInStaff> {
  counter += 1;
  const email = `${role}${counter}-${Date.now().toString(36)}@staff.example.in`;
  const password = `staff-pass-${counter}-long9`;
  const added = await t.deps.staff.add({ email, role, name: `Staff ${counter}` }, OPERATOR);
  const { browser, secret } = await enrolInvited(t, clock, email, password, ip);
  return { browser, id: added.id, email, password, secret, role };
}
