// Security review 3, T3-M6: no rate-limit key holds a secret. A shared Redis or the PostgreSQL
// table `rate_limits` may be listed by others, and sessions are otherwise kept only as hashes. A
// full walk-through of both surfaces (register, verify, a failed login, login, search with a
// session and with a token, a profile change, token calls and a bad token, one-time code request
// and check, forgot and reset), then every key and value the limit store holds for this app is
// searched for every secret the walk-through saw: session cookies, CSRF tokens, API tokens, the
// one-time code, the verify and reset tokens. Also the log lines and the metrics (session ids,
// CSRF tokens and API tokens: the development mail sink prints links and codes by design).
//
// The store is the app's: memory on PGlite, Redis with REDIS_URL, else the `rate_limits` table;
// with PostgreSQL and Redis both, the walk-through runs again on the table (redis: false).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { registry } from '../src/metrics/metrics.ts';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail, linkToken, loginCode } from './support/factories.ts';
import { createTestApp, onPostgres, redisUrl, type TestApp } from './support/harness.ts';

const AUTH = '/api/v1/client/auth';

/** A tag of letters only, so no run of six digits in an address can look like a one-time code. */
const letters = (n: number) => [...randomBytes(n)].map((b) => String.fromCharCode(97 + (b % 26))).join('');

/** Secrets seen during the walk-through, by kind. */
class Secrets {
  readonly seen: { kind: string; value: string }[] = [];
  add(kind: string, value: string | null | undefined): void {
    assert.ok(value, `the walk-through has a ${kind}`);
    if (!this.seen.some((s) => s.value === value)) this.seen.push({ kind, value });
  }
  /** Each browser's session cookie and CSRF token, as they are now. */
  of(browser: Browser, what: string): void {
    this.add(`${what} session id`, browser.sessionId);
    this.add(`${what} CSRF token`, browser.csrfToken);
  }
  /** The secrets found in `text` (a code only as a whole number, not inside a longer one). */
  foundIn(text: string, kinds?: (kind: string) => boolean): string[] {
    return this.seen
      .filter((s) => !kinds || kinds(s.kind))
      .filter((s) => {
        if (/^\d{6}$/.test(s.value)) return new RegExp(`(^|\\D)${s.value}(\\D|$)`).test(text);
        // An API token also without its svc_ prefix (the part that is secret).
        return text.includes(s.value) || (s.value.startsWith('svc_') && text.includes(s.value.slice(4)));
      })
      .map((s) => s.kind);
  }
}

/** Sign up, verify, sign in, search, use a token, a code and a reset: everything that counts a limit. */
async function walkThrough(t: TestApp, secrets: Secrets): Promise<void> {
  const tag = letters(10);
  const email = `walker.${tag}@example.in`;
  const username = `walker_${tag}`;
  const password = 'walk-the-line-1';

  const browser = new Browser(t, freshIp());
  await browser.bootstrap();
  secrets.of(browser, 'anonymous');
  const registered = await browser.post(`${AUTH}/register/`, { name: 'Walker Test', email, username, password });
  assert.equal(registered.statusCode, 201, registered.body);
  const verifyToken = linkToken((await lastMail(t, email)).text, 'verify');
  secrets.add('verify token', verifyToken);
  assert.equal((await browser.post(`${AUTH}/verify/`, { token: verifyToken })).statusCode, 200);

  const stranger = new Browser(t, freshIp());
  assert.equal((await stranger.login(email, 'not-the-password-9')).statusCode, 401);
  secrets.of(stranger, 'failed login');

  const signedIn = await browser.login(username, password);
  assert.equal(signedIn.statusCode, 200, signedIn.body);
  secrets.of(browser, 'signed-in');
  const search = await browser.get('/api/v1/search/?q=walker');
  assert.equal(search.statusCode, 200, search.body);
  const renamed = await browser.post('/api/v1/client/account/', { name: 'Walker Renamed' }, { csrf: true });
  assert.equal(renamed.statusCode, 200, renamed.body);

  const created = await browser.post('/api/v1/client/tokens/', { name: 'walk', scopes: ['*'] }, { csrf: true });
  assert.equal(created.statusCode, 201, created.body);
  const secret = created.json().secret as string;
  secrets.add('API token', secret);
  const ip = freshIp();
  const bearer = (url: string, token = secret) =>
    t.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` }, remoteAddress: ip });
  assert.equal((await bearer('/api/v1/me')).statusCode, 200);
  assert.equal((await bearer('/api/v1/search/?q=walker')).statusCode, 200);
  assert.equal((await bearer('/cloud/v1/images')).statusCode, 200);
  const forged = `svc_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  secrets.add('unknown API token', forged);
  assert.equal((await bearer('/api/v1/me', forged)).statusCode, 401);

  const coder = new Browser(t, freshIp());
  await coder.bootstrap();
  secrets.of(coder, 'one-time code');
  assert.equal((await coder.post(`${AUTH}/otp-login/`, { action: 'request', identifier: email })).statusCode, 200);
  const code = loginCode((await lastMail(t, email)).text);
  secrets.add('one-time code', code);
  const wrong = code === '000000' ? '111111' : '000000';
  const miss = await coder.post(`${AUTH}/otp-login/`, { action: 'verify', identifier: email, code: wrong });
  assert.equal(miss.statusCode, 401, miss.body);
  const hit = await coder.post(`${AUTH}/otp-login/`, { action: 'verify', identifier: username, code });
  assert.equal(hit.statusCode, 200, hit.body);
  secrets.of(coder, 'code sign-in');
  assert.equal((await coder.get('/api/v1/search/?q=walker')).statusCode, 200);

  const forgetful = new Browser(t, freshIp());
  assert.equal((await forgetful.post(`${AUTH}/forgot/`, { identifier: email })).statusCode, 200);
  const resetToken = linkToken((await lastMail(t, email)).text, 'reset');
  secrets.add('reset token', resetToken);
  const reset = await forgetful.post(`${AUTH}/reset/`, { token: resetToken, password: 'walk-again-22' });
  assert.equal(reset.statusCode, 200, reset.body);
}

