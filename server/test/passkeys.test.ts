// Passkeys (issue 36 part B, CONTRACT §11), without a browser: a software authenticator
// (support/soft-authenticator.ts) answers the options the server hands out, as a browser and a
// platform authenticator would. Registering and listing them, signing in with one alone
// (discoverable, by its user handle), one as the second factor of a half session, and every way
// an answer can be wrong: replayed, another challenge, origin or RP id, a deleted passkey, a
// counter that went back, another browser's challenge. Failures count towards the lockout the
// password shares. The relying party is whatever PUBLIC_URL the harness set.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { type Bend, SoftAuthenticator } from './support/soft-authenticator.ts';

let t: TestApp;
const clock = new ManualClock();
let origin: string;
let rpId: string;
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  origin = new URL(t.config.publicUrl).origin;
  rpId = new URL(t.config.publicUrl).hostname;
});
after(() => t.close());

const SECURITY = '/api/v1/client/account/security/';
const PASSKEY = '/api/v1/client/auth/passkey/';
const TWO_FA = '/api/v1/client/auth/2fa/';
const ACCOUNT = '/api/v1/client/account/';

/** Add a passkey named `name` through the two security actions; the finish answer. */
async function register(browser: Browser, authenticator: SoftAuthenticator, name: string, bend: Bend = {}) {
  const begun = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
  assert.equal(begun.statusCode, 200, begun.body);
  const response = authenticator.create(begun.json().options, bend);
  return browser.post(SECURITY, { action: 'passkey_finish', name, response }, { csrf: true });
}

/** A signed-in account with one passkey on a new authenticator. */
async function withPasskey(name = 'Laptop') {
  const signed = await signedInBrowser(t, freshIp());
  const authenticator = new SoftAuthenticator(origin);
  const res = await register(signed.browser, authenticator, name);
  assert.equal(res.statusCode, 200, res.body);
  return { ...signed, authenticator, passkey: res.json().passkey as { id: number; name: string } };
}

/** A new browser's sign-in with a passkey alone: options, the authenticator's answer, the POST. */
async function passkeySignIn(authenticator: SoftAuthenticator, bend: Bend = {}, browser = new Browser(t, freshIp())) {
  const options = await browser.get(PASSKEY);
  assert.equal(options.statusCode, 200, options.body);
  const response = authenticator.get(options.json().options, bend);
  const res = await browser.post(PASSKEY, { response }, { csrf: true });
  return { browser, res, response };
}

function assertRefused(res: { statusCode: number; json(): Record<string, unknown> }, what: string) {
  assert.equal(res.statusCode, 401, `${what}: ${JSON.stringify(res.json())}`);
  assert.equal(res.json().code, 'invalid_credentials', what);
  assert.equal(res.json().message, 'This passkey could not be verified.', what);
}

