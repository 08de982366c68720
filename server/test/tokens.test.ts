// API tokens: managed on the session surface, used on the token surface (spec §2, §5;
// CONTRACT §4; reliability T8). Secrets are shown once and stored as sha256; expiry and
// revocation bite on the very next request; the IPv4 allow-list is exact.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { runAdmin } from '../src/admin/run.ts';
import { createRequestLog } from '../src/core/tokens/request-log.ts';
import { createTokenService } from '../src/core/tokens/token.service.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

let t: TestApp;
const clock = new ManualClock();
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
});
after(() => t.close());

const TOKENS = '/api/v1/client/tokens/';
const me = (secret: string, extra: { ip?: string; headers?: Record<string, string>; url?: string } = {}) =>
  t.inject({
    method: 'GET',
    url: extra.url ?? '/api/v1/me',
    headers: { authorization: `Bearer ${secret}`, ...extra.headers },
    remoteAddress: extra.ip ?? '127.0.0.1',
  });

async function newToken(body: Record<string, unknown> = {}) {
  const owner = await signedInBrowser(t, freshIp());
  const res = await owner.browser.post(TOKENS, { name: 'ci', scopes: ['*'], ...body }, { csrf: true });
  return { owner, res, secret: res.json().secret as string, id: res.json().token?.id as number };
}

/** A new token, its account, and a request log of the test's own over the app's database. */
async function tokenWithOwnLog() {
  const { id } = await newToken();
  const { account_id: accountId } = await t.deps.database.db
    .selectFrom('api_tokens')
    .select('account_id')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { id, accountId, log: createRequestLog(t.deps.database.db, pino({ level: 'silent' })) };
}

describe('token management', () => {
  test('create: svc_ + 43 url-safe characters, shown once, stored only as sha256; listed without it', async () => {
    const { owner, res, secret, id } = await newToken({ name: 'deploy bot', scopes: ['read', 'orders.write'] });
    assert.equal(res.statusCode, 201);
    assert.match(secret, /^svc_[A-Za-z0-9_-]{43}$/);
    assert.equal(res.headers['cache-control'], 'no-store');
    const listed = await owner.browser.get(TOKENS);
    assert.doesNotMatch(listed.body, new RegExp(secret.slice(4)));
    assert.equal(listed.json().tokens[0].hint, `${secret.slice(0, 8)}…`);
    assert.deepEqual(listed.json().tokens[0].scopes, ['read', 'orders.write']);
    const { rows } = await sql<{
      hit: string;
    }>`select count(*) as hit from api_tokens where token_hash = ${secret} or hint = ${secret}`.execute(
      t.deps.database.db,
    );
    assert.equal(rows[0]?.hit, '0', 'the plaintext is nowhere in the table');
    assert.equal((await me(secret)).statusCode, 200);
    assert.ok(id);
  });

  test('validation: name, scopes, expiry in the future, IPv4 CIDRs only; every problem reported', async () => {
    const owner = await signedInBrowser(t, freshIp());
    const res = await owner.browser.post(
      TOKENS,
      { name: '', scopes: ['root'], expires_at: '2001-01-01T00:00:00Z', allowed_cidrs: ['2001:db8::/32'] },
      { csrf: true },
    );
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['allowed_cidrs', 'expires_at', 'name', 'scopes']);
    // Wrong types (refused by the schema) and bad values (the core's rules) in one answer.
    const mixed = await owner.browser.post(TOKENS, { name: '', expires_at: 5, allowed_cidrs: 'x' }, { csrf: true });
    assert.equal(mixed.statusCode, 422);
    assert.deepEqual(Object.keys(mixed.json().errors).sort(), ['allowed_cidrs', 'expires_at', 'name', 'scopes']);
    assert.equal(mixed.json().errors.name, 'must be 1–64 characters');
    for (const cidrs of [
      ['10.0.0.0/33'],
      ['300.1.1.1'],
      ['127.1'],
      Array.from({ length: 17 }, (_, i) => `10.0.${i}.0/24`),
    ]) {
      const bad = await owner.browser.post(
        TOKENS,
        { name: 'x', scopes: ['read'], allowed_cidrs: cidrs },
        { csrf: true },
      );
      assert.equal(bad.statusCode, 422, JSON.stringify(cidrs));
    }
  });

  test('at most 20 unrevoked tokens per account', async () => {
    const owner = await signedInBrowser(t, freshIp());
    for (let i = 0; i < 20; i++)
      assert.equal(
        (await owner.browser.post(TOKENS, { name: `t${i}`, scopes: ['read'] }, { csrf: true })).statusCode,
        201,
      );
    const over = await owner.browser.post(TOKENS, { name: 't20', scopes: ['read'] }, { csrf: true });
    assert.equal(over.statusCode, 409);
  });

  test("another account's token cannot be read, logged or revoked", async () => {
    const { id } = await newToken();
    const other = await signedInBrowser(t, freshIp());
    assert.equal((await other.browser.get(`${TOKENS}?id=${id}`)).statusCode, 404);
    assert.equal((await other.browser.get(`${TOKENS}?id=${id}&action=logs`)).statusCode, 404);
    const revoke = await other.browser.post(TOKENS, { action: 'revoke', id }, { csrf: true });
    assert.equal(revoke.statusCode, 404);
    assert.equal(revoke.json().code, 'not_owner');
  });
});

