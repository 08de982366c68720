// Password login, sessions (rotation, expiry, revocation, cookie flags) and lockout.

import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { after, before, describe, test } from 'node:test';
import { hashPassword } from '../src/core/accounts/password.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, linkToken } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

let t: TestApp;
const clock = new ManualClock();
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
});
after(() => t.close());

const LOGIN = '/api/v1/client/auth/login/';
const ACCOUNT = '/api/v1/client/account/';

describe('login', () => {
  test('needs the CSRF token of the current session', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    const noCookie = await browser.post(LOGIN, { identifier: account.email, password });
    assert.equal(noCookie.statusCode, 403);
    assert.equal(noCookie.json().code, 'csrf_failed');
    await browser.bootstrap();
    const noToken = await browser.post(LOGIN, { identifier: account.email, password });
    assert.equal(noToken.statusCode, 403);
    const other = new Browser(t, freshIp());
    await other.bootstrap();
    const foreign = await browser.post(LOGIN, { identifier: account.email, password, csrf_token: other.csrfToken });
    assert.equal(foreign.statusCode, 403, "another session's token does not count");
    const header = await browser.post(LOGIN, { identifier: account.email, password }, { csrf: true });
    assert.equal(header.statusCode, 200, 'the header form works');
  });

  test('a body with only the CSRF token names both missing fields', async () => {
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const res = await browser.post(LOGIN, { csrf_token: browser.csrfToken });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['identifier', 'password']);
  });

  test('by e-mail or username in any case, or the `email` alias; the session id rotates', async () => {
    const { account, password } = await createAccount(t);
    for (const identifier of [account.email.toUpperCase(), account.username, ` ${account.username} `]) {
      const browser = new Browser(t, freshIp());
      const anonymous = await browser.bootstrap();
      const anonymousId = browser.sessionId;
      const res = await browser.login(identifier, password);
      assert.equal(res.statusCode, 200, identifier);
      assert.notEqual(browser.sessionId, anonymousId, 'new session id at login');
      assert.notEqual(browser.csrfToken, anonymous, 'new CSRF token at login');
      assert.equal(res.json().account.id, account.id);
    }
    const alias = new Browser(t, freshIp());
    await alias.bootstrap();
    assert.equal(
      (await alias.post(LOGIN, { email: account.email, password, csrf_token: alias.csrfToken })).statusCode,
      200,
    );
    const neither = await alias.post(LOGIN, { password, csrf_token: alias.csrfToken });
    assert.equal(neither.statusCode, 422);
    assert.equal(neither.json().errors.identifier, 'is required');
  });

  test('signing in again replaces the old session, which stops working', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    await browser.login(account.username, password);
    const first = browser.sessionId as string;
    await browser.login(account.username, password);
    assert.notEqual(browser.sessionId, first);
    const stale = await t.inject({ method: 'GET', url: ACCOUNT, headers: { cookie: `SVCSESSID=${first}` } });
    assert.equal(stale.statusCode, 401);
  });

  test('cookie: HttpOnly, SameSite=Lax, path /; `remember` adds a 30-day Max-Age', async () => {
    const { account, password } = await createAccount(t);
    const plain = new Browser(t, freshIp());
    const res = await plain.login(account.username, password);
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /SVCSESSID=[A-Za-z0-9_-]{43}/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\//);
    assert.doesNotMatch(cookie, /Max-Age/);
    assert.doesNotMatch(cookie, /Secure/, 'PUBLIC_URL is http here');
    const remembered = await new Browser(t, freshIp()).login(account.username, password, { remember: true });
    assert.match(String(remembered.headers['set-cookie']), /Max-Age=2592000/);
    assert.equal(remembered.json().session.remember, true);
  });

  test('wrong password and unknown identifier: the same 401', async () => {
    const { account } = await createAccount(t);
    const wrong = await new Browser(t, freshIp()).login(account.username, 'not-the-password1');
    const unknown = await new Browser(t, freshIp()).login('nobody-here', 'not-the-password1');
    assert.equal(wrong.statusCode, 401);
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(wrong.json(), unknown.json());
    assert.equal(wrong.json().code, 'invalid_credentials');
  });

  test('an unknown identifier costs a password hash too (no timing shortcut)', async () => {
    // Counted, not timed: the argon2 work items (native async work, seen through async_hooks)
    // that one login starts. An unknown identifier must run a verify just like a known one.
    const argonType = await nativeWorkType(() => hashPassword('calibration-1'));
    const { account } = await createAccount(t);
    const verifies = async (identifier: string) => {
      const browser = new Browser(t, freshIp());
      await browser.bootstrap();
      return countNativeWork(argonType, () =>
        browser.post(LOGIN, { identifier, password: 'wrong-password-1', csrf_token: browser.csrfToken }),
      );
    };
    await verifies('ghost-warm-up'); // the first unknown one also hashes the dummy once
    assert.equal(await verifies(account.username), 1);
    assert.equal(await verifies('ghost-1'), 1);
    assert.equal(await verifies('ghost2@example.com'), 1);
  });

  test('suspended: 403 with the right password, plain 401 with a wrong one', async () => {
    const { account, password } = await createAccount(t, { suspended: true });
    const right = await new Browser(t, freshIp()).login(account.username, password);
    assert.equal(right.statusCode, 403);
    assert.equal(right.json().code, 'account_suspended');
    const wrong = await new Browser(t, freshIp()).login(account.username, 'wrong-password-1');
    assert.equal(wrong.statusCode, 401);
  });
});