async function storedPasskey(id: number) {
  return t.deps.database.db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('registering', () => {
  test('two passkeys with names, listed oldest first; the options name this relying party and exclude the ones held', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const authenticator = new SoftAuthenticator(origin);
    assert.deepEqual((await browser.get(SECURITY)).json().passkeys, []);

    const begun = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    assert.equal(begun.statusCode, 200, begun.body);
    assert.equal(begun.headers['cache-control'], 'no-store');
    const options = begun.json().options;
    assert.deepEqual(options.rp, { name: 'Hostplane', id: rpId });
    assert.equal(options.user.name, account.email);
    assert.equal(options.user.displayName, account.name);
    assert.match(options.user.id, /^[A-Za-z0-9_-]{43}$/, 'an opaque 32-byte handle');
    assert.equal(options.authenticatorSelection.residentKey, 'required');
    assert.equal(options.authenticatorSelection.userVerification, 'preferred');
    assert.equal(options.attestation, 'none');
    assert.deepEqual(options.excludeCredentials, []);
    assert.ok(options.pubKeyCredParams.some((p: { alg: number }) => p.alg === -7));
    const first = await browser.post(
      SECURITY,
      { action: 'passkey_finish', name: '  Laptop  ', response: authenticator.create(options) },
      { csrf: true },
    );
    assert.equal(first.statusCode, 200, first.body);
    const laptop = first.json().passkey;
    assert.equal(laptop.name, 'Laptop');
    assert.equal(laptop.last_used_at, null);
    assert.ok(Number.isInteger(laptop.id) && !Number.isNaN(Date.parse(laptop.created_at)));

    // The second ceremony excludes the first credential (an authenticator holding it refuses).
    const again = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    const [firstCredential] = authenticator.credentials;
    assert.deepEqual(
      again.json().options.excludeCredentials.map((c: { id: string }) => c.id),
      [firstCredential?.id.toString('base64url')],
    );
    assert.equal(again.json().options.user.id, options.user.id, 'one user handle per account');
    assert.throws(() => authenticator.create(again.json().options), /InvalidStateError/);
    const phone = new SoftAuthenticator(origin);
    const second = await browser.post(
      SECURITY,
      { action: 'passkey_finish', name: 'Phone', response: phone.create(again.json().options) },
      { csrf: true },
    );
    assert.equal(second.statusCode, 200, second.body);

    const listed = (await browser.get(SECURITY)).json().passkeys;
    assert.deepEqual(
      listed.map((p: { name: string }) => p.name),
      ['Laptop', 'Phone'],
    );
    assert.deepEqual(Object.keys(listed[0]).sort(), ['created_at', 'id', 'last_used_at', 'name']);
    const row = await storedPasskey(laptop.id);
    assert.equal(row.account_id, account.id);
    assert.equal(row.credential_id, firstCredential?.id.toString('base64url'));
    assert.equal(row.user_handle, options.user.id);
    assert.deepEqual(row.transports, ['internal']);
    assert.equal(Number(row.counter), 0);
  });

  test('names 1–64 characters, a response required, CSRF needed; a wrong answer spends the challenge', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const authenticator = new SoftAuthenticator(origin);
    const begun = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    const options = begun.json().options;
    const response = authenticator.create(options);
    for (const name of ['', '   ', 'x'.repeat(65)]) {
      const res = await browser.post(SECURITY, { action: 'passkey_finish', name, response }, { csrf: true });
      assert.equal(res.statusCode, 422, res.body);
      assert.ok(res.json().errors.name, name);
    }
    const noResponse = await browser.post(SECURITY, { action: 'passkey_finish', name: 'A' }, { csrf: true });
    assert.equal(noResponse.statusCode, 422);
    assert.equal(noResponse.json().errors.response, 'is required');
    const noCsrf = await browser.post(SECURITY, { action: 'passkey_begin' });
    assert.equal(noCsrf.statusCode, 403);
    assert.equal(noCsrf.json().code, 'csrf_failed');

    // Names were refused before the challenge was looked at: it still works, once.
    const hostile = await browser.post(
      SECURITY,
      {
        action: 'passkey_finish',
        name: 'Evil',
        response: new SoftAuthenticator('https://evil.example').create(options),
      },
      { csrf: true },
    );
    assert.equal(hostile.statusCode, 422, hostile.body);
    assert.equal(hostile.json().errors.response, 'could not be verified');
    const late = await browser.post(SECURITY, { action: 'passkey_finish', name: 'Late', response }, { csrf: true });
    assert.equal(late.statusCode, 422);
    assert.match(late.json().errors.response, /passkey_begin/);
    assert.deepEqual((await browser.get(SECURITY)).json().passkeys, []);

    // A wrong RP id, and a challenge of 5 minutes and a second ago, are refused too.
    const wrongRp = await register(browser, authenticator, 'A', { rpId: 'evil.example' });
    assert.equal(wrongRp.statusCode, 422);
    const begunAgain = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    clock.advance(301);
    const expired = await browser.post(
      SECURITY,
      { action: 'passkey_finish', name: 'A', response: authenticator.create(begunAgain.json().options) },
      { csrf: true },
    );
    assert.equal(expired.statusCode, 422);
    assert.deepEqual((await browser.get(SECURITY)).json().passkeys, []);
  });

  test("the challenge is the session's: another session of the account cannot finish it, nor a half session begin", async () => {
    const { browser, account, password } = await signedInBrowser(t, freshIp());
    const other = new Browser(t, freshIp());
    assert.equal((await other.login(account.username, password)).statusCode, 200);
    const begun = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    const response = new SoftAuthenticator(origin).create(begun.json().options);
    const stolen = await other.post(SECURITY, { action: 'passkey_finish', name: 'X', response }, { csrf: true });
    assert.equal(stolen.statusCode, 422, stolen.body);
    const own = await browser.post(SECURITY, { action: 'passkey_finish', name: 'X', response }, { csrf: true });
    assert.equal(own.statusCode, 200, own.body);
    const anonymous = await new Browser(t, freshIp()).post(SECURITY, { action: 'passkey_begin' });
    assert.equal(anonymous.statusCode, 401);
  });

  test('at most ten passkeys', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    // Nine made directly (the security limit allows 20 POSTs per 15 minutes), the tenth through the API.
    for (let i = 0; i < 9; i++) {
      await t.deps.database.db
        .insertInto('passkeys')
        .values({
          account_id: account.id,
          name: `Key ${i}`,
          credential_id: `made-${account.id}-${i}`,
          public_key: 'AA',
          user_handle: 'AA',
        })
        .execute();
    }
    const tenth = await register(browser, new SoftAuthenticator(origin), 'Tenth');
    assert.equal(tenth.statusCode, 200, tenth.body);
    const more = await browser.post(SECURITY, { action: 'passkey_begin' }, { csrf: true });
    assert.equal(more.statusCode, 409);
    assert.equal(more.json().code, 'limit_reached');
    assert.equal((await browser.get(SECURITY)).json().passkeys.length, 10);
  });
});