describe('bearer authentication', () => {
  test('missing, malformed, altered or unknown: 401 invalid_token in the token envelope, with WWW-Authenticate', async () => {
    const { secret } = await newToken();
    const altered = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const [label, headers] of [
      ['none', {}],
      ['no prefix', { authorization: `Bearer ${secret.slice(4)}` }],
      ['altered', { authorization: `Bearer ${altered}` }],
      ['basic', { authorization: `Basic ${Buffer.from(`x:${secret}`).toString('base64')}` }],
    ] as const) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/me', headers, remoteAddress: freshIp() });
      assert.equal(res.statusCode, 401, label);
      assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message', 'ok', 'request_id', 'status']);
      assert.equal(res.json().error, 'invalid_token', label);
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
  });

  test('a token in the query string or a session cookie does not authenticate', async () => {
    const { secret, owner } = await newToken();
    assert.equal((await t.inject({ method: 'GET', url: `/api/v1/me?token=${secret}` })).statusCode, 401);
    assert.equal(
      (
        await t.inject({
          method: 'GET',
          url: '/api/v1/me',
          headers: { cookie: `SVCSESSID=${owner.browser.sessionId}` },
        })
      ).statusCode,
      401,
    );
    const both = await t.inject({
      method: 'GET',
      url: '/api/v1/me',
      headers: { cookie: `SVCSESSID=${owner.browser.sessionId}`, authorization: 'Bearer svc_wrong' },
    });
    assert.equal(both.statusCode, 401, 'with both, the bearer rules apply');
  });

  test('revocation takes effect on the very next request, even after the token was just used (and cached)', async () => {
    const { owner, secret, id } = await newToken();
    assert.equal((await me(secret)).statusCode, 200);
    assert.equal((await me(secret)).statusCode, 200);
    const revoked = await owner.browser.post(TOKENS, { action: 'revoke', id }, { csrf: true });
    assert.equal(revoked.json().token.status, 'revoked');
    const next = await me(secret);
    assert.equal(next.statusCode, 401);
    assert.equal(next.json().error, 'invalid_token');
  });

  test('expiry takes effect on the next request: 401 token_expired', async () => {
    const { secret } = await newToken({ expires_at: new Date(clock.now().getTime() + 60_000).toISOString() });
    assert.equal((await me(secret)).statusCode, 200);
    clock.advance(61);
    const res = await me(secret);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'token_expired');
  });

  test('a suspended account: its tokens stop at once (403 account_suspended)', async () => {
    const { owner, secret } = await newToken();
    assert.equal((await me(secret)).statusCode, 200);
    await runAdmin(['accounts', 'suspend', owner.account.email], async () => t.deps);
    assert.equal((await me(secret)).json().error, 'account_suspended');
  });

  test('IPv4 allow-list: inside and outside, /32, /0, IPv4-mapped IPv6; X-Forwarded-For is not believed', async () => {
    const { secret } = await newToken({ allowed_cidrs: ['203.0.113.0/24', '198.51.100.7'] });
    const cases: [string, number][] = [
      ['203.0.113.0', 200],
      ['203.0.113.255', 200],
      ['203.0.113.77', 200],
      ['::ffff:203.0.113.9', 200],
      ['198.51.100.7', 200],
      ['198.51.100.8', 403],
      ['203.0.114.1', 403],
      ['::ffff:10.0.0.1', 403],
      ['2001:db8::1', 403],
    ];
    for (const [ip, status] of cases) {
      const res = await me(secret, { ip });
      assert.equal(res.statusCode, status, ip);
      if (status === 403) assert.equal(res.json().error, 'ip_not_allowed');
    }
    const spoofed = await me(secret, { ip: '10.9.9.9', headers: { 'x-forwarded-for': '203.0.113.5' } });
    assert.equal(spoofed.statusCode, 403);
    const { secret: open } = await newToken({ allowed_cidrs: ['0.0.0.0/0'] });
    assert.equal((await me(open, { ip: '8.8.8.8' })).statusCode, 200);
    assert.equal((await me(open, { ip: '::ffff:8.8.8.8' })).statusCode, 200);
  });
});

