// Manual deposits over the session surface (spec 4.6; reliability T11).

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { JPEG, multipart, PDF, PNG, WEBP } from './support/uploads.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const DEPOSIT = '/api/v1/client/wallet/deposit/';
let refCounter = 0;
const nextRef = () => `UTR${Date.now()}${++refCounter}`;

function submit(
  browser: Browser,
  fields: Record<string, string>,
  file: Buffer | null = PNG,
  filename = 'proof.png',
  csrf: 'field' | 'header' | 'none' = 'field',
) {
  const withCsrf = csrf === 'field' ? { ...fields, csrf_token: browser.csrfToken as string } : fields;
  const form = multipart(
    withCsrf,
    file ? [{ field: 'screenshot', filename, contentType: 'image/png', data: file }] : [],
  );
  return browser.request('POST', DEPOSIT, {
    body: form.body,
    headers: {
      'content-type': form.contentType,
      ...(csrf === 'header' ? { 'x-csrf-token': browser.csrfToken as string } : {}),
    },
  });
}

const tmpFiles = () => {
  const dir = join(t.dataDir, 'uploads', 'tmp');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('the ledger, filtered', () => {
  test('by kind and by time window; pagination counts the filtered rows; bad filters are 422', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    for (const amount of ['10', '20', '30']) await t.deps.wallet.credit(account.id, amount, 'test credit');
    const get = (query: string) => browser.get(`/api/v1/client/wallet/?${query}`);

    const all = (await get('per_page=2')).json();
    assert.equal(all.pagination.total, 3);
    assert.equal(all.transactions.length, 2);
    const adjustments = (await get('kind=adjustment')).json();
    assert.equal(adjustments.pagination.total, 3);
    assert.ok(adjustments.transactions.every((r: { kind: string }) => r.kind === 'adjustment'));
    assert.equal((await get('kind=deposit,refund')).json().pagination.total, 0);

    const future = new Date(Date.now() + 86_400_000).toISOString();
    const past = new Date(Date.now() - 86_400_000).toISOString();
    assert.equal((await get(`from=${encodeURIComponent(future)}`)).json().pagination.total, 0);
    assert.equal(
      (await get(`from=${encodeURIComponent(past)}&to=${encodeURIComponent(future)}`)).json().pagination.total,
      3,
    );
    assert.equal((await get(`to=${encodeURIComponent(past)}`)).json().pagination.total, 0);

    const backwards = await get(`from=${encodeURIComponent(future)}&to=${encodeURIComponent(past)}`);
    assert.equal(backwards.statusCode, 422);
    assert.equal(backwards.json().errors.to, 'must be after from');
    for (const bad of ['kind=bonus', 'kind=deposit,', 'from=yesterday', 'to=2026-13-01T00:00:00Z']) {
      const refused = await get(bad);
      assert.equal(refused.statusCode, 422, bad);
      assert.equal(refused.json().code, 'validation_failed', bad);
    }
  });
});

describe('where to pay', () => {
  test('the wallet names the UPI ID and payee the operator configured, or null', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const none = await browser.get('/api/v1/client/wallet/');
    assert.equal(none.json().wallet.upi, null);
    const configured = await createTestApp({
      env: { UPI_VPA: 'pay.hostplane@okaxis', UPI_PAYEE_NAME: 'Hostplane Pvt Ltd' },
    });
    try {
      const signed = await signedInBrowser(configured, freshIp());
      const wallet = (await signed.browser.get('/api/v1/client/wallet/')).json().wallet;
      assert.deepEqual(wallet.upi, { vpa: 'pay.hostplane@okaxis', payee_name: 'Hostplane Pvt Ltd' });
    } finally {
      await configured.close();
    }
  });
});