/** Every key and value the limit store holds for this app, one per line. */
async function storeContents(t: TestApp, prefix: string): Promise<{ kind: string; entries: string[] }> {
  const keys = await t.deps.limits.storedKeys();
  if (t.config.redisUrl) {
    // Read Redis directly, not through the code under test.
    const redis = new Redis(t.config.redisUrl);
    try {
      const entries: string[] = [];
      for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) {
        for (const key of batch as string[]) {
          const type = await redis.type(key);
          const value = type === 'string' ? await redis.get(key) : JSON.stringify(await redis.dump(key));
          entries.push(`${key} = ${value}`);
        }
      }
      return { kind: 'redis', entries: [...entries, ...keys] };
    } finally {
      redis.disconnect();
    }
  }
  if (t.config.engine === 'postgresql') {
    const { rows } = await sql<Record<string, unknown>>`select * from rate_limits`.execute(t.deps.database.db);
    return { kind: 'postgres', entries: [...rows.map((row) => JSON.stringify(row)), ...keys] };
  }
  return { kind: 'memory', entries: keys };
}

const stores: { label: string; redis?: boolean }[] = [{ label: "the app's own store" }];
if (onPostgres && redisUrl) stores.push({ label: 'the PostgreSQL table rate_limits', redis: false });

for (const store of stores) {
  describe(`T3-M6: no limit key or value holds a secret (${store.label})`, () => {
    let t: TestApp;
    const prefix = `hp-test:${randomBytes(6).toString('hex')}`;
    before(async () => {
      t = await createTestApp({
        ...(store.redis === false ? { redis: false } : {}),
        overrides: { rateLimitPrefix: prefix },
      });
    });
    after(() => t.close());

    test('after a full walk-through, the store holds counts under account, token, IP and hash keys only', async () => {
      const secrets = new Secrets();
      await walkThrough(t, secrets);
      const { kind, entries } = await storeContents(t, prefix);
      assert.ok(entries.length >= 10, `${kind}: the walk-through counted limits (${entries.length} entries)`);
      assert.ok(
        entries.some((e) => e.includes(':search:session:')),
        `${kind}: the session search limit is among them`,
      );
      for (const entry of entries) {
        assert.deepEqual(secrets.foundIn(entry), [], `${kind} entry holds a secret: ${entry}`);
      }
    });

    test('no log line or metric holds a session id, CSRF token or API token', async () => {
      const secrets = new Secrets();
      await walkThrough(t, secrets);
      const bearerOrSession = (kind: string) => /session id|CSRF token|API token/.test(kind);
      assert.deepEqual(secrets.foundIn(t.logs.text(), bearerOrSession), [], 'the log');
      assert.deepEqual(secrets.foundIn(await registry.metrics(), bearerOrSession), [], 'the metrics');
    });
  });
}
