// Two-factor sign-in (issue 36, CONTRACT §11): TOTP (RFC 6238) and recovery codes, the half
// session a sign-in leaves until the second factor, the lockout it shares with wrong passwords,
// turning it off, and the staff reset. Codes are made here with the otpauth package's generator
// at the app's (manual) clock, apart from the verifier under test.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { runAdmin } from '../src/admin/run.ts';
import { matchTotp } from '../src/core/auth/totp.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, loginCode, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

let t: TestApp;
const clock = new ManualClock();
/** Every route of the server as registered, with its config (the session surface's route table). */
const routes: { method: string; url: string; config: Record<string, unknown>; bearer: boolean }[] = [];
before(async () => {
  t = await createTestApp({
    overrides: { clock: clock.now },
    extend: (app) =>
      app.addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) {
          routes.push({
            method: String(method),
            url: route.url,
            config: (route.config ?? {}) as Record<string, unknown>,
            bearer: (route.constraints as { auth?: string } | undefined)?.auth === 'bearer',
          });
        }
      }),
  });
});
after(() => t.close());

const SECURITY = '/api/v1/client/account/security/';
const TWO_FA = '/api/v1/client/auth/2fa/';

/** The code an authenticator app shows `offsetSteps` 30-second steps from the app's clock. */
function codeOf(secret: string, offsetSteps = 0): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() + offsetSteps * 30_000 });
}

/** Move the clock into the next 30-second step, so a new code exists (a code is accepted once). */
function nextStep(): void {
  clock.advance(30);
}

interface TwoFactorAccount {
  browser: Browser;
  username: string;
  email: string;
  accountId: number;
  password: string;
  secret: string;
  recovery: string[];
}

/** A signed-in account that has just turned two-factor sign-in on. */
async function withTwoFactor(): Promise<TwoFactorAccount> {
  const { browser, account, password } = await signedInBrowser(t, freshIp());
  const begun = await browser.post(SECURITY, { action: 'totp_begin' }, { csrf: true });
  assert.equal(begun.statusCode, 200, begun.body);
  const secret = begun.json().secret as string;
  const enabled = await browser.post(SECURITY, { action: 'totp_enable', code: codeOf(secret) }, { csrf: true });
  assert.equal(enabled.statusCode, 200, enabled.body);
  // Two steps on: the code of the previous step is then one not used yet.
  nextStep();
  nextStep();
  return {
    browser,
    username: account.username,
    email: account.email,
    accountId: account.id,
    password,
    secret,
    recovery: enabled.json().recovery_codes,
  };
}

/** A new browser that has given the right password: it holds a half session. */
async function halfSignedIn(a: TwoFactorAccount): Promise<Browser> {
  const browser = new Browser(t, freshIp());
  const res = await browser.login(a.username, a.password);
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().two_factor_required, true);
  return browser;
}

const second = (browser: Browser, body: Record<string, unknown>) => browser.post(TWO_FA, body, { csrf: true });

describe('TOTP (RFC 6238)', () => {
  test("the RFC's SHA-1 vectors (8 digits, its 20-byte key) through the verifier; 6 digits are their last six", () => {
    const key = new TextEncoder().encode('12345678901234567890');
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ];
    for (const [seconds, code] of vectors) {
      const at = new Date(seconds * 1000);
      assert.deepEqual(matchTotp(key, code, at, { digits: 8, window: 0 }), { step: Math.floor(seconds / 30) }, code);
      assert.deepEqual(matchTotp(key, code.slice(2), at, { window: 0 }), { step: Math.floor(seconds / 30) });
      const wrong = `${code.slice(0, 7)}${(Number(code[7]) + 1) % 10}`;
      assert.equal(matchTotp(key, wrong, at, { digits: 8, window: 0 }), null);
    }
  });

  test('one step either side is accepted, two are not; a step at or before the last accepted one is refused', () => {
    const key = new TextEncoder().encode('12345678901234567890');
    const at = new Date(59 * 1000 + 30_000); // step 2; the vector's code is step 1's
    assert.deepEqual(matchTotp(key, '94287082', at, { digits: 8 }), { step: 1 });
    assert.equal(matchTotp(key, '94287082', new Date(59_000 + 60_000), { digits: 8 }), null);
    assert.deepEqual(matchTotp(key, '94287082', new Date(59_000 - 30_000), { digits: 8 }), { step: 1 });
    assert.equal(matchTotp(key, '94287082', at, { digits: 8, afterStep: 1 }), null);
    assert.deepEqual(matchTotp(key, '94287082', at, { digits: 8, afterStep: 0 }), { step: 1 });
    assert.equal(matchTotp(key, '9428708', at, { digits: 8 }), null, 'too short');
  });
});

