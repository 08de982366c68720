// The sessions list (issue 36, CONTRACT §11): where an account is signed in (a public id, the
// address and the device, never the cookie), ending one session or all the others, and a revoked
// session refused by every app instance on the database: on PostgreSQL the second instance has a
// pool and a change listener of its own, as another process would (with Redis when the run has it).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { deviceOf } from '../src/core/auth/device.ts';
import { sha256Hex } from '../src/core/crypto/secrets.ts';
import { closeDeps, createDeps } from '../src/core/deps.ts';
import { type Database, openDatabase } from '../src/db/database.ts';
import { buildServer } from '../src/http/server.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, linkToken, type TestAccount } from './support/factories.ts';
import { createTestApp, ManualClock, onPostgres, silentLogger, type TestApp } from './support/harness.ts';
import { waitFor } from './support/wait.ts';

const SESSIONS = '/api/v1/client/account/sessions/';
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

let t: TestApp;
/** A second app instance on the same database (see the top of this file). */
let other: TestApp;
const clock = new ManualClock();
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  let database: Database = t.deps.database;
  if (onPostgres) {
    database = await openDatabase({ engine: 'postgresql', url: t.config.databaseUrl as string, poolSize: 4 });
    cleanups.push(() => database.close());
  }
  // Redis outlives a run: this instance's counters live under a prefix of their own too.
  const deps = await createDeps(t.config, database, silentLogger, {
    clock: clock.now,
    rateLimitPrefix: `hp-test:${randomBytes(6).toString('hex')}`,
  });
  const app = buildServer(deps);
  await app.ready();
  cleanups.push(async () => {
    await app.close();
    await closeDeps(deps);
  });
  other = { ...t, app, deps, inject: (options: InjectOptions) => app.inject(options) };
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await t.close();
});

/** Sign in through the login route with a browser's user agent. */
async function signIn(app: TestApp, who: TestAccount, userAgent: string, ip = freshIp()): Promise<Browser> {
  const browser = new Browser(app, ip);
  const headers = { 'user-agent': userAgent };
  await browser.get('/api/v1/client/auth/csrf/', { headers });
  const res = await browser.post(
    '/api/v1/client/auth/login/',
    { identifier: who.account.username, password: who.password },
    { headers, csrf: true },
  );
  assert.equal(res.statusCode, 200, res.body);
  return browser;
}

/** The same cookie jar in another app instance (the same browser, its next request on the other). */
function onOther(browser: Browser): Browser {
  const twin = new Browser(other, browser.ip);
  for (const [k, v] of browser.cookies) twin.cookies.set(k, v);
  twin.csrfToken = browser.csrfToken;
  return twin;
}

const status = async (browser: Browser) => (await browser.get('/api/v1/client/account/')).statusCode;

interface Listed {
  id: number;
  created_at: string;
  last_seen_at: string;
  ip: string | null;
  device: string;
  current: boolean;
}

async function list(browser: Browser): Promise<Listed[]> {
  const res = await browser.get(SESSIONS);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().sessions;
}

describe('the sessions list', () => {
  test('each signed-in session with its address and device; the current one marked; never a cookie or its hash', async () => {
    const who = await createAccount(t);
    const windows = await signIn(t, who, CHROME_WINDOWS, '10.200.0.1');
    clock.advance(5);
    const phone = await signIn(t, who, SAFARI_IPHONE, '10.200.0.2');
    const res = await windows.get(SESSIONS);
    assert.equal(res.statusCode, 200);
    const sessions = res.json().sessions as Listed[];
    assert.equal(sessions.length, 2);
    const mine = sessions.find((s) => s.current);
    const theirs = sessions.find((s) => !s.current);
    assert.deepEqual({ ip: mine?.ip, device: mine?.device }, { ip: '10.200.0.1', device: 'Chrome on Windows' });
    assert.deepEqual({ ip: theirs?.ip, device: theirs?.device }, { ip: '10.200.0.2', device: 'Safari on iOS' });
    for (const s of sessions) {
      assert.ok(Number.isInteger(s.id) && s.id > 0);
      assert.match(s.created_at, /^\d{4}-\d\d-\d\dT/);
      assert.match(s.last_seen_at, /^\d{4}-\d\d-\d\dT/);
    }
    for (const cookie of [windows.sessionId, phone.sessionId] as string[]) {
      assert.ok(!res.body.includes(cookie), 'no cookie value');
      assert.ok(!res.body.includes(sha256Hex(cookie)), 'no cookie hash');
    }
    const fromPhone = await list(phone);
    assert.equal(fromPhone.find((s) => s.current)?.id, theirs?.id);
    // Another account sees only its own.
    const stranger = await signIn(t, await createAccount(t), FIREFOX_LINUX);
    assert.deepEqual(
      (await list(stranger)).map((s) => s.device),
      ['Firefox on Linux'],
    );
  });

  test('revoke ends one session at once; an id of no session of the account is 404 not_owner and ends nothing', async () => {
    const who = await createAccount(t);
    const a = await signIn(t, who, CHROME_WINDOWS);
    const b = await signIn(t, who, SAFARI_IPHONE);
    const stranger = await signIn(t, await createAccount(t), FIREFOX_LINUX);
    const strangerId = (await list(stranger))[0]?.id as number;
    const foreign = await a.post(SESSIONS, { action: 'revoke', id: strangerId }, { csrf: true });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().code, 'not_owner');
    assert.equal(await status(stranger), 200);
    const unknown = await a.post(SESSIONS, { action: 'revoke', id: 2_000_000_000 }, { csrf: true });
    assert.equal(unknown.statusCode, 404);
    assert.equal((await a.post(SESSIONS, { action: 'revoke' }, { csrf: true })).statusCode, 422);
    assert.equal((await a.post(SESSIONS, { action: 'revoke_others' })).statusCode, 403, 'CSRF');

    const bId = (await list(a)).find((s) => !s.current)?.id;
    assert.equal(await status(b), 200);
    const revoked = await a.post(SESSIONS, { action: 'revoke', id: bId }, { csrf: true });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal(revoked.json().sessions_ended, 1);
    assert.equal(await status(b), 401);
    assert.equal((await list(a)).length, 1);
  });

  test('revoke_others keeps the current session only; revoking the current one signs this browser out', async () => {
    const who = await createAccount(t);
    const a = await signIn(t, who, CHROME_WINDOWS);
    const b = await signIn(t, who, SAFARI_IPHONE);
    const c = await signIn(t, who, FIREFOX_LINUX);
    const res = await a.post(SESSIONS, { action: 'revoke_others' }, { csrf: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().sessions_ended, 2);
    assert.deepEqual([await status(a), await status(b), await status(c)], [200, 401, 401]);
    const own = (await list(a))[0]?.id;
    const self = await a.post(SESSIONS, { action: 'revoke', id: own }, { csrf: true });
    assert.equal(self.statusCode, 200);
    assert.equal(a.sessionId, undefined, 'the cookie is cleared');
  });
});

