// Security review F8, F9, F12: what the request log stores, what the mail log prints, and what
// text a mail may carry.
//   F8  anonymous token-surface calls (no token, unknown token) are counted, never stored;
//       unknown tokens are looked up once per cache window.
//   F9  without SMTP_URL on PostgreSQL (production) no mail text reaches the log, and a warning
//       says mail is not delivered; on the embedded engine the development mail sink stays.
//   F12 no name in the verification mail; no link or address in names; every link in every mail
//       starts with PUBLIC_URL.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createMailer } from '../src/core/mail/mailer.ts';
import { type MailMessage, renderMail } from '../src/core/mail/templates.ts';
import { createLogger } from '../src/logging.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, signedInBrowser } from './support/factories.ts';
import { createTestApp, LogCapture, ManualClock, onPostgres, type TestApp } from './support/harness.ts';
import { waitFor } from './support/wait.ts';

const PUBLIC = 'http://localhost:8080';
const TOKENS = '/api/v1/client/tokens/';
const REGISTER = '/api/v1/client/auth/register/';
const UNKNOWN = `svc_${'Q'.repeat(43)}`;

const rowCount = async (t: TestApp): Promise<number> =>
  Number((await sql<{ n: string }>`select count(*) as n from api_request_log`.execute(t.deps.database.db)).rows[0]?.n);

/** Count the queries that read api_tokens, through the Kysely instance every service shares. */
function countTokenQueries(t: TestApp): { count: () => number; restore: () => void } {
  const db = t.deps.database.db as unknown as Record<string, unknown>;
  const original = db.selectFrom as (...args: unknown[]) => unknown;
  let n = 0;
  db.selectFrom = (...args: unknown[]) => {
    if (args[0] === 'api_tokens') n++;
    return original.apply(t.deps.database.db, args);
  };
  return {
    count: () => n,
    restore: () => {
      delete db.selectFrom;
    },
  };
}

