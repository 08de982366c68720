// Data export (issue 36 part D, CONTRACT §11): a customer asks for an archive of their account on the
// session surface; the job builds it and mails a link to the panel (never to the archive); the owner
// downloads it as a JSON attachment for 24 hours, then it expires and the sweep deletes it. The
// archive holds what it promises (profile, billing details, services, orders, invoices and credit
// notes, ledger, deposits, tokens, SSH keys, sessions, two-factor status, notifications, mail), none
// of another account's data (two accounts seeded alike; the archive scanned for the other's e-mail,
// name, username, identifiers, keys and tokens), and no secret (password or its hash, token secret
// or hash, session cookie or hash, TOTP secret, recovery codes, sealed credentials). One export an
// hour (429 with retry_after); only the owner can read it. Runs on PostgreSQL too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256Hex } from '../src/core/crypto/secrets.ts';
import { sweep } from '../src/core/housekeeping.ts';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail } from './support/factories.ts';
import { ManualClock } from './support/harness.ts';
import { type Customer, EXPORT, richCustomer, WAIT } from './support/privacy.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const clock = new ManualClock();
let u: UpstreamApp;
let a: Customer;
let b: Customer;

before(async () => {
  u = await createUpstreamApp({ overrides: { clock: clock.now } });
  a = await richCustomer(u.t, 'Asha Export', { twoFactor: true, now: clock.now });
  b = await richCustomer(u.t, 'Bimal Other', { twoFactor: true, now: clock.now });
});
after(() => u.close());

const db = () => u.t.deps.database.db;

async function readyExport(browser: Browser, id: number) {
  return waitFor(
    'the export to be built',
    async () => {
      const list = (await browser.get(EXPORT)).json().exports as { id: number; status: string; download_url: string }[];
      const found = list.find((e) => e.id === id);
      return found?.status === 'ready' ? found : null;
    },
    WAIT,
  );
}