describe('turning it on', () => {
  test('begin shows a secret, its otpauth URL and an SVG QR code; the secret is stored sealed; enable needs a right code', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const status = await browser.get(SECURITY);
    assert.equal(status.statusCode, 200);
    assert.deepEqual(status.json().two_factor, { totp: false, recovery_codes_left: 0 });
    assert.deepEqual(status.json().passkeys, []);

    const begun = await browser.post(SECURITY, { action: 'totp_begin' }, { csrf: true });
    assert.equal(begun.statusCode, 200, begun.body);
    assert.equal(begun.headers['cache-control'], 'no-store');
    const { secret, otpauth_url, qr_svg } = begun.json();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match(otpauth_url, /^otpauth:\/\/totp\/Hostplane:/);
    assert.ok(otpauth_url.includes(`secret=${secret}`) && otpauth_url.includes('period=30'));
    assert.match(qr_svg, /<svg[^>]*>[\s\S]*<\/svg>/);
    const row = await t.deps.database.db
      .selectFrom('two_factor')
      .selectAll()
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.enabled_at, null, 'pending until confirmed');
    assert.ok(row.pending_secret?.startsWith('v1.') && !row.pending_secret.includes(secret), 'sealed at rest');

    const wrong = await browser.post(SECURITY, { action: 'totp_enable', code: codeOf(secret, 5) }, { csrf: true });
    assert.equal(wrong.statusCode, 422);
    assert.ok(wrong.json().errors.code);
    const noCsrf = await browser.post(SECURITY, { action: 'totp_enable', code: codeOf(secret) });
    assert.equal(noCsrf.statusCode, 403);

    const enabled = await browser.post(SECURITY, { action: 'totp_enable', code: codeOf(secret) }, { csrf: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
    const codes = enabled.json().recovery_codes as string[];
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const c of codes) assert.match(c, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const stored = await t.deps.database.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('account_id', '=', account.id)
      .execute();
    assert.equal(stored.length, 10);
    for (const s of stored)
      assert.ok(/^[0-9a-f]{64}$/.test(s.code_hash) && !codes.some((c) => s.code_hash.includes(c)));
    const on = await t.deps.database.db
      .selectFrom('two_factor')
      .selectAll()
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.ok(on.totp_secret?.startsWith('v1.') && !on.totp_secret.includes(secret));
    assert.equal(on.pending_secret, null);
    assert.deepEqual((await browser.get(SECURITY)).json().two_factor, { totp: true, recovery_codes_left: 10 });
    const again = await browser.post(SECURITY, { action: 'totp_begin' }, { csrf: true });
    assert.equal(again.statusCode, 409, 'already on');
  });
});