describe('F8: anonymous calls are not stored in the request log', () => {
  let t: TestApp;
  const clock = new ManualClock();
  before(async () => {
    t = await createTestApp({ overrides: { clock: clock.now } });
  });
  after(() => t.close());

  async function newToken(body: Record<string, unknown> = {}) {
    const owner = await signedInBrowser(t, freshIp());
    const res = await owner.browser.post(TOKENS, { name: 'ci', scopes: ['*'], ...body }, { csrf: true });
    assert.equal(res.statusCode, 201);
    return { owner, secret: res.json().secret as string, id: res.json().token.id as number };
  }

  test('a flood of calls with no token, a malformed or an unknown token, or to unknown routes adds no row', async () => {
    await t.deps.requestLog.flush();
    const rowsBefore = await rowCount(t);
    const countedBefore = t.deps.requestLog.anonymous().total;
    const variants: { url: string; authorization?: string }[] = [
      { url: '/api/v1/plans' },
      { url: '/api/v1/me' },
      { url: '/api/v1/tickets' },
      { url: '/api/v1/no/such/route' },
      { url: '/api/v1/plans', authorization: 'Bearer svc_nope' },
      { url: '/api/v1/me', authorization: 'Bearer not-a-token-at-all' },
      { url: '/api/v1/me', authorization: `Bearer ${UNKNOWN}` },
      { url: '/api/v1/tickets', authorization: `Bearer ${UNKNOWN}` },
      { url: '/api/v1/dns/zones', authorization: `Bearer svc_${'z'.repeat(43)}` },
      { url: '/api/v1/me', authorization: 'Basic dXNlcjpwYXNz' },
    ];
    const N = 200;
    for (let i = 0; i < N; i++) {
      const v = variants[i % variants.length] as (typeof variants)[number];
      const res = await t.inject({
        method: i % 3 === 0 ? 'POST' : 'GET',
        url: v.url,
        headers: v.authorization ? { authorization: v.authorization } : {},
        remoteAddress: freshIp(),
      });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${v.url}: ${res.statusCode}`);
    }
    await t.deps.requestLog.flush();
    assert.equal(await rowCount(t), rowsBefore, 'no request-log row for an anonymous call');
    const counted = t.deps.requestLog.anonymous();
    assert.equal(counted.total - countedBefore, N, 'each anonymous call is counted in memory');
    assert.ok((counted.byStatus['401'] ?? 0) > 0 && (counted.byStatus['404'] ?? 0) > 0, JSON.stringify(counted));
    assert.ok(
      t.logs.lines.some((l) => l.includes('"url":"/api/v1/tickets"')),
      'anonymous calls are still in the access log',
    );
  });

  test("a revoked or expired real token's refused call is still logged to that token", async () => {
    const revoked = await newToken();
    const expiring = await newToken({ expires_at: new Date(clock.now().getTime() + 60_000).toISOString() });
    const gone = await revoked.owner.browser.post(TOKENS, { action: 'revoke', id: revoked.id }, { csrf: true });
    assert.equal(gone.statusCode, 200);
    const call = (secret: string, url = '/api/v1/me') =>
      t.inject({ method: 'GET', url, headers: { authorization: `Bearer ${secret}` }, remoteAddress: freshIp() });
    assert.equal((await call(revoked.secret)).json().error, 'invalid_token');
    assert.equal((await call(revoked.secret, '/api/v1/tickets')).statusCode, 404);
    clock.advance(61);
    assert.equal((await call(expiring.secret)).json().error, 'token_expired');
    await t.deps.requestLog.flush();
    const logOf = async (made: Awaited<ReturnType<typeof newToken>>) =>
      (await made.owner.browser.get(`${TOKENS}?id=${made.id}&action=logs`))
        .json()
        .calls.map((c: { status: number; path: string }) => `${c.status} ${c.path}`);
    assert.deepEqual(await logOf(revoked), ['404 /api/v1/tickets', '401 /api/v1/me']);
    assert.deepEqual(await logOf(expiring), ['401 /api/v1/me']);
  });

  test('repeated calls with one unknown token read the database at most once per cache window', async () => {
    const spy = countTokenQueries(t);
    try {
      const unknown = `svc_${'k'.repeat(42)}A`;
      for (let i = 0; i < 30; i++) {
        const res = await t.inject({
          method: 'GET',
          url: i % 2 === 0 ? '/api/v1/tickets' : '/api/v1/me',
          headers: { authorization: `Bearer ${unknown}` },
          remoteAddress: freshIp(),
        });
        assert.ok(res.statusCode === 404 || res.statusCode === 401, String(res.statusCode));
      }
      // The window is a few seconds; a slow machine may see a second one, never one per call.
      assert.ok(spy.count() >= 1 && spy.count() <= 3, `api_tokens read ${spy.count()} times for 30 calls`);
      const known = await newToken();
      const before = spy.count();
      for (let i = 0; i < 5; i++) {
        const res = await t.inject({
          method: 'GET',
          url: '/api/v1/me',
          headers: { authorization: `Bearer ${known.secret}` },
          remoteAddress: freshIp(),
        });
        assert.equal(res.statusCode, 200, 'a real token is never taken for an unknown one');
      }
      assert.ok(spy.count() - before <= 2);
    } finally {
      spy.restore();
    }
  });
});

describe('F9: mail text stays out of the log in production', () => {
  /** Register over HTTP (no worker: the mail stays queued), then deliver it with a mailer as deps.ts builds it. */
  async function deliverWith(engine: 'pglite' | 'postgresql', tag: string) {
    const t = await createTestApp();
    try {
      const email = `f9.${tag}@example.in`;
      const res = await new Browser(t, freshIp()).post(REGISTER, {
        name: `Mail Reader ${tag}`,
        email,
        username: `f9_${tag}`,
        password: 'Canary-PW-4e5f6a7b',
      });
      assert.equal(res.statusCode, 201);
      const { row, text } = await lastMail(t, email);
      const token = /verify\?token=([A-Za-z0-9_-]{43})/.exec(text)?.[1] as string;
      assert.ok(token);
      const logs = new LogCapture();
      const logger = createLogger('info', logs);
      const mailer = createMailer({
        db: t.deps.database.db,
        jobs: t.deps.jobs,
        secretKey: t.deps.secretKey,
        logger,
        clock: t.deps.clock,
        smtpUrl: null,
        from: t.config.mailFrom,
        engine,
        publicUrl: t.config.publicUrl,
      });
      await mailer.deliver(row.id, { lastAttempt: false, logger });
      const stored = await t.deps.database.db
        .selectFrom('mail_outbox')
        .select(['status', 'body_sealed'])
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.status, 'stored');
      assert.ok(stored.body_sealed, 'kept, encrypted, for `admin mail show`');
      return { logs, token, outboxId: row.id };
    } finally {
      await t.close();
    }
  }

  test('PostgreSQL without SMTP_URL: a loud start-up warning, and only the outbox id and template per mail', async () => {
    const { logs, token, outboxId } = await deliverWith('postgresql', 'pg');
    const text = logs.text();
    assert.doesNotMatch(text, /verify\?token=/);
    assert.ok(!text.includes(token), 'the verification token is not in the log');
    const parsed = logs.parsed();
    const warning = parsed.find((l) => String(l.msg).includes('SMTP_URL is not set'));
    assert.ok(warning, 'a start-up warning');
    assert.equal(warning.level, 40, 'at warn level');
    assert.match(String(warning.msg), /NO MAIL IS DELIVERED/);
    const line = parsed.find((l) => l.outbox === outboxId);
    assert.ok(line);
    assert.equal(line.template, 'verify_email');
    assert.equal(line.to, undefined);
  });

  test('embedded engine without SMTP_URL: the text is printed, marked as the development mail sink', async () => {
    const { logs, token } = await deliverWith('pglite', 'dev');
    const parsed = logs.parsed();
    assert.ok(
      parsed.some((l) => String(l.msg).includes('development only')),
      'a start-up note',
    );
    const line = parsed.find((l) => l.mailSink === 'development');
    assert.ok(line);
    assert.match(String(line.msg), /^mail stored \(no SMTP_URL\)/);
    assert.ok(String(line.msg).includes(`${PUBLIC}/verify?token=${token}`));
  });

  test("the server's own mailer, as wired: registering writes the verify link to the log only on the embedded engine", async () => {
    const t = await createTestApp({ worker: true });
    try {
      const email = 'f9.wired@example.in';
      const res = await new Browser(t, freshIp()).post(REGISTER, {
        name: 'Wired Reader',
        email,
        username: 'f9_wired',
        password: 'Canary-PW-8c9d0e1f',
      });
      assert.equal(res.statusCode, 201);
      const { row, text } = await lastMail(t, email);
      const token = /verify\?token=([A-Za-z0-9_-]{43})/.exec(text)?.[1] as string;
      await waitFor('stored', async () => {
        const r = await t.deps.database.db
          .selectFrom('mail_outbox')
          .select('status')
          .where('id', '=', row.id)
          .executeTakeFirst();
        return r?.status === 'stored';
      });
      await waitFor('log line', async () => t.logs.parsed().some((l) => l.outbox === row.id));
      if (onPostgres) {
        assert.ok(!t.logs.text().includes(token));
        assert.ok(t.logs.parsed().some((l) => l.level === 40 && String(l.msg).includes('NO MAIL IS DELIVERED')));
      } else {
        assert.ok(t.logs.text().includes(token), 'development: the link is in the log, as the README says');
      }
    } finally {
      await t.close();
    }
  });
});

describe('F12: what a mail may say', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('a name with a web address or an e-mail address is refused with 422 naming `name`', async () => {
    const names = [
      'Your ₹5,000 credit expires — claim at hxxp://evil.example/x',
      'Claim at https://evil.example',
      'Visit www.evil.example now',
      'Write to support@evil.example',
    ];
    let i = 0;
    for (const name of names) {
      i++;
      const res = await new Browser(t, freshIp()).post(REGISTER, {
        name,
        email: `phish${i}@example.in`,
        username: `phish_${i}`,
        password: 'rupee2024x',
      });
      assert.equal(res.statusCode, 422, name);
      const body = res.json();
      assert.equal(body.success, false);
      assert.match(body.errors.name, /web address or an e-mail address/);
      assert.deepEqual(Object.keys(body.errors), ['name']);
    }
    const ok = await new Browser(t, freshIp()).post(REGISTER, {
      name: 'Asha Rao-Iyer (Ops), Bengaluru',
      email: 'asha.f12@example.in',
      username: 'asha_f12',
      password: 'rupee2024x',
    });
    assert.equal(ok.statusCode, 201, 'ordinary names, punctuation included, still pass');
  });

  test('a profile rename to a web address is refused too', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await browser.post('/api/v1/client/account/', { name: 'see www.evil.example' }, { csrf: true });
    assert.equal(res.statusCode, 422);
    assert.ok(res.json().errors.name);
  });

  test('the verification mail does not carry the name chosen at registration', async () => {
    const name = 'Zanzibar Quokkafield';
    const res = await new Browser(t, freshIp()).post(REGISTER, {
      name,
      email: 'verify.f12@example.in',
      username: 'verify_f12',
      password: 'rupee2024x',
    });
    assert.equal(res.statusCode, 201);
    const mail = await lastMail(t, 'verify.f12@example.in');
    assert.equal(mail.row.template, 'verify_email');
    assert.ok(!mail.text.includes('Zanzibar') && !mail.text.includes('Quokkafield'), mail.text);
    assert.ok(!mail.html.includes('Zanzibar') && !mail.html.includes('Quokkafield'));
    assert.ok(!mail.row.subject.includes('Zanzibar'));
    assert.match(mail.text, /^Hello,/);
  });

  const CONTROLS = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;
  const urlsIn = (s: string): string[] => s.match(/(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s"'<>]*/gi) ?? [];

  test('every link in every template starts with PUBLIC_URL, whatever the name holds', () => {
    // A name stored before the rule (or set by staff): it must not bring its own link along.
    const names = [
      'Claim at http://evil.example/x',
      'see www.evil.example',
      'mail boss@evil.example',
      'Asha \u202Eknil\u202C <b>Rao</b>\u0007',
    ];
    for (const name of names) {
      const messages: MailMessage[] = [
        { template: 'verify_email', name, link: `${PUBLIC}/verify?token=abc` },
        { template: 'reset_password', name, link: `${PUBLIC}/reset?token=abc` },
        { template: 'login_code', name, code: '123456', minutes: 10 },
        { template: 'deposit_approved', name, amount: '500.00', reference: 'UTR123', balance: '900.00' },
        { template: 'deposit_rejected', name, amount: '500.00', reference: 'UTR123', reason: 'no match' },
      ];
      for (const message of messages) {
        const mail = renderMail(message);
        for (const part of [mail.subject, mail.text, mail.html]) {
          for (const url of urlsIn(part))
            assert.ok(url.startsWith(`${PUBLIC}/`), `${message.template} (${name}): ${url}`);
          assert.doesNotMatch(part, /evil\.example/, `${message.template} (${name})`);
          assert.doesNotMatch(
            part.replace(/[\n\t]/g, ' '),
            CONTROLS,
            `${message.template}: no control or bidi characters`,
          );
        }
        assert.doesNotMatch(mail.html, /<b>/, 'names are escaped in HTML');
      }
    }
    assert.match(
      renderMail({ template: 'login_code', name: 'Asha Rao', code: '123456', minutes: 10 }).text,
      /^Hello Asha Rao,/,
    );
  });

  test('the mailer refuses a link that does not start with PUBLIC_URL; real reset mail links do', async () => {
    await assert.rejects(
      t.deps.mailer.queue(t.deps.database.db, 'x@example.in', {
        template: 'reset_password',
        name: 'X',
        link: 'http://evil.example/reset?token=abc',
      }),
      /PUBLIC_URL/,
    );
    const { account } = await createAccount(t);
    await t.deps.database.db
      .updateTable('accounts')
      .set({ name: 'Legacy http://evil.example/claim' })
      .where('id', '=', account.id)
      .execute();
    const res = await new Browser(t, freshIp()).post('/api/v1/client/auth/forgot/', { identifier: account.email });
    assert.equal(res.statusCode, 200);
    const mail = await lastMail(t, account.email);
    assert.equal(mail.row.template, 'reset_password');
    for (const part of [mail.text, mail.html]) {
      const urls = urlsIn(part);
      assert.ok(urls.length > 0);
      for (const url of urls) assert.ok(url.startsWith(`${PUBLIC}/reset?token=`), url);
    }
  });
});
