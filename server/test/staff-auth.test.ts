// The staff console's sign-in (CONTRACT §14, issue 38): invitation → password → login → the
// forced authenticator enrolment → the routes; the code step at later sign-ins; idle and absolute
// expiry; cookies of one surface refused on the other; CSRF; disabling ends sessions at once.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { OPERATOR } from '../src/core/audit/audit.ts';
import { STAFF_SESSION_POLICY } from '../src/core/staff/staff-sessions.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { inviteToken, STAFF, StaffBrowser, signedInStaff, totpCode } from './support/staff.ts';

let t: TestApp;
const clock = new ManualClock();
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
});
after(() => t.close());

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:test');

describe('staff sign-in', () => {
  test('staff add mails an invitation; the link sets a password once; login then forces the enrolment', async () => {
    const added = await admin('staff', 'add', 'Asha@Staff.Example.in', '--role', 'support', '--name', 'Asha', '--json');
    assert.equal(added.exitCode, 0, added.stderr);
    const member = JSON.parse(added.stdout);
    assert.equal(member.email, 'asha@staff.example.in');
    assert.equal(member.status, 'invited');
    const token = await inviteToken(t, 'asha@staff.example.in');

    const browser = new StaffBrowser(t, freshIp());
    // Before the invitation is accepted there is no password to sign in with.
    const early = await browser.login('asha@staff.example.in', 'whatever-long-1');
    assert.equal(early.statusCode, 401);
    assert.equal(early.json().code, 'invalid_credentials');

    const weak = await browser.post('/auth/invite', { token, password: 'short1' });
    assert.equal(weak.statusCode, 422);
    assert.match(weak.json().errors.password, /12 characters/);
    const set = await browser.post('/auth/invite', { token, password: 'asha-staff-pass-1' });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().staff.status, 'active');
    const again = await browser.post('/auth/invite', { token, password: 'asha-staff-pass-2' });
    assert.equal(again.statusCode, 422, 'the link works once');
    assert.ok(again.json().errors.token);

    const wrong = await browser.login('asha@staff.example.in', 'asha-staff-pass-2');
    assert.equal(wrong.statusCode, 401);
    const login = await browser.login('ASHA@staff.example.in', 'asha-staff-pass-1');
    assert.equal(login.statusCode, 200, login.body);
    assert.equal(login.json().stage, 'enrol');
    const cookie = String(login.headers['set-cookie']);
    assert.match(cookie, /STAFFSESSID=[A-Za-z0-9_-]{43}/);
    assert.match(cookie, /Path=\//);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.doesNotMatch(cookie, /Secure/, 'PUBLIC_URL is http here');

    // Enrolment only: every other route is refused until an authenticator is enrolled.
    const blocked = await browser.get('/deposits');
    assert.equal(blocked.statusCode, 403);
    assert.equal(blocked.json().code, 'second_factor_required');
    assert.equal(blocked.json().success, false);
    const me = await browser.get('/me');
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().stage, 'enrol');
    assert.equal(me.json().staff.role, 'support');

    const begun = await browser.post('/auth/totp', { action: 'enrol' });
    assert.equal(begun.statusCode, 200, begun.body);
    assert.match(begun.json().otpauth_url, /^otpauth:\/\/totp\/Hostplane:staff%3Aasha/);
    const secret = begun.json().secret as string;
    const wrongCode = totpCode(clock, secret) === '000000' ? '111111' : '000000';
    const bad = await browser.post('/auth/totp', { action: 'verify', code: wrongCode });
    assert.equal(bad.statusCode, 422);
    const enrolSession = browser.sessionId;
    const done = await browser.post('/auth/totp', { action: 'verify', code: totpCode(clock, secret) });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().stage, 'full');
    assert.notEqual(browser.sessionId, enrolSession, 'a new session id once signed in');

    const deposits = await browser.get('/deposits');
    assert.equal(deposits.statusCode, 200, deposits.body);
    assert.deepEqual(deposits.json().deposits, []);
    const whoami = (await browser.get('/me')).json();
    assert.equal(whoami.stage, 'full');
    assert.equal(whoami.staff.totp, true);

    // The next sign-in asks for a code, not an enrolment; a code is accepted once.
    clock.advance(30);
    const next = new StaffBrowser(t, freshIp());
    const second = await next.login('asha@staff.example.in', 'asha-staff-pass-1');
    assert.equal(second.json().stage, 'totp');
    assert.equal((await next.get('/deposits')).json().code, 'second_factor_required');
    const enrolAgain = await next.post('/auth/totp', { action: 'enrol' });
    assert.equal(enrolAgain.statusCode, 409);
    const code = totpCode(clock, secret);
    const ok = await next.post('/auth/totp', { action: 'verify', code });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((await next.get('/deposits')).statusCode, 200);
    const third = new StaffBrowser(t, freshIp());
    await third.login('asha@staff.example.in', 'asha-staff-pass-1');
    const replay = await third.post('/auth/totp', { action: 'verify', code });
    assert.equal(replay.statusCode, 422, 'the same code is not accepted twice');

    // Logout ends the session.
    const ended = next.sessionId as string;
    const out = await next.post('/auth/logout');
    assert.equal(out.statusCode, 200);
    assert.equal(next.sessionId, undefined, 'the cookie is cleared');
    next.cookies.set('STAFFSESSID', ended);
    assert.equal((await next.get('/me')).statusCode, 401, 'the old id is dead');
  });

  test('sessions end after 30 minutes idle and 8 hours in all', async () => {
    const s = await signedInStaff(t, clock, 'support', freshIp());
    clock.advance(STAFF_SESSION_POLICY.idleSeconds - 60);
    assert.equal((await s.browser.get('/me')).statusCode, 200, 'used within 30 minutes');
    clock.advance(STAFF_SESSION_POLICY.idleSeconds + 1);
    const idle = await s.browser.get('/me');
    assert.equal(idle.statusCode, 401);
    assert.equal(idle.json().code, 'unauthenticated');

    const busy = await signedInStaff(t, clock, 'support', freshIp());
    // Used every 20 minutes, it still ends 8 hours after it began.
    for (let elapsed = 0; elapsed < STAFF_SESSION_POLICY.absoluteSeconds - 1800; elapsed += 1200) {
      clock.advance(1200);
      assert.equal((await busy.browser.get('/me')).statusCode, 200, `at ${elapsed + 1200} s`);
    }
    clock.advance(1800);
    assert.equal((await busy.browser.get('/me')).statusCode, 401, 'past 8 hours');
  });

  test('a customer session is 401 on the staff surface, and a staff session is 401 on the customer surface', async () => {
    const { browser: customer } = await signedInBrowser(t, freshIp());
    const onStaff = await t.inject({
      method: 'GET',
      url: `${STAFF}/me`,
      headers: { cookie: `SVCSESSID=${customer.sessionId}` },
    });
    assert.equal(onStaff.statusCode, 401);
    assert.equal(onStaff.json().code, 'unauthenticated');
    // Even with the customer's session id under the staff cookie's name.
    const renamed = await t.inject({
      method: 'GET',
      url: `${STAFF}/me`,
      headers: { cookie: `STAFFSESSID=${customer.sessionId}` },
    });
    assert.equal(renamed.statusCode, 401);

    const s = await signedInStaff(t, clock, 'admin', freshIp());
    const onClient = await t.inject({
      method: 'GET',
      url: '/api/v1/client/account/',
      headers: { cookie: `STAFFSESSID=${s.browser.sessionId}` },
    });
    assert.equal(onClient.statusCode, 401);
    const asSvc = await t.inject({
      method: 'GET',
      url: '/api/v1/client/account/',
      headers: { cookie: `SVCSESSID=${s.browser.sessionId}` },
    });
    assert.equal(asSvc.statusCode, 401);
  });

  test('every staff POST needs its own CSRF token: none, a wrong one or a customer one is 403', async () => {
    const s = await signedInStaff(t, clock, 'admin', freshIp());
    const body = { action: 'add', email: 'csrf@staff.example.in', role: 'support' };
    const none = await s.browser.post('/staff', body, { csrf: false });
    assert.equal(none.statusCode, 403);
    assert.equal(none.json().code, 'csrf_failed');
    const wrong = await s.browser.post('/staff', body, { csrf: 'x'.repeat(43) });
    assert.equal(wrong.json().code, 'csrf_failed');
    const { browser: customer } = await signedInBrowser(t, freshIp());
    const customerToken = await s.browser.post('/staff', body, { csrf: customer.csrfToken as string });
    assert.equal(customerToken.json().code, 'csrf_failed');
    const crossSite = await s.browser.post('/staff', body, { headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSite.json().code, 'csrf_failed');
    assert.equal(
      (await t.deps.staff.list()).some((m) => m.email === 'csrf@staff.example.in'),
      false,
    );
    // Login needs the anonymous session's token too.
    const fresh = new StaffBrowser(t, freshIp());
    const login = await fresh.post('/auth/login', { email: s.email, password: s.password }, { csrf: false });
    assert.equal(login.statusCode, 403);
    const ok = await s.browser.post('/staff', body);
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test('disabling a member ends their sessions at once and refuses their sign-in', async () => {
    const s = await signedInStaff(t, clock, 'billing', freshIp());
    assert.equal((await s.browser.get('/me')).statusCode, 200);
    const disabled = await admin('staff', 'disable', s.email, '--json');
    assert.equal(disabled.exitCode, 0, disabled.stderr);
    assert.equal(JSON.parse(disabled.stdout).sessions_ended, 1);
    assert.equal((await s.browser.get('/me')).statusCode, 401);
    const again = new StaffBrowser(t, freshIp());
    const login = await again.login(s.email, s.password);
    assert.equal(login.statusCode, 403);
    assert.equal(login.json().code, 'account_suspended');
    const wrong = await again.login(s.email, 'not-the-password-1');
    assert.equal(wrong.statusCode, 401, 'a wrong password says nothing about the state');
  });

  test('five wrong passwords lock the member for 15 minutes', async () => {
    const m = await t.deps.staff.add({ email: 'lock@staff.example.in', role: 'support' }, OPERATOR);
    const b = new StaffBrowser(t, freshIp());
    await b.bootstrap();
    await b.post('/auth/invite', { token: await inviteToken(t, m.email), password: 'lock-staff-pass-1' });
    for (let i = 0; i < 5; i++) assert.equal((await b.login(m.email, `wrong-pass-${i}-long`)).statusCode, 401);
    const locked = await b.login(m.email, 'lock-staff-pass-1');
    assert.equal(locked.statusCode, 429);
    assert.equal(locked.json().code, 'locked_out');
  });
});