describe('deposit submission', () => {
  test('a PNG, JPEG, WebP or PDF proof with amount and reference: 201 pending; listed and readable by its owner', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    for (const [data, name] of [
      [PNG, 'a.png'],
      [JPEG, 'b.jpg'],
      [WEBP, 'c.webp'],
      [PDF, 'd.pdf'],
    ] as const) {
      const res = await submit(browser, { amount: '1500.50', txn_ref: nextRef() }, data, name);
      assert.equal(res.statusCode, 201, res.body);
      const { deposit } = res.json();
      assert.equal(deposit.status, 'pending');
      assert.equal(deposit.amount, '1500.50');
      assert.match(deposit.public_id, /^pay_[0-9a-z]{16}$/);
    }
    const list = await browser.get(DEPOSIT);
    assert.equal(list.json().deposits.length, 4);
    assert.deepEqual(
      list.json().deposits.map((d: { screenshot: { type: string } }) => d.screenshot.type),
      ['pdf', 'webp', 'jpeg', 'png'],
    );
    const one = await browser.get(`${DEPOSIT}?id=${list.json().deposits[0].id}`);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().deposit.status, 'pending');
  });

  test('the CSRF token works as a form field or a header; without it: 403 and nothing stored', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    assert.equal((await submit(browser, { amount: '10', txn_ref: nextRef() }, PNG, 'x.png', 'header')).statusCode, 201);
    const before = await fingerprint(t);
    const res = await submit(browser, { amount: '10', txn_ref: nextRef() }, PNG, 'x.png', 'none');
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'csrf_failed');
    assert.deepEqual(await fingerprint(t), before);
    assert.deepEqual(tmpFiles(), [], 'the uploaded bytes were removed');
  });

  test('anonymous uploads are refused before the body is read', async () => {
    const browser = new Browser(t, freshIp());
    await browser.bootstrap();
    const res = await submit(browser, { amount: '10', txn_ref: nextRef() });
    assert.equal(res.statusCode, 401);
  });

  test('amounts: numbers or decimal strings with at most two places, above zero, at most 100000.00', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    for (const amount of ['0', '-5', '10.005', '1e3', 'abc', '100000.01', ' ', 'NaN', '0x10', ' 10', '10 ']) {
      const res = await submit(browser, { amount, txn_ref: nextRef() });
      assert.equal(res.statusCode, 422, `amount ${JSON.stringify(amount)}`);
      assert.ok(res.json().errors.amount, `amount ${JSON.stringify(amount)}`);
    }
    const ok = await submit(browser, { amount: '100000', txn_ref: nextRef() });
    assert.equal(ok.statusCode, 201);
    assert.equal(ok.json().deposit.amount, '100000.00');
  });

  test('every missing part is reported together', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await submit(browser, {}, null);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(Object.keys(res.json().errors).sort(), ['amount', 'screenshot', 'txn_ref']);
  });

  test('txn_ref is trimmed and unique across accounts regardless of case: reuse is 422', async () => {
    const a = await signedInBrowser(t, freshIp());
    const b = await signedInBrowser(t, freshIp());
    const ref = nextRef();
    assert.equal((await submit(a.browser, { amount: '99', txn_ref: `  ${ref}  ` })).statusCode, 201);
    const again = await submit(b.browser, { amount: '99', txn_ref: ref.toLowerCase() });
    assert.equal(again.statusCode, 422);
    assert.equal(again.json().errors.txn_ref, 'has already been used');
  });

  test('the same txn_ref from two accounts at once: exactly one row, the other 422', async () => {
    const a = await signedInBrowser(t, freshIp());
    const b = await signedInBrowser(t, freshIp());
    const ref = nextRef();
    // Two each: an account's third upload in flight would be 429 (T3-M4).
    const results = await Promise.all([
      ...Array.from({ length: 2 }, () => submit(a.browser, { amount: '50', txn_ref: ref })),
      ...Array.from({ length: 2 }, () => submit(b.browser, { amount: '50', txn_ref: ref })),
    ]);
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1);
    assert.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 422));
    const rows = await t.deps.database.db.selectFrom('deposits').select('id').where('txn_ref', '=', ref).execute();
    assert.equal(rows.length, 1);
  });
});