async function download(browser: Browser, id: number) {
  const res = await browser.get(`${EXPORT}?id=${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res;
}

describe('data export', () => {
  let exportId = 0;
  let raw = '';

  test('asking queues it (202); the job builds it; the mail links to the panel, not to the archive', async () => {
    const res = await a.browser.post(EXPORT, {}, { csrf: true });
    assert.equal(res.statusCode, 202, res.body);
    const asked = res.json().export;
    assert.equal(asked.status, 'queued');
    assert.equal(asked.include_proofs, false);
    assert.equal(asked.download_url, null);
    exportId = asked.id;
    const ready = await readyExport(a.browser, exportId);
    assert.equal(ready.download_url, `${EXPORT}?id=${exportId}`);
    const mail = await lastMail(u.t, a.email);
    assert.equal(mail.row.template, 'privacy');
    assert.equal(mail.row.subject, 'Your Hostplane data export is ready');
    assert.match(mail.text, /http:\/\/localhost:8080\/account\/privacy/);
    assert.ok(!mail.text.includes('account/export'), 'the mail never links to the archive itself');
  });

  test('the owner downloads it as a JSON attachment named after the day', async () => {
    const res = await download(a.browser, exportId);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(
      String(res.headers['content-disposition']),
      /^attachment; filename="hostplane-export-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    assert.equal(res.headers['cache-control'], 'private, no-store');
    raw = res.body;
    const archive = JSON.parse(raw);
    assert.equal(archive.format, 'hostplane-account-export');
    assert.equal(archive.account_id, a.id);
    // The activity log: asked, built, downloaded — once each, for this export.
    const events = await u.t.deps.database.db
      .selectFrom('account_activity')
      .select('type')
      .where('account_id', '=', a.id)
      .where('type', 'like', 'export_%')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['export_requested', 'export_ready', 'export_downloaded'],
    );
  });

  test('it holds what it promises', () => {
    const x = JSON.parse(raw);
    const names = (x.sections as { name: string }[]).map((s) => s.name);
    for (const section of [
      'profile',
      'two_factor',
      'sessions',
      'passkeys',
      'activity',
      'api_tokens',
      'ssh_keys',
      'notifications',
      'mail',
      'billing_profile',
      'wallet',
      'ledger',
      'deposits',
      'orders',
      'invoices',
      'credit_notes',
      'services',
      'service_requests',
    ]) {
      assert.ok(names.includes(section), `section ${section} is listed`);
      assert.ok(section in x, `section ${section} is there`);
    }
    assert.deepEqual(
      [x.profile.id, x.profile.name, x.profile.email, x.profile.username, x.profile.status],
      [a.id, a.name, a.email, a.username, 'active'],
    );
    assert.equal(x.billing_profile.legal_name, a.legalName);
    // The activity log is in it: at least this export's request, and only this account's sign-ins.
    const types = (x.activity as { type: string }[]).map((e) => e.type);
    assert.ok(types.includes('export_requested'), types.join(','));
    assert.ok(types.includes('sign_in'), types.join(','));
    assert.deepEqual(
      x.services.map((s: { id: number }) => s.id),
      [a.serviceId],
    );
    assert.equal(x.services[0].label, a.serviceLabel);
    assert.equal(x.services[0].ipv4.length, 1, 'the address it holds');
    assert.ok(!('credentials_sealed' in x.services[0]) && !('external' in x.services[0]));
    assert.deepEqual(
      x.orders.map((o: { public_id: string }) => o.public_id),
      [a.orderPublicId],
    );
    assert.deepEqual(
      [...x.invoices, ...x.credit_notes].map((i: { number: string }) => i.number),
      a.invoiceNumbers,
    );
    assert.equal(x.credit_notes[0].reason, 'Goodwill credit for downtime');
    assert.equal(x.credit_notes[0].original_number, a.invoiceNumbers[0]);
    assert.deepEqual(x.ledger.map((l: { public_id: string }) => l.public_id).sort(), [...a.ledgerPublicIds].sort());
    assert.equal(x.wallet.balance, x.ledger.at(-1).balance_after);
    assert.equal(x.deposits.length, 1);
    assert.equal(x.deposits[0].public_id, a.depositPublicId);
    assert.equal(x.deposits[0].status, 'pending');
    assert.match(x.deposits[0].proof.note, /Not included/);
    assert.equal(x.api_tokens.length, 1);
    assert.deepEqual(
      [x.api_tokens[0].name, x.api_tokens[0].prefix, x.api_tokens[0].scopes],
      ['ci bot', a.tokenHint, ['read']],
    );
    assert.deepEqual(
      x.ssh_keys.map((k: { fingerprint: string; public_key: string }) => [k.fingerprint, k.public_key]),
      [[a.sshFingerprint, a.sshKeyLine]],
    );
    assert.ok(x.sessions.length >= 1);
    assert.ok(x.sessions.every((s: Record<string, unknown>) => !('id_hash' in s)));
    assert.deepEqual([x.two_factor.totp, x.two_factor.recovery_codes_left], [true, 10]);
    assert.ok(x.mail.some((m: { template: string }) => m.template === 'verify_email'));
    assert.ok(x.mail.every((m: { to_address: string }) => m.to_address === a.email));
  });

  test('nothing of the other account is in it: not its e-mail, name, ids, keys or tokens', async () => {
    const other = await db()
      .selectFrom('services')
      .select(['id', 'label', 'config'])
      .where('account_id', '=', b.id)
      .executeTakeFirstOrThrow();
    const needles = [
      b.email,
      b.name,
      b.username,
      b.legalName,
      b.serviceLabel,
      String(other.config.hostname),
      b.orderPublicId,
      b.depositPublicId,
      ...b.invoiceNumbers,
      ...b.ledgerPublicIds,
      b.tokenHint,
      b.sshKeyLine.split(' ')[1] as string,
      b.sshFingerprint,
      ...(await db().selectFrom('sessions').select('ip').where('account_id', '=', b.id).execute()).map(
        (s) => s.ip as string,
      ),
    ];
    for (const needle of needles) {
      assert.ok(!raw.toLowerCase().includes(needle.toLowerCase()), `the archive holds the other account's ${needle}`);
    }
    // Every id an archive row carries of an account is this account's.
    const accountIds = [...raw.matchAll(/"account_id": (\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual([...new Set(accountIds)], [a.id]);
  });

  test('no secret is in it', async () => {
    const row = await db()
      .selectFrom('accounts')
      .select('password_hash')
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    const token = await db()
      .selectFrom('api_tokens')
      .select('token_hash')
      .where('account_id', '=', a.id)
      .executeTakeFirstOrThrow();
    const sessions = await db().selectFrom('sessions').select('id_hash').where('account_id', '=', a.id).execute();
    const totp = await db()
      .selectFrom('two_factor')
      .select('totp_secret')
      .where('account_id', '=', a.id)
      .executeTakeFirstOrThrow();
    const recovery = await db()
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('account_id', '=', a.id)
      .execute();
    const service = await db()
      .selectFrom('services')
      .select('credentials_sealed')
      .where('id', '=', a.serviceId)
      .executeTakeFirstOrThrow();
    const cookie = a.browser.sessionId as string;
    const secrets = [
      a.password,
      row.password_hash,
      '$argon2',
      a.tokenSecret,
      token.token_hash,
      cookie,
      sha256Hex(cookie),
      ...sessions.map((s) => s.id_hash),
      a.totpSecret as string,
      totp.totp_secret as string,
      ...a.recoveryCodes,
      ...recovery.map((r) => r.code_hash),
      service.credentials_sealed as string,
    ];
    for (const secret of secrets) {
      assert.ok(secret && secret.length >= 6, 'a real secret to look for');
      assert.ok(!raw.includes(secret), `the archive holds a secret (${secret.slice(0, 8)}…)`);
    }
    assert.doesNotMatch(raw, /password_hash|token_hash|id_hash|totp_secret|code_hash|credentials_sealed/);
  });

  test('one an hour: a second request is 429 with retry_after; an hour on it is accepted', async () => {
    const again = await a.browser.post(EXPORT, { include_proofs: true }, { csrf: true });
    assert.equal(again.statusCode, 429, again.body);
    assert.equal(again.json().code, 'rate_limited');
    const retry = again.json().details.retry_after;
    assert.ok(Number.isInteger(retry) && retry > 3500 && retry <= 3600, `retry_after ${retry}`);
    assert.equal(again.headers['retry-after'], String(retry));
    // Another account is not held back by this one's export.
    const other = await b.browser.post(EXPORT, {}, { csrf: true });
    assert.equal(other.statusCode, 202, other.body);
    clock.advance(3601);
    const later = await a.browser.post(EXPORT, { include_proofs: true }, { csrf: true });
    assert.equal(later.statusCode, 202, later.body);
    assert.equal(later.json().export.include_proofs, true);
  });

  test('with proof files asked for, the deposit proof is inline (base64), byte for byte', async () => {
    const list = (await a.browser.get(EXPORT)).json().exports as { id: number; include_proofs: boolean }[];
    const withProofs = list.find((e) => e.include_proofs) as { id: number };
    await readyExport(a.browser, withProofs.id);
    const x = JSON.parse((await download(a.browser, withProofs.id)).body);
    const proof = x.deposits[0].proof;
    assert.equal(proof.media_type, 'image/png');
    const file = await db()
      .selectFrom('deposits')
      .select('screenshot_file')
      .where('account_id', '=', a.id)
      .executeTakeFirstOrThrow();
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const stored = readFileSync(join(u.t.dataDir, 'uploads', 'deposits', file.screenshot_file as string));
    assert.deepEqual(Buffer.from(proof.base64, 'base64'), stored);
  });

  test('only the owner: another account gets 404 not_owner, a visitor 401; lists are per account', async () => {
    const foreign = await b.browser.get(`${EXPORT}?id=${exportId}`);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(foreign.json().code, 'not_owner');
    const listed = (await b.browser.get(EXPORT)).json().exports as { id: number }[];
    assert.ok(!listed.some((e) => e.id === exportId));
    const visitor = new Browser(u.t, freshIp());
    await visitor.bootstrap();
    assert.equal((await visitor.get(`${EXPORT}?id=${exportId}`)).statusCode, 401);
    assert.equal((await visitor.post(EXPORT, {}, { csrf: true })).statusCode, 401);
    const noCsrf = await a.browser.post(EXPORT, {}, { csrf: false });
    assert.equal(noCsrf.statusCode, 403, noCsrf.body);
  });

  test('at rest the archive is sealed: no plain text of it in the database', async () => {
    const row = await db()
      .selectFrom('account_exports')
      .select('archive')
      .where('id', '=', exportId)
      .executeTakeFirstOrThrow();
    const bytes = row.archive as Buffer;
    assert.ok(bytes.length > 0);
    assert.ok(!bytes.toString('latin1').includes(a.email));
    assert.ok(!bytes.toString('latin1').includes('hostplane-account-export'));
  });

  test('after 24 hours it is expired (status only, no archive); the sweep deletes it; then 404', async () => {
    clock.advance(24 * 3600);
    const res = await a.browser.get(`${EXPORT}?id=${exportId}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().export.status, 'expired');
    assert.equal(res.json().export.download_url, null);
    assert.equal(res.headers['content-disposition'], undefined);
    const removed = await sweep(db(), clock.now());
    assert.ok((removed.account_exports ?? 0) >= 1);
    const gone = await a.browser.get(`${EXPORT}?id=${exportId}`);
    assert.equal(gone.statusCode, 404, gone.body);
    assert.equal(
      (await db().selectFrom('account_exports').select('id').where('id', '=', exportId).execute()).length,
      0,
    );
  });
});