describe('token cache', () => {
  test('tokens in use are confirmed in the background: past the ttl no request waits for a lookup, and changes made without a bus message still arrive', async () => {
    const { secret, id } = await newToken({ scopes: ['read'] });
    let ms = 1_000_000;
    const tokens = createTokenService({
      db: t.deps.database.db,
      clock: clock.now,
      bus: t.deps.bus,
      // The timer never fires in this test: refreshes are called by hand, time moves by hand.
      cacheTiming: { ttlMs: 10_000, refreshMs: 3_600_000, idleMs: 60_000 },
      cacheNow: () => ms,
    });
    try {
      const scopes = async () => {
        const checked = await tokens.authenticate(secret, '127.0.0.1');
        if ('refused' in checked) throw checked.refused;
        return checked.principal.scopes;
      };
      assert.deepEqual(await scopes(), ['read']);
      assert.equal(tokens.cacheStats().lookups, 1);
      ms += 6_000;
      assert.deepEqual(await scopes(), ['read'], 'within the ttl: from the cache');
      await tokens.refreshCache();
      ms += 6_000; // 12 s after the lookup, 6 s after the refresh
      assert.deepEqual(await scopes(), ['read']);
      assert.deepEqual(tokens.cacheStats(), { lookups: 1, refreshes: 1 }, 'the refresh kept the entry fresh');

      // A change by hand in SQL, no bus message: served from the cache until the next refresh.
      await t.deps.database.db
        .updateTable('api_tokens')
        .set({ scopes: ['read', 'billing.read'] })
        .where('id', '=', id)
        .execute();
      assert.deepEqual(await scopes(), ['read']);
      await tokens.refreshCache();
      assert.deepEqual(await scopes(), ['read', 'billing.read']);
      await t.deps.database.db.updateTable('api_tokens').set({ revoked_at: new Date() }).where('id', '=', id).execute();
      await tokens.refreshCache();
      await assert.rejects(scopes(), { code: 'invalid_token' });
      assert.equal(tokens.cacheStats().lookups, 1, 'never a lookup on the request path after the first');

      // Unused for idleMs: forgotten by the refresh, looked up again at its next use.
      await t.deps.database.db.updateTable('api_tokens').set({ revoked_at: null }).where('id', '=', id).execute();
      ms += 60_000;
      await tokens.refreshCache();
      assert.deepEqual(await scopes(), ['read', 'billing.read']);
      assert.equal(tokens.cacheStats().lookups, 2);

      // Deleted: the refresh drops it from the cache.
      await t.deps.database.db.deleteFrom('api_tokens').where('id', '=', id).execute();
      await tokens.refreshCache();
      await assert.rejects(scopes(), { code: 'invalid_token' });
    } finally {
      tokens.close();
    }
  });

  test('without refreshes an entry expires after the ttl and is looked up again', async () => {
    const { secret } = await newToken();
    let ms = 1_000_000;
    const tokens = createTokenService({
      db: t.deps.database.db,
      clock: clock.now,
      bus: t.deps.bus,
      cacheTiming: { ttlMs: 10_000, refreshMs: 3_600_000 },
      cacheNow: () => ms,
    });
    try {
      await tokens.authenticate(secret, '127.0.0.1');
      ms += 9_999;
      await tokens.authenticate(secret, '127.0.0.1');
      assert.equal(tokens.cacheStats().lookups, 1);
      ms += 1;
      await tokens.authenticate(secret, '127.0.0.1');
      assert.equal(tokens.cacheStats().lookups, 2);
    } finally {
      tokens.close();
    }
  });
});