describe('signing in with two-factor on', () => {
  test('login answers two_factor_required with a half session; a code of the previous step completes it and rotates the id', async () => {
    const a = await withTwoFactor();
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const anonymous = browser.sessionId;
    const res = await browser.login(a.username, a.password);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.success, true);
    assert.equal(body.two_factor_required, true);
    assert.deepEqual(body.methods, ['totp', 'recovery']);
    assert.equal(body.account, undefined, 'nothing about the account yet');
    const half = browser.sessionId;
    assert.ok(half && half !== anonymous);
    const refused = await browser.get('/api/v1/client/account/');
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().code, 'two_factor_required');

    const tooOld = await second(browser, { code: codeOf(a.secret, -2) });
    assert.equal(tooOld.statusCode, 422);
    assert.ok(tooOld.json().errors.code);
    const done = await second(browser, { code: codeOf(a.secret, -1) });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().account.id, a.accountId);
    assert.notEqual(browser.sessionId, half, 'the session id changed');
    assert.equal((await browser.get('/api/v1/client/account/')).statusCode, 200);
    // The half session's id is dead.
    const old = new Browser(t, freshIp());
    old.cookies.set('SVCSESSID', half as string);
    assert.equal((await old.get('/api/v1/client/account/')).statusCode, 401);
    // A signed-in session has nothing to complete.
    assert.equal((await second(browser, { code: codeOf(a.secret, 1) })).statusCode, 409);
    nextStep();
  });

  test('a code is accepted once: the same code (and an older one) is refused within its window', async () => {
    const a = await withTwoFactor();
    const code = codeOf(a.secret);
    const first = await halfSignedIn(a);
    assert.equal((await second(first, { code })).statusCode, 200);
    const replay = await halfSignedIn(a);
    const again = await second(replay, { code });
    assert.equal(again.statusCode, 422, 'replayed');
    assert.equal((await second(replay, { code: codeOf(a.secret, -1) })).statusCode, 422, 'older than the last');
    assert.equal((await second(replay, { code: codeOf(a.secret, 1) })).statusCode, 200, 'the next step works');
    nextStep();
    nextStep();
  });

  test('otp-login verify with two-factor on also stops at the half session', async () => {
    const a = await withTwoFactor();
    const browser = new Browser(t, freshIp());
    await browser.post('/api/v1/client/auth/otp-login/', { action: 'request', identifier: a.email });
    const mailed = loginCode((await lastMail(t, a.email)).text);
    const res = await browser.post('/api/v1/client/auth/otp-login/', {
      action: 'verify',
      identifier: a.email,
      code: mailed,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().two_factor_required, true);
    assert.equal((await browser.get('/api/v1/client/services/')).json().code, 'two_factor_required');
    assert.equal((await second(browser, { recovery_code: a.recovery[0]?.toUpperCase() })).statusCode, 200);
    assert.equal((await browser.get('/api/v1/client/services/')).statusCode, 200);
  });

  test('remember carries through the second step; a half session ends after 10 minutes', async () => {
    const a = await withTwoFactor();
    const browser = new Browser(t, freshIp());
    const res = await browser.login(a.username, a.password, { remember: true });
    assert.equal(res.json().two_factor_required, true);
    const done = await second(browser, { code: codeOf(a.secret) });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().session.remember, true);
    assert.match(String(done.headers['set-cookie']), /Max-Age=2592000/i);
    nextStep();
    const late = await halfSignedIn(a);
    clock.advance(11 * 60);
    const expired = await second(late, { code: codeOf(a.secret) });
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().code, 'unauthenticated');
  });

  test('a half session can log out', async () => {
    const a = await withTwoFactor();
    const browser = await halfSignedIn(a);
    const half = browser.sessionId as string;
    const out = await browser.post('/api/v1/client/auth/logout/', undefined, { csrf: true });
    assert.equal(out.statusCode, 200, out.body);
    const again = new Browser(t, freshIp());
    again.cookies.set('SVCSESSID', half);
    assert.equal((await second(again, { code: codeOf(a.secret) })).json().code, 'unauthenticated');
  });
});

