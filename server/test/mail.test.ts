// Mail delivery: real SMTP, an SMTP server that is down, and the outbox without SMTP_URL.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { freshIp, linkToken, loginCode } from './support/factories.ts';
import { createTestApp, onPostgres, type TestApp } from './support/harness.ts';
import { freePort } from './support/process.ts';
import { decodeQuotedPrintable, startSmtp } from './support/smtp.ts';
import { waitFor } from './support/wait.ts';

const outbox = (t: TestApp, to: string) =>
  t.deps.database.db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('to_address', '=', to)
    .orderBy('id', 'desc')
    .executeTakeFirst();

const register = (t: TestApp, tag: string, password = 'Canary-PW-7f3a9c21') =>
  new Browser(t, freshIp()).post('/api/v1/client/auth/register/', {
    name: `Mail ${tag}`,
    email: `mail.${tag}@example.in`,
    username: `mail_${tag}`,
    password,
  });

describe('mail', () => {
  test('delivered over real SMTP with text and HTML bodies; the stored body is discarded after delivery', async () => {
    const smtp = await startSmtp();
    const t = await createTestApp({
      worker: true,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Hostplane <billing@hostplane.test>' },
    });
    try {
      assert.equal((await register(t, 'smtp')).statusCode, 201);
      const mail = await waitFor('delivery', async () =>
        smtp.received.find((m) => m.to.includes('mail.smtp@example.in')),
      );
      assert.equal(mail.from, 'billing@hostplane.test');
      const decoded = decodeQuotedPrintable(mail.raw);
      assert.match(decoded, /Subject: Verify your e-mail address/);
      assert.match(decoded, /Content-Type: text\/plain/);
      assert.match(decoded, /Content-Type: text\/html/);
      const token = linkToken(decoded, 'verify');
      const row = await waitFor('sent status', async () => {
        const r = await outbox(t, 'mail.smtp@example.in');
        return r?.status === 'sent' ? r : null;
      });
      assert.equal(row.body_sealed, null);
      assert.ok(row.sent_at);
      assert.equal((await new Browser(t, freshIp()).post('/api/v1/client/auth/verify/', { token })).statusCode, 200);
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  test('a mail server that is down fails nothing and loses nothing: the mail goes out when it is back', async () => {
    const port = await freePort();
    const t = await createTestApp({
      worker: true,
      env: { SMTP_URL: `smtp://127.0.0.1:${port}` },
      overrides: { queues: { 'mail.send': { retryDelay: 1, retryBackoff: false } } },
    });
    let smtp: Awaited<ReturnType<typeof startSmtp>> | null = null;
    try {
      const res = await register(t, 'down');
      assert.equal(res.statusCode, 201, 'the request does not wait for or fail with the mail server');
      const failed = await waitFor('a failed attempt', async () => {
        const r = await outbox(t, 'mail.down@example.in');
        return r && r.attempts >= 1 ? r : null;
      });
      assert.equal(failed.status, 'queued');
      assert.match(failed.last_error ?? '', /ECONNREFUSED|connect/i);
      assert.ok(failed.body_sealed, 'the message is kept for the next attempt');
      smtp = await startSmtp(port);
      await waitFor(
        'delivery after recovery',
        async () => smtp?.received.find((m) => m.to.includes('mail.down@example.in')),
        90_000,
      );
      const sent = await waitFor('sent status', async () => {
        const r = await outbox(t, 'mail.down@example.in');
        return r?.status === 'sent' ? r : null;
      });
      assert.ok(sent.attempts >= 2);
    } finally {
      await t.close();
      await smtp?.close();
    }
  });

  test('without SMTP_URL: the mail is stored in the outbox and its link is in the log for a developer', async () => {
    const t = await createTestApp({ worker: true });
    try {
      assert.equal((await register(t, 'outbox')).statusCode, 201);
      const row = await waitFor('stored', async () => {
        const r = await outbox(t, 'mail.outbox@example.in');
        return r?.status === 'stored' ? r : null;
      });
      assert.ok(row.body_sealed, 'kept (encrypted) so `admin mail show` can display it');
      assert.doesNotMatch(row.body_sealed ?? '', /verify\?token=/, 'encrypted at rest');
      if (onPostgres) {
        // PostgreSQL is production: the outbox id and template only, never the text (review F9).
        await waitFor('the log line', async () =>
          t.logs.lines.find((l) => l.includes('not delivered (no SMTP_URL)') && l.includes(`"outbox":${row.id}`)),
        );
        assert.doesNotMatch(t.logs.text(), /verify\?token=/);
        return;
      }
      const line = t.logs.lines.find(
        (l) => l.includes('mail stored (no SMTP_URL)') && l.includes('mail.outbox@example.in'),
      );
      assert.ok(line);
      assert.match(line, /verify\?token=[A-Za-z0-9_-]{43}/);
    } finally {
      await t.close();
    }
  });

  test('canaries: a password and a login code never reach the logs (SMTP configured)', async () => {
    const smtp = await startSmtp();
    const t = await createTestApp({ worker: true, env: { SMTP_URL: smtp.url } });
    try {
      const password = 'Canary-PW-9d8e7f6a5b';
      await register(t, 'canary', password);
      await waitFor('verification mail', async () =>
        smtp.received.find((m) => m.to.includes('mail.canary@example.in')),
      );
      const verifyToken = linkToken(decodeQuotedPrintable(smtp.received.at(-1)?.raw ?? ''), 'verify');
      await new Browser(t, freshIp()).post('/api/v1/client/auth/verify/', { token: verifyToken });
      const browser = new Browser(t, freshIp());
      await browser.login('mail_canary', password);
      await browser.login('mail_canary', `${password}-wrong`);
      const before = smtp.received.length;
      await new Browser(t, freshIp()).post('/api/v1/client/auth/otp-login/', {
        action: 'request',
        identifier: 'mail_canary',
      });
      await waitFor('code mail', async () => smtp.received.length > before);
      const code = loginCode(decodeQuotedPrintable(smtp.received.at(-1)?.raw ?? ''));
      await new Browser(t, freshIp()).post('/api/v1/client/auth/otp-login/', {
        action: 'verify',
        identifier: 'mail_canary',
        code,
      });
      const logs = t.logs.text();
      assert.ok(t.logs.lines.length >= 6, 'there are logs to search');
      for (const secret of [password, code, verifyToken, browser.sessionId as string, browser.csrfToken as string]) {
        assert.equal(logs.includes(secret), false, `a secret (${secret.slice(0, 4)}…) was logged`);
      }
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