describe('lockout', () => {
  test('failures 1–5 are 401; then 429 locked_out with Retry-After, even with the right password', async () => {
    const { account, password } = await createAccount(t);
    for (let i = 1; i <= 5; i++) {
      const res = await new Browser(t, freshIp()).login(account.username, `wrong-${i}-password`);
      assert.equal(res.statusCode, 401, `attempt ${i}`);
    }
    const locked = await new Browser(t, freshIp()).login(account.email, password);
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.json().code, 'locked_out');
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(retryAfter > 850 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  });

  // Every attempt is counted before its password is checked, so a burst cannot race the lock
  // (security review F1). A success gives back its own attempt only: it no longer wipes earlier
  // failures, since that would also lift a lock that concurrent guesses had earned meanwhile.
  test('successes do not count as failures, and do not wipe the failures before them', async () => {
    const { account, password } = await createAccount(t);
    for (let i = 0; i < 4; i++) await new Browser(t, freshIp()).login(account.username, 'wrong-password-1');
    for (let i = 0; i < 3; i++) {
      assert.equal((await new Browser(t, freshIp()).login(account.username, password)).statusCode, 200);
    }
    assert.equal((await new Browser(t, freshIp()).login(account.username, 'wrong-password-1')).statusCode, 401);
    const locked = await new Browser(t, freshIp()).login(account.username, password);
    assert.equal(locked.statusCode, 429, 'the fifth failure locks');
    assert.equal(locked.json().code, 'locked_out');
  });

  test('unknown identifiers lock the same way (no account enumeration through lockout)', async () => {
    for (let i = 1; i <= 5; i++)
      assert.equal((await new Browser(t, freshIp()).login('ghost-user', 'wrong-password-1')).statusCode, 401);
    assert.equal((await new Browser(t, freshIp()).login('ghost-user', 'wrong-password-1')).statusCode, 429);
  });

  test('a lockout does not block the password-reset path, and a reset lifts it', async () => {
    const { account } = await createAccount(t);
    for (let i = 0; i < 5; i++) await new Browser(t, freshIp()).login(account.username, 'wrong-password-1');
    assert.equal((await new Browser(t, freshIp()).login(account.username, 'wrong-password-1')).statusCode, 429);
    const browser = new Browser(t, freshIp());
    assert.equal((await browser.post('/api/v1/client/auth/forgot/', { identifier: account.email })).statusCode, 200);
    const token = linkToken((await lastMail(t, account.email)).text, 'reset');
    assert.equal(
      (await browser.post('/api/v1/client/auth/reset/', { token, password: 'brand-new-pass-7' })).statusCode,
      200,
    );
    assert.equal((await new Browser(t, freshIp()).login(account.username, 'brand-new-pass-7')).statusCode, 200);
  });

  test('failed logins per IP are capped too', async () => {
    const ip = freshIp();
    let status = 0;
    for (let i = 0; i < 51 && status !== 429; i++) {
      status = (await new Browser(t, ip).login(`spray-${i}`, 'wrong-password-1')).statusCode;
    }
    assert.equal(status, 429);
  });
});

describe('sessions', () => {
  test('idle for 2 hours ends a session; activity keeps it; 24 hours ends it regardless', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    await browser.login(account.username, password);
    for (let i = 1; i <= 13; i++) {
      clock.advance(100 * 60); // 100 minutes at a time: under the idle limit, 21.7 h in all
      assert.equal((await browser.get(ACCOUNT)).statusCode, 200, `after ${i * 100} min`);
    }
    clock.advance(3 * 3600); // 24.7 h since login
    assert.equal((await browser.get(ACCOUNT)).statusCode, 401);
    const idle = new Browser(t, freshIp());
    await idle.login(account.username, password);
    clock.advance(2 * 3600 + 1);
    assert.equal((await idle.get(ACCOUNT)).statusCode, 401);
  });

  test('remember keeps a session across two idle hours', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    await browser.login(account.username, password, { remember: true });
    clock.advance(3 * 3600);
    assert.equal((await browser.get(ACCOUNT)).statusCode, 200);
  });

  test('logout destroys the session server-side: the old cookie is dead even if replayed', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    await browser.login(account.username, password);
    const id = browser.sessionId as string;
    const out = await browser.post('/api/v1/client/auth/logout/', undefined, { csrf: true });
    assert.equal(out.statusCode, 200);
    assert.match(String(out.headers['set-cookie']), /SVCSESSID=;/);
    const replay = await t.inject({ method: 'GET', url: ACCOUNT, headers: { cookie: `SVCSESSID=${id}` } });
    assert.equal(replay.statusCode, 401);
    assert.equal(replay.json().code, 'unauthenticated');
  });

  test('sessions are stored hashed: the cookie value is nowhere in the database', async () => {
    const { account, password } = await createAccount(t);
    const browser = new Browser(t, freshIp());
    await browser.login(account.username, password);
    const rows = await t.deps.database.db
      .selectFrom('sessions')
      .select('id_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]?.id_hash, browser.sessionId);
    assert.match(rows[0]?.id_hash ?? '', /^[0-9a-f]{64}$/);
  });
});

/** The async-resource type of the native work `fn` starts (argon2 runs as native async work). */
async function nativeWorkType(fn: () => Promise<unknown>): Promise<string> {
  const types: string[] = [];
  const hook = createHook({ init: (_id, type) => void types.push(type) }).enable();
  await fn();
  hook.disable();
  const native = types.filter((type) => !/^(PROMISE|TickObject|Timeout|Immediate|Microtask)$/.test(type));
  assert.equal(native.length, 1, `one native work item: ${types.join(', ')}`);
  return native[0] as string;
}

/** How many async resources of `type` are created while `fn` runs. */
async function countNativeWork(type: string, fn: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const hook = createHook({
    init: (_id, seen) => {
      if (seen === type) count++;
    },
  }).enable();
  try {
    await fn();
  } finally {
    hook.disable();
  }
  return count;
}