describe('a half session is refused everywhere else', () => {
  test('every route of the session surfaces but auth/2fa/ and logout answers it 401 two_factor_required', async () => {
    const a = await withTwoFactor();
    const browser = await halfSignedIn(a);
    const sessionSurface = (url: string) => url.startsWith('/api/v1/client/') || url.startsWith('/api/v1/search');
    const walked = routes.filter(
      (r) =>
        sessionSurface(r.url) &&
        !r.bearer &&
        ['GET', 'POST', 'DELETE'].includes(r.method) &&
        (r.config.access ?? 'client') === 'client',
    );
    const allowed = walked.filter((r) => r.config.halfSession === true).map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(allowed.sort(), [`POST ${TWO_FA}`, 'POST /api/v1/client/auth/logout/']);
    let checked = 0;
    for (const route of walked) {
      if (route.config.halfSession === true) continue;
      const name = `${route.method} ${route.url}`;
      const url = route.url.replace(/:\w+/g, '1');
      const verb = route.method as 'GET' | 'POST' | 'DELETE';
      const res = await browser.request(verb, url, verb === 'GET' ? { csrf: true } : { body: {}, csrf: true });
      assert.equal(res.statusCode, 401, `${name}: ${res.body}`);
      assert.equal(res.json().code, 'two_factor_required', name);
      checked++;
    }
    // The walk covers every operation the OpenAPI document says needs a session (public ones aside).
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
    };
    const walkedNames = new Set(walked.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`));
    const publicNames = new Set(routes.filter((r) => r.config.access === 'public').map((r) => `${r.method} ${r.url}`));
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (!(op.security ?? []).some((s) => 'session' in s) || publicNames.has(name)) continue;
        assert.ok(walkedNames.has(name), `${name} is in the document but was not walked`);
      }
    }
    assert.ok(checked >= 30, `${checked} routes checked`);
    // Nothing was minted from it: no API token.
    const tokens = await t.deps.database.db
      .selectFrom('api_tokens')
      .select('id')
      .where('account_id', '=', a.accountId)
      .execute();
    assert.equal(tokens.length, 0);
    // And the half session still completes.
    assert.equal((await second(browser, { code: codeOf(a.secret) })).statusCode, 200);
    nextStep();
  });
});

describe('the lockout', () => {
  test('3 wrong passwords and 2 wrong codes lock the account, for codes and passwords alike', async () => {
    const a = await withTwoFactor();
    for (let i = 0; i < 3; i++) {
      assert.equal((await new Browser(t, freshIp()).login(a.username, `wrong-${i}-pass9`)).statusCode, 401);
    }
    const browser = await halfSignedIn(a);
    for (let i = 0; i < 2; i++) {
      const wrong = await second(browser, { code: codeOf(a.secret, 4 + i) });
      assert.equal(wrong.statusCode, 422, wrong.body);
    }
    const locked = await second(browser, { code: codeOf(a.secret) });
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.json().code, 'locked_out');
    assert.ok(Number(locked.headers['retry-after']) > 0);
    const password = await new Browser(t, freshIp()).login(a.username, a.password);
    assert.equal(password.statusCode, 429);
    assert.equal(password.json().code, 'locked_out');
  });

  test('5 wrong codes lock it; a malformed code costs no try', async () => {
    const a = await withTwoFactor();
    const browser = await halfSignedIn(a);
    const malformed = await second(browser, { code: '12ab' });
    assert.equal(malformed.statusCode, 422);
    for (let i = 0; i < 5; i++) {
      assert.equal((await second(browser, { code: codeOf(a.secret, 5 + i) })).statusCode, 422, `wrong code ${i + 1}`);
    }
    const locked = await second(browser, { recovery_code: a.recovery[0] });
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.json().code, 'locked_out');
  });
});

describe('recovery codes', () => {
  test('each works once, even when two sign-ins use the same one at the same time', async () => {
    const a = await withTwoFactor();
    const [one, two] = await Promise.all([halfSignedIn(a), halfSignedIn(a)]);
    const results = await Promise.all([
      second(one, { recovery_code: a.recovery[1] }),
      second(two, { recovery_code: a.recovery[1] }),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 422], results.map((r) => r.body).join('\n'));
    const [signedIn, loser] = results[0]?.statusCode === 200 ? [one, two] : [two, one];
    assert.equal((await signedIn.get(SECURITY)).json().two_factor.recovery_codes_left, 9);
    assert.equal((await second(loser, { recovery_code: a.recovery[2] })).statusCode, 200);
    assert.equal((await a.browser.get(SECURITY)).json().two_factor.recovery_codes_left, 8);
  });

  test('regenerate needs a code and replaces them all', async () => {
    const a = await withTwoFactor();
    const wrong = await a.browser.post(
      SECURITY,
      { action: 'recovery_regenerate', code: codeOf(a.secret, 6) },
      { csrf: true },
    );
    assert.equal(wrong.statusCode, 422);
    assert.ok(wrong.json().errors.code);
    const res = await a.browser.post(
      SECURITY,
      { action: 'recovery_regenerate', code: codeOf(a.secret) },
      { csrf: true },
    );
    assert.equal(res.statusCode, 200, res.body);
    const fresh = res.json().recovery_codes as string[];
    assert.equal(fresh.length, 10);
    nextStep();
    assert.equal((await second(await halfSignedIn(a), { recovery_code: a.recovery[0] })).statusCode, 422, 'old');
    assert.equal((await second(await halfSignedIn(a), { recovery_code: fresh[0] })).statusCode, 200, 'new');
  });
});

describe('turning it off', () => {
  test('needs the password and a code (or a recovery code)', async () => {
    const a = await withTwoFactor();
    const off = (body: Record<string, unknown>) =>
      a.browser.post(SECURITY, { action: 'totp_disable', ...body }, { csrf: true });
    const noPassword = await off({ code: codeOf(a.secret) });
    assert.equal(noPassword.statusCode, 422);
    assert.ok(noPassword.json().errors.password);
    const noCode = await off({ password: a.password });
    assert.equal(noCode.statusCode, 422);
    assert.ok(noCode.json().errors.code);
    const wrongPassword = await off({ password: 'not-the-password-1', code: codeOf(a.secret) });
    assert.equal(wrongPassword.statusCode, 422);
    assert.ok(wrongPassword.json().errors.password);
    const wrongCode = await off({ password: a.password, code: codeOf(a.secret, 7) });
    assert.equal(wrongCode.statusCode, 422);
    assert.ok(wrongCode.json().errors.code);
    const done = await off({ password: a.password, recovery_code: a.recovery[3] });
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(done.json().two_factor, { totp: false, recovery_codes_left: 0 });
    const rows = await t.deps.database.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', a.accountId)
      .execute();
    assert.equal(rows.length, 0);
    const plain = await new Browser(t, freshIp()).login(a.username, a.password);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.json().account.id, a.accountId, 'signed in with the password alone');
  });
});

describe('staff reset', () => {
  const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps);

  test('accounts 2fa-reset turns it off, deletes the recovery codes, ends every session and mails the customer', async () => {
    const a = await withTwoFactor();
    const half = await halfSignedIn(a);
    const result = await admin('accounts', '2fa-reset', a.email, '--json');
    assert.equal(result.exitCode, 0, result.stderr);
    const out = JSON.parse(result.stdout);
    assert.equal(out.two_factor_was_on, true);
    assert.equal(out.sessions_ended, 2, 'the signed-in one and the half one');
    assert.equal((await a.browser.get(SECURITY)).statusCode, 401);
    assert.equal((await second(half, { code: codeOf(a.secret) })).statusCode, 401);
    const mail = await lastMail(t, a.email);
    assert.equal(mail.row.template, 'two_factor_reset');
    assert.match(mail.text, /turned off two-factor sign-in/);
    const left = await t.deps.database.db
      .selectFrom('recovery_codes')
      .select('id')
      .where('account_id', '=', a.accountId)
      .execute();
    assert.equal(left.length, 0);
    const plain = await new Browser(t, freshIp()).login(a.username, a.password);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.json().account.id, a.accountId);
    const byId = await admin('accounts', '2fa-reset', String(a.accountId));
    assert.equal(byId.exitCode, 0, byId.stderr);
    assert.match(byId.stdout, /was not on/);
  });

  test('an account without two-factor: unchanged sign-in, and a plain account never gets a half session', async () => {
    const { account, password } = await createAccount(t);
    const res = await new Browser(t, freshIp()).login(account.username, password);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().two_factor_required, undefined);
  });
});