describe('signing in with a passkey alone', () => {
  test('discoverable: no credentials listed, user verification required; signs in fully with a new session id', async () => {
    const { account, authenticator, passkey } = await withPasskey();
    const browser = new Browser(t, freshIp());
    const options = await browser.get(PASSKEY);
    assert.equal(options.statusCode, 200, options.body);
    assert.equal(options.headers['cache-control'], 'no-store');
    const anonymousId = browser.sessionId;
    assert.ok(anonymousId, 'the options set a session cookie');
    const request = options.json().options;
    assert.equal(request.rpId, rpId);
    assert.equal(request.userVerification, 'required');
    assert.equal(request.allowCredentials, undefined);
    const before = await storedPasskey(passkey.id);
    const res = await browser.post(PASSKEY, { response: authenticator.get(request) }, { csrf: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().account.id, account.id);
    assert.equal(res.json().two_factor_required, undefined);
    assert.notEqual(browser.sessionId, anonymousId, 'the session id is replaced');
    assert.equal((await browser.get(ACCOUNT)).statusCode, 200);
    const after = await storedPasskey(passkey.id);
    assert.equal(Number(after.counter), Number(before.counter) + 1);
    assert.ok(after.last_used_at instanceof Date);
    const listed = (await browser.get(SECURITY)).json().passkeys;
    assert.equal(listed[0].last_used_at !== null, true);
  });

  test('refused alike: a replay, another challenge, origin or RP id, no user verification, an expired or foreign challenge, an unknown passkey', async () => {
    const { authenticator } = await withPasskey();
    // Each refusal of a known passkey counts towards its account's lockout: four here, then a right one.
    const { browser, response } = await passkeySignIn(authenticator);
    const replay = await browser.post(PASSKEY, { response }, { csrf: true });
    assertRefused(replay, 'a replayed answer (its challenge was spent)');
    assertRefused((await passkeySignIn(authenticator, { origin: 'https://evil.example' })).res, 'another origin');
    assertRefused((await passkeySignIn(authenticator, { rpId: 'evil.example' })).res, 'another RP id');
    assertRefused((await passkeySignIn(authenticator, { userVerified: false })).res, 'no user verification');
    const good = await passkeySignIn(authenticator);
    assert.equal(good.res.statusCode, 200, good.res.body);

    const second = await withPasskey();
    const fresh = new Browser(t, freshIp());
    await fresh.get(PASSKEY);
    assertRefused(
      (await passkeySignIn(second.authenticator, { challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).res,
      'another challenge',
    );
    // Another browser's challenge: the answer is right, but this cookie was given no such challenge.
    const victim = new Browser(t, freshIp());
    const victimOptions = (await victim.get(PASSKEY)).json().options;
    const carried = second.authenticator.get(victimOptions);
    assertRefused(await fresh.post(PASSKEY, { response: carried }, { csrf: true }), "another browser's challenge");
    const expiring = new Browser(t, freshIp());
    const expiringOptions = (await expiring.get(PASSKEY)).json().options;
    clock.advance(301);
    assertRefused(
      await expiring.post(PASSKEY, { response: second.authenticator.get(expiringOptions) }, { csrf: true }),
      'an expired challenge',
    );
    assert.equal((await passkeySignIn(second.authenticator)).res.statusCode, 200);

    // A passkey the server never saw: the same answer, and no account is charged for it.
    assertRefused((await passkeySignIn(new SoftAuthenticator(origin).withCredentialFor(rpId))).res, 'unknown passkey');
    // Without CSRF, as login.
    const noCsrf = new Browser(t, freshIp());
    const opts = (await noCsrf.get(PASSKEY)).json().options;
    const res = await noCsrf.post(PASSKEY, { response: authenticator.get(opts) });
    assert.equal(res.statusCode, 403);
  });

  test('a challenge works once: a refused answer spends it, so the right answer to it is refused too', async () => {
    const { authenticator } = await withPasskey();
    const browser = new Browser(t, freshIp());
    const options = (await browser.get(PASSKEY)).json().options;
    const hostile = authenticator.get(options, { origin: 'https://evil.example' });
    assertRefused(await browser.post(PASSKEY, { response: hostile }, { csrf: true }), 'another origin');
    assertRefused(
      await browser.post(PASSKEY, { response: authenticator.get(options) }, { csrf: true }),
      'the right answer to a spent challenge',
    );
    assert.equal((await passkeySignIn(authenticator, {}, browser)).res.statusCode, 200, 'a new challenge works');
  });

  test("a user handle that is not the passkey's account's is refused", async () => {
    const a = await withPasskey();
    const b = await withPasskey();
    const browser = new Browser(t, freshIp());
    const options = (await browser.get(PASSKEY)).json().options;
    const answer = a.authenticator.get(options);
    const other = b.authenticator.credentials[0]?.userHandle as string;
    const res = await browser.post(
      PASSKEY,
      { response: { ...answer, response: { ...answer.response, userHandle: other } } },
      { csrf: true },
    );
    assertRefused(res, 'a foreign user handle');
    // Without a user handle the credential still names its account.
    assert.equal((await passkeySignIn(a.authenticator, { omitUserHandle: true })).res.statusCode, 200);
  });

  test('a counter that does not go up is refused; one that does is accepted', async () => {
    const { authenticator, passkey } = await withPasskey();
    assert.equal((await passkeySignIn(authenticator, { counter: 5 })).res.statusCode, 200);
    assertRefused((await passkeySignIn(authenticator, { counter: 5 })).res, 'the same counter');
    assertRefused((await passkeySignIn(authenticator, { counter: 3 })).res, 'a counter gone back');
    assert.equal(Number((await storedPasskey(passkey.id)).counter), 5);
    assert.equal((await passkeySignIn(authenticator, { counter: 6 })).res.statusCode, 200);
    assert.equal(Number((await storedPasskey(passkey.id)).counter), 6);
  });

  test('a suspended account is refused (403 account_suspended), its passkey checked first', async () => {
    const { account, authenticator } = await withPasskey();
    await t.deps.accounts.suspend(account.id, 'test');
    const { res } = await passkeySignIn(authenticator);
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().code, 'account_suspended');
    assertRefused(
      (await passkeySignIn(authenticator, { userVerified: false })).res,
      'a wrong answer says nothing more',
    );
  });

  test('two posts of one right answer: exactly one signs in', async () => {
    const { authenticator } = await withPasskey();
    const browser = new Browser(t, freshIp());
    const options = (await browser.get(PASSKEY)).json().options;
    const response = authenticator.get(options);
    const results = await Promise.all([
      browser.post(PASSKEY, { response }, { csrf: true }),
      browser.post(PASSKEY, { response }, { csrf: true }),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 401]);
  });
});

describe('deleting', () => {
  test('a deleted passkey no longer signs in; another account cannot delete one (not_owner)', async () => {
    const { browser, authenticator, passkey } = await withPasskey();
    const stranger = await signedInBrowser(t, freshIp());
    for (const id of [passkey.id, 2_000_000_000]) {
      const res = await stranger.browser.post(SECURITY, { action: 'passkey_delete', id }, { csrf: true });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json().code, 'not_owner');
    }
    const noId = await browser.post(SECURITY, { action: 'passkey_delete' }, { csrf: true });
    assert.equal(noId.statusCode, 422);
    assert.equal(noId.json().errors.id, 'is required');
    const removed = await browser.post(SECURITY, { action: 'passkey_delete', id: passkey.id }, { csrf: true });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(removed.json().passkeys, []);
    assertRefused((await passkeySignIn(authenticator)).res, 'a deleted passkey');
  });
});

describe('as the second factor', () => {
  /** Turn TOTP on for a signed-in browser; the secret. */
  async function totpOn(browser: Browser): Promise<string> {
    const begun = await browser.post(SECURITY, { action: 'totp_begin' }, { csrf: true });
    const secret = begun.json().secret as string;
    const code = TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: clock.now().getTime() });
    const enabled = await browser.post(SECURITY, { action: 'totp_enable', code }, { csrf: true });
    assert.equal(enabled.statusCode, 200, enabled.body);
    clock.advance(60);
    return secret;
  }

  async function halfSignedIn(username: string, password: string) {
    const browser = new Browser(t, freshIp());
    const res = await browser.login(username, password);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().two_factor_required, true);
    return { browser, methods: res.json().methods as string[] };
  }

  test('methods gain "passkey"; the half session gets options for its passkeys and finishes with one', async () => {
    const { browser, account, password, authenticator, passkey } = await withPasskey();
    const other = await withPasskey();
    await totpOn(browser);
    const half = await halfSignedIn(account.username, password);
    assert.deepEqual(half.methods, ['totp', 'recovery', 'passkey']);
    assert.equal((await half.browser.get(SECURITY)).json().code, 'two_factor_required');

    const asked = await half.browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true });
    assert.equal(asked.statusCode, 200, asked.body);
    const options = asked.json().options;
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [(await storedPasskey(passkey.id)).credential_id],
    );
    // Another account's passkey answering this challenge: wrong (422 on `passkey`), and it spends it.
    const foreign = other.authenticator.get({ ...options, allowCredentials: [] });
    const wrong = await half.browser.post(TWO_FA, { passkey: foreign }, { csrf: true });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.equal(wrong.json().errors.passkey, 'could not be verified');
    const spent = await half.browser.post(TWO_FA, { passkey: authenticator.get(options) }, { csrf: true });
    assert.equal(spent.statusCode, 422, 'the challenge was spent by the wrong answer');

    const again = (await half.browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true })).json().options;
    const halfId = half.browser.sessionId;
    const done = await half.browser.post(TWO_FA, { passkey: authenticator.get(again) }, { csrf: true });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().account.id, account.id);
    assert.notEqual(half.browser.sessionId, halfId);
    assert.equal((await half.browser.get(SECURITY)).statusCode, 200);
    // The second-factor challenge is not a sign-in challenge, nor the reverse.
    const half2 = await halfSignedIn(account.username, password);
    const second = (await half2.browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true })).json().options;
    assertRefused(
      await half2.browser.post(PASSKEY, { response: authenticator.get(second) }, { csrf: true }),
      'a second-factor challenge at sign-in',
    );
  });

  test('a passkey alone signs in an account with two-factor on fully; no passkey: no "passkey" method', async () => {
    const { browser, account, authenticator } = await withPasskey();
    await totpOn(browser);
    const { res } = await passkeySignIn(authenticator);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().account.id, account.id);

    const plain = await signedInBrowser(t, freshIp());
    await totpOn(plain.browser);
    const half = await halfSignedIn(plain.account.username, plain.password);
    assert.deepEqual(half.methods, ['totp', 'recovery']);
    const asked = await half.browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true });
    assert.equal(asked.statusCode, 409);
    // A full session has nothing to finish.
    const full = await browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true });
    assert.equal(full.statusCode, 409);
  });

  test('passkeys without TOTP add no second step to password sign-in', async () => {
    const { account, password } = await withPasskey();
    const browser = new Browser(t, freshIp());
    const res = await browser.login(account.username, password);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().two_factor_required, undefined);
    assert.equal(res.json().account.id, account.id);
  });

  test('exactly one of code, recovery_code and passkey', async () => {
    const { browser, account, password, authenticator } = await withPasskey();
    await totpOn(browser);
    const half = await halfSignedIn(account.username, password);
    const options = (await half.browser.post(TWO_FA, { action: 'passkey_options' }, { csrf: true })).json().options;
    const both = await half.browser.post(
      TWO_FA,
      { code: '123456', passkey: authenticator.get(options) },
      { csrf: true },
    );
    assert.equal(both.statusCode, 422);
    assert.ok(both.json().errors.passkey);
    const none = await half.browser.post(TWO_FA, {}, { csrf: true });
    assert.equal(none.statusCode, 422);
    assert.match(none.json().errors.code, /passkey/);
  });
});

describe('lockout', () => {
  test('wrong passwords and refused passkeys of one account count together; the lock refuses a right passkey', async () => {
    const { account, password, authenticator } = await withPasskey();
    const guesser = new Browser(t, freshIp());
    for (let i = 0; i < 3; i++) {
      const res = await guesser.login(account.username, 'wrong-password-1');
      assert.equal(res.statusCode, 401);
    }
    assertRefused((await passkeySignIn(authenticator, { origin: 'https://evil.example' })).res, 'fourth failure');
    assertRefused((await passkeySignIn(authenticator, { userVerified: false })).res, 'fifth failure');
    const locked = await passkeySignIn(authenticator);
    assert.equal(locked.res.statusCode, 429, locked.res.body);
    assert.equal(locked.res.json().code, 'locked_out');
    const byPassword = await new Browser(t, freshIp()).login(account.username, password);
    assert.equal(byPassword.statusCode, 429);
    assert.equal(byPassword.json().code, 'locked_out');
  });
});