describe('across two app instances on one database', () => {
  test('a session revoked through one instance is refused by both', async () => {
    const who = await createAccount(t);
    const a = await signIn(t, who, CHROME_WINDOWS);
    const b = await signIn(t, who, SAFARI_IPHONE);
    const c = await signIn(t, who, FIREFOX_LINUX);
    const bOther = onOther(b);
    const cOther = onOther(c);
    // Both instances have the sessions cached.
    for (const browser of [b, bOther, c, cOther, b, bOther, c, cOther]) assert.equal(await status(browser), 200);

    const bId = (await list(a)).find((s) => s.device === 'Safari on iOS')?.id;
    assert.equal((await a.post(SESSIONS, { action: 'revoke', id: bId }, { csrf: true })).statusCode, 200);
    assert.equal(await status(b), 401, 'refused at once by the instance that revoked it');
    await refusedByOther(bOther);

    // The other way round: revoke_others asked of the second instance.
    const aOther = onOther(a);
    assert.equal(await status(aOther), 200);
    const res = await aOther.post(SESSIONS, { action: 'revoke_others' }, { csrf: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().sessions_ended, 1);
    assert.equal(await status(cOther), 401);
    await refusedByOther(c);
    assert.equal(await status(a), 200);
    assert.equal(await status(aOther), 200);
  });

  test('a password change ends the other sessions on both instances; a reset ends every one', async () => {
    const who = await createAccount(t);
    const a = await signIn(t, who, CHROME_WINDOWS);
    const b = await signIn(t, who, SAFARI_IPHONE);
    const bOther = onOther(b);
    assert.equal(await status(bOther), 200);
    const changed = await a.post(
      '/api/v1/client/account/',
      { current_password: who.password, password: 'new-password-42' },
      { csrf: true },
    );
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.json().sessions_ended, 1);
    assert.equal(await status(b), 401);
    await refusedByOther(bOther);
    assert.equal(await status(a), 200);

    const aOther = onOther(a);
    assert.equal(await status(aOther), 200);
    await new Browser(t, freshIp()).post('/api/v1/client/auth/forgot/', { identifier: who.account.email });
    const token = linkToken((await lastMail(t, who.account.email)).text, 'reset');
    const reset = await new Browser(other, freshIp()).post('/api/v1/client/auth/reset/', {
      token,
      password: 'newer-password-43',
    });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal(await status(aOther), 401, 'refused at once by the instance that reset it');
    await refusedByOther(a);
  });
});

/**
 * The instance that did not make the change refuses the session: at once on PGlite (one database
 * in one process: both instances see its commits), on PostgreSQL when the database's change notice
 * reaches its listener (it is sent at commit; the deadline only guards against a hang).
 */
async function refusedByOther(browser: Browser): Promise<void> {
  if (!onPostgres) {
    assert.equal(await status(browser), 401);
    return;
  }
  await waitFor('the other instance to refuse the ended session', async () => (await status(browser)) === 401);
}

describe('devices', () => {
  test('read from the user agent', () => {
    const cases: [string | null, string][] = [
      [CHROME_WINDOWS, 'Chrome on Windows'],
      [SAFARI_IPHONE, 'Safari on iOS'],
      [FIREFOX_LINUX, 'Firefox on Linux'],
      [
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
        'Safari on macOS',
      ],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
        'Edge on Windows',
      ],
      [
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
        'Chrome on Android',
      ],
      ['curl/8.5.0', 'curl'],
      [null, 'Unknown device'],
      ['', 'Unknown device'],
      ['something else entirely', 'Unknown device'],
    ];
    for (const [ua, device] of cases) assert.equal(deviceOf(ua), device, String(ua));
  });
});