describe('request log', () => {
  test('every call is recorded with method, path, status, IP and duration — and never the token', async () => {
    const { owner, secret, id } = await newToken();
    await me(secret, { ip: '192.0.2.44' });
    await me(secret, { url: '/api/v1/tickets' });
    await me(secret, { url: '/api/v1/billing?x=1' });
    await t.inject({ method: 'GET', url: '/api/v1/plans', headers: { authorization: 'Bearer svc_nope' } });
    await t.deps.requestLog.flush();
    const logs = await owner.browser.get(`${TOKENS}?id=${id}&action=logs`);
    assert.equal(logs.statusCode, 200);
    const calls = logs.json().calls as {
      method: string;
      path: string;
      status: number;
      ip: string;
      duration_ms: number;
    }[];
    assert.deepEqual(
      calls.map((c) => [c.method, c.path, c.status]).reverse(),
      [
        ['GET', '/api/v1/me', 200],
        ['GET', '/api/v1/tickets', 404],
        ['GET', '/api/v1/billing', 200],
      ].map((x) => x),
    );
    assert.equal(calls.at(-1)?.ip, '192.0.2.44');
    assert.ok(calls.every((c) => c.duration_ms >= 0));
    const token = (await owner.browser.get(`${TOKENS}?id=${id}`)).json().token;
    assert.ok(token.last_used_at);
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from api_request_log where token_id is null and path = '/api/v1/plans' and status = 401`.execute(
      t.deps.database.db,
    );
    assert.equal(rows[0]?.n, '0', 'a call with an unknown token has no holder: not stored (review F8)');
    const dump = await sql<{ row: string }>`select row_to_json(l)::text as row from api_request_log l`.execute(
      t.deps.database.db,
    );
    assert.ok(dump.rows.every((r) => !r.row.includes(secret)));
  });

  test('the log stores any text exactly: quotes, backslashes, braces, commas, "NULL", non-ASCII; long paths cut at 500', async () => {
    const { id, accountId, log } = await tokenWithOwnLog();
    const texts = [
      '/a"b',
      '/a\\b',
      '/{x},{y}',
      'NULL',
      '',
      '/मुंबई/🚀',
      '/x y\t\n',
      `/${'p'.repeat(600)}`,
      // ASCII is copied byte by byte up to the first other character, the rest as UTF-8: escapes on both sides.
      '/"a\\é"b\\🚀',
    ];
    const at = Date.UTC(2026, 10, 26, 12, 0, 0, 123);
    for (const [i, path] of texts.entries())
      log.record({
        tokenId: id,
        accountId,
        method: i % 2 ? 'POST' : 'GET',
        path,
        route: i === 0 ? null : path.slice(0, 20),
        status: 200 + i,
        ip: i === 1 ? null : `198.51.100.${i}`,
        durationMs: 1.23456,
        requestId: `req-${i}`,
        at: i % 2 ? at + i : new Date(at + i),
      });
    await log.close();
    const rows = await t.deps.database.db
      .selectFrom('api_request_log')
      .select(['method', 'path', 'route', 'status', 'ip', 'duration_ms', 'request_id', 'created_at'])
      .where('token_id', '=', id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.path),
      texts.map((p) => p.slice(0, 500)),
    );
    assert.deepEqual(
      rows.map((r) => [r.method, r.route, r.status, r.ip, r.request_id]),
      texts.map((p, i) => [
        i % 2 ? 'POST' : 'GET',
        i === 0 ? null : p.slice(0, 20),
        200 + i,
        i === 1 ? null : `198.51.100.${i}`,
        `req-${i}`,
      ]),
    );
    assert.ok(rows.every((r) => Math.abs(Number(r.duration_ms) - 1.23) < 1e-6));
    assert.deepEqual(
      rows.map((r) => new Date(r.created_at).getTime()),
      texts.map((_, i) => at + i),
    );
    const token = await t.deps.database.db
      .selectFrom('api_tokens')
      .select(['last_used_at', 'last_used_ip'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(new Date(token.last_used_at as Date).getTime(), at + texts.length - 1, 'the latest use');
    assert.equal(token.last_used_ip, `198.51.100.${texts.length - 1}`);
  });

  test('a batch larger than its first buffers: every row exactly, a duration that is not a number as 0', async () => {
    const { id, accountId, log } = await tokenWithOwnLog();
    const N = 2500;
    const at = Date.UTC(2026, 10, 27, 12, 0, 0, 0);
    const routes = ['/api/v1/plans', '/api/v1/instances/:id', null];
    for (let i = 0; i < N; i++)
      log.record({
        tokenId: id,
        accountId: i % 7 === 0 ? null : accountId,
        method: ['GET', 'POST', 'DELETE'][i % 3] as string,
        path: `/api/v1/x/${i}`,
        route: routes[i % 3] ?? null,
        status: 200 + (i % 5),
        ip: `10.0.${i % 250}.1`,
        durationMs: i % 11 === 0 ? Number.NaN : i / 100,
        requestId: `bulk-${i}`,
        at: at + i,
      });
    await log.close();
    const rows = await t.deps.database.db
      .selectFrom('api_request_log')
      .select(['account_id', 'method', 'path', 'route', 'status', 'ip', 'duration_ms', 'request_id', 'created_at'])
      .where('token_id', '=', id)
      .orderBy('created_at')
      .execute();
    assert.equal(rows.length, N);
    for (const [i, r] of rows.entries()) {
      assert.deepEqual(
        [r.account_id, r.method, r.path, r.route, r.status, r.ip, r.request_id, new Date(r.created_at).getTime()],
        [
          i % 7 === 0 ? null : accountId,
          ['GET', 'POST', 'DELETE'][i % 3],
          `/api/v1/x/${i}`,
          routes[i % 3],
          200 + (i % 5),
          `10.0.${i % 250}.1`,
          `bulk-${i}`,
          at + i,
        ],
        `row ${i}`,
      );
      if (i % 11 === 0) assert.equal(Number(r.duration_ms), 0, `row ${i}`);
      else assert.ok(Math.abs(Number(r.duration_ms) - i / 100) < 1e-3, `row ${i}: ${r.duration_ms}`);
    }
  });

  test('refused calls go to the log of the token they were made with; a token in the URL never reaches a log line', async () => {
    const fenced = await newToken({ allowed_cidrs: ['10.0.0.0/8'] });
    const expiring = await newToken({ expires_at: new Date(clock.now().getTime() + 60_000).toISOString() });
    assert.equal((await me(fenced.secret)).json().error, 'ip_not_allowed');
    clock.advance(61);
    assert.equal((await me(expiring.secret)).json().error, 'token_expired');
    for (const name of ['access_token', 'api_token', 'anything'])
      await t.inject({ method: 'GET', url: `/api/v1/me?${name}=${fenced.secret}` });
    await t.deps.requestLog.flush();
    const logOf = async (made: Awaited<ReturnType<typeof newToken>>) =>
      (await made.owner.browser.get(`${TOKENS}?id=${made.id}&action=logs`))
        .json()
        .calls.map((c: { status: number }) => c.status);
    assert.deepEqual(await logOf(fenced), [403]);
    assert.deepEqual(await logOf(expiring), [401]);
    assert.ok(t.logs.text().includes('/api/v1/me?anything=svc_[redacted]'));
    assert.ok(!t.logs.text().includes(fenced.secret.slice(4)), 'no log line holds the secret');
  });
});