describe('deposit uploads', () => {
  test('HTML (or SVG) dressed as a PNG is 415 and leaves no file', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    for (const fake of [
      '<html><script>alert(1)</script></html>',
      '<svg xmlns="http://www.w3.org/2000/svg"/>',
      'GIF89a0000000000',
    ]) {
      const res = await submit(browser, { amount: '10', txn_ref: nextRef() }, Buffer.from(fake), 'proof.png');
      assert.equal(res.statusCode, 415);
    }
    assert.deepEqual(tmpFiles(), []);
  });

  test('over 5 MiB: 413 while streaming, without Content-Length, and no file left behind', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
    const form = multipart({ amount: '10', txn_ref: nextRef(), csrf_token: browser.csrfToken as string }, [
      { field: 'screenshot', filename: 'big.png', contentType: 'image/png', data: big },
    ]);
    // Sent as a stream of chunks: no Content-Length to trust.
    const chunks = Array.from({ length: Math.ceil(form.body.length / 65536) }, (_, i) =>
      form.body.subarray(i * 65536, (i + 1) * 65536),
    );
    const res = await t.inject({
      method: 'POST',
      url: DEPOSIT,
      headers: {
        'content-type': form.contentType,
        cookie: `SVCSESSID=${browser.sessionId}`,
        'transfer-encoding': 'chunked',
      },
      payload: Readable.from(chunks),
      remoteAddress: browser.ip,
    });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'file_too_large');
    assert.deepEqual(tmpFiles(), []);
  });

  test('the client file name (with a path) is ignored: stored under a random name', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const res = await submit(browser, { amount: '10', txn_ref: nextRef() }, PNG, '../../../etc/passwd.png');
    assert.equal(res.statusCode, 201);
    const row = await t.deps.database.db
      .selectFrom('deposits')
      .selectAll()
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.match(row.screenshot_file ?? '', /^[0-9a-f]{32}\.png$/);
    assert.ok(existsSync(join(t.dataDir, 'uploads', 'deposits', row.screenshot_file ?? '')));
  });

  test('a second file, or a file on a route that takes none, is refused', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const two = multipart({ amount: '10', txn_ref: nextRef(), csrf_token: browser.csrfToken as string }, [
      { field: 'screenshot', filename: 'a.png', contentType: 'image/png', data: PNG },
      { field: 'screenshot2', filename: 'b.png', contentType: 'image/png', data: PNG },
    ]);
    const res = await browser.request('POST', DEPOSIT, {
      body: two.body,
      headers: { 'content-type': two.contentType },
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().errors.body, 'send one file only');
    const elsewhere = multipart({ name: 'New Name', csrf_token: browser.csrfToken as string }, [
      { field: 'avatar', filename: 'a.png', contentType: 'image/png', data: PNG },
    ]);
    const account = await browser.request('POST', '/api/v1/client/account/', {
      body: elsewhere.body,
      headers: { 'content-type': elsewhere.contentType },
    });
    assert.equal(account.statusCode, 415);
    assert.deepEqual(tmpFiles(), []);
  });

  test('a deposit is a form: JSON naming a "screenshot" (a path on the server) is 415 and touches no file', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const victim = join(t.dataDir, 'victim.txt');
    writeFileSync(victim, 'not yours');
    for (const screenshot of [
      { tmpPath: victim, type: 'png', bytes: 9 },
      { tmpPath: victim, type: '/../../../victim-moved', bytes: 9 },
    ]) {
      const res = await browser.post(DEPOSIT, { amount: 10, txn_ref: nextRef(), screenshot }, { csrf: true });
      assert.equal(res.statusCode, 415, res.body);
      assert.equal(res.json().code, 'unsupported_media_type');
    }
    assert.equal(readFileSync(victim, 'utf8'), 'not yours');
    assert.equal((await browser.get(DEPOSIT)).json().deposits.length, 0);
  });

  test('a text field where the file goes, or a broken form: 4xx in the envelope, nothing kept', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const text = await submit(browser, { amount: '10', txn_ref: nextRef(), screenshot: 'notafile' }, null);
    assert.equal(text.statusCode, 422, text.body);
    assert.match(text.json().errors.screenshot, /file/);
    for (const [contentType, body] of [
      ['multipart/form-data', 'xx'],
      ['multipart/form-data; boundary=abc', 'garbage'],
      ['multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="amount"\r\n\r\n10'],
    ]) {
      const res = await browser.request('POST', DEPOSIT, {
        body,
        headers: { 'content-type': contentType as string, 'x-csrf-token': browser.csrfToken as string },
      });
      assert.equal(res.statusCode, 400, `${contentType}: ${res.body}`);
      assert.equal(res.json().success, false);
    }
    assert.deepEqual(tmpFiles(), []);
  });

  test('action=screenshot needs an id', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await browser.get(`${DEPOSIT}?action=screenshot`);
    assert.equal(res.statusCode, 422);
    assert.match(res.json().errors.id, /required/);
  });

  test('the screenshot goes to its owner only, as an attachment with nosniff', async () => {
    const owner = await signedInBrowser(t, freshIp());
    const other = await signedInBrowser(t, freshIp());
    const { deposit } = (await submit(owner.browser, { amount: '10', txn_ref: nextRef() }, JPEG, 'p.jpg')).json();
    const res = await owner.browser.get(deposit.screenshot.url);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'image/jpeg');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="deposit-pay_[0-9a-z]{16}\.jpg"$/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.ok(res.rawPayload.equals(JPEG));
    const foreign = await other.browser.get(deposit.screenshot.url);
    const missing = await other.browser.get(`${DEPOSIT}?id=999999&action=screenshot`);
    assert.equal(foreign.statusCode, 404);
    assert.deepEqual(foreign.json(), missing.json(), "another account's deposit looks exactly like a missing one");
    assert.equal((await other.browser.get(`${DEPOSIT}?id=${deposit.id}`)).statusCode, 404);
    assert.equal((await new Browser(t, freshIp()).get(deposit.screenshot.url)).statusCode, 401);
  });

  test('rate-limited: the 6th deposit within an hour is 429', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const refused = await submit(browser, { amount: '0', txn_ref: nextRef() });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.headers['ratelimit-remaining'], '5', 'a refused deposit is given back, and says so');
    for (let i = 0; i < 5; i++)
      assert.equal((await submit(browser, { amount: '1', txn_ref: nextRef() })).statusCode, 201);
    const res = await submit(browser, { amount: '1', txn_ref: nextRef() });
    assert.equal(res.statusCode, 429);
    assert.ok(res.headers['retry-after']);
  });
});
