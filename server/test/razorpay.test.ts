// Online deposits through Razorpay (issue 35, CONTRACT §12), over HTTP against the Razorpay
// emulator: the deposit route opens a gateway order; checkout's hand-back and the signed webhooks
// credit the wallet exactly once whatever their order or repetition; forged signatures, failed and
// abandoned payments credit nothing; a gateway failure at creation leaves no deposit behind.
// The emulator's webhooks arrive at a mailbox (a loopback server) and are handed to the app when
// a test says, byte for byte as signed, so every ordering can be played.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const DEPOSIT = '/api/v1/client/wallet/deposit/';
const WEBHOOK = '/api/v1/webhooks/razorpay';

interface Held {
  event: string;
  body: string;
  signature: string;
}

let t: TestApp;
let emu: RazorpayEmulator;
let mailbox: Server;
const held: Held[] = [];

before(async () => {
  mailbox = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      held.push({ event: JSON.parse(body).event, body, signature: String(req.headers['x-razorpay-signature']) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => mailbox.listen(0, '127.0.0.1', resolve));
  const address = mailbox.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  emu = await startRazorpayEmulator({ webhookUrl: `http://127.0.0.1:${port}/hook` });
  t = await createTestApp({
    env: {
      RAZORPAY_KEY_ID: emu.keyId,
      RAZORPAY_KEY_SECRET: emu.keySecret,
      RAZORPAY_WEBHOOK_SECRET: emu.webhookSecret,
      RAZORPAY_API_URL: emu.url,
    },
  });
});
after(async () => {
  await t?.close();
  await emu?.stop();
  await new Promise<void>((resolve) => mailbox?.close(() => resolve()));
});

/** The events raised for an order so far (delivered to the mailbox), oldest first. */
async function eventsOf(orderId: string): Promise<Held[]> {
  await emu.webhooksIdle();
  return held.filter((h) => JSON.parse(h.body).payload?.payment?.entity?.order_id === orderId);
}

function deliver(h: Pick<Held, 'body' | 'signature'>) {
  return t.inject({
    method: 'POST',
    url: WEBHOOK,
    headers: { 'content-type': 'application/json', 'x-razorpay-signature': h.signature },
    payload: h.body,
  });
}

async function start(browser: Browser, amount = '250.00') {
  const res = await browser.post(DEPOSIT, { method: 'razorpay', amount }, { csrf: true });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

function verify(
  browser: Browser,
  fields: { razorpay_order_id: string; razorpay_payment_id: string; razorpay_signature: string },
) {
  const { razorpay_order_id, razorpay_payment_id, razorpay_signature } = fields;
  return browser.post(
    DEPOSIT,
    { action: 'razorpay_verify', razorpay_order_id, razorpay_payment_id, razorpay_signature },
    { csrf: true },
  );
}

async function depositCredits(depositId: number) {
  return t.deps.database.db
    .selectFrom('wallet_transactions')
    .selectAll()
    .where('reference_type', '=', 'deposit')
    .where('reference_id', '=', depositId)
    .execute();
}

async function balanceOf(accountId: number) {
  return String(await t.deps.wallet.balance(accountId));
}

describe('starting an online deposit', () => {
  test('creates a pending razorpay deposit and a gateway order with its public id as receipt', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const body = await start(browser, '499.50');
    assert.equal(body.success, true);
    assert.equal(body.deposit.method, 'razorpay');
    assert.equal(body.deposit.status, 'pending');
    assert.equal(body.deposit.txn_ref, null);
    assert.equal(body.deposit.screenshot, null);
    assert.equal(body.checkout.key_id, emu.keyId);
    assert.equal(body.checkout.amount_paise, 49950);
    assert.equal(body.checkout.currency, 'INR');
    assert.equal(body.checkout.prefill.email, account.email);
    const order = emu.state.orders.get(body.checkout.order_id);
    assert.ok(order);
    assert.equal(order.amount, 49950);
    assert.equal(order.receipt, body.deposit.public_id);
    assert.equal(body.deposit.gateway_order_id, order.id);
  });

  test('bad amounts are 422 and make no order', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const before = emu.calls.get('POST /v1/orders') ?? 0;
    for (const amount of ['0', '0.50', '100000.01', 'ten']) {
      const res = await browser.post(DEPOSIT, { method: 'razorpay', amount }, { csrf: true });
      assert.equal(res.statusCode, 422, amount);
      assert.ok(res.json().errors.amount, amount);
    }
    assert.equal(emu.calls.get('POST /v1/orders') ?? 0, before);
  });

  test('a gateway 5xx at creation is a clean 503 and leaves no deposit', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    await emu.setFaults({ errorNext: 1 });
    const res = await browser.post(DEPOSIT, { method: 'razorpay', amount: '100' }, { csrf: true });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().code, 'service_unavailable');
    assert.doesNotMatch(res.body, /SERVER_ERROR|stack|secret/i);
    const rows = await t.deps.database.db
      .selectFrom('deposits')
      .where('account_id', '=', account.id)
      .selectAll()
      .execute();
    assert.equal(rows.length, 0);
  });

  test('a gateway that never answers times out (15 s) into a clean 503, and no deposit is left behind', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    await emu.setFaults({ hang: true });
    try {
      const res = await browser.post(DEPOSIT, { method: 'razorpay', amount: '100' }, { csrf: true });
      assert.equal(res.statusCode, 503, res.body);
      assert.doesNotMatch(res.body, /stack|secret|rzp_test/i);
    } finally {
      await emu.setFaults({ hang: false });
    }
    const rows = await t.deps.database.db
      .selectFrom('deposits')
      .where('account_id', '=', account.id)
      .selectAll()
      .execute();
    assert.equal(rows.length, 0);
  });

  test('JSON without method razorpay is still refused (the manual flow is multipart)', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await browser.post(DEPOSIT, { amount: '10', txn_ref: 'UTR1234567' }, { csrf: true });
    assert.equal(res.statusCode, 415);
  });
});

describe('paying', () => {
  test('pay + verify credits once; a second verify and the webhooks after it change nothing', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '250');
    const paid = emu.pay(checkout.order_id);
    const res = await verify(browser, paid);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().deposit.status, 'approved');
    assert.equal(res.json().deposit.gateway_payment_id, paid.razorpay_payment_id);
    assert.equal((await verify(browser, paid)).statusCode, 200);
    const events = await eventsOf(checkout.order_id);
    assert.deepEqual(
      events.map((e) => e.event),
      ['payment.captured', 'order.paid'],
    );
    for (const e of [...events, ...events]) assert.equal((await deliver(e)).statusCode, 200);
    assert.equal((await depositCredits(deposit.id)).length, 1);
    assert.equal(await balanceOf(account.id), '25000');
    const row = await t.deps.database.db
      .selectFrom('deposits')
      .selectAll()
      .where('id', '=', deposit.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.reviewed_by, 'razorpay');
  });

  test('webhook first, then verify: credited once', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '120');
    const paid = emu.pay(checkout.order_id);
    const events = await eventsOf(checkout.order_id);
    // Reordered and duplicated, as Razorpay may deliver them.
    for (const e of [events[1] as Held, events[0] as Held, events[1] as Held]) {
      const res = await deliver(e);
      assert.equal(res.statusCode, 200, res.body);
    }
    const res = await verify(browser, paid);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().deposit.status, 'approved');
    assert.equal((await depositCredits(deposit.id)).length, 1);
    assert.equal(await balanceOf(account.id), '12000');
  });

  test('verify and webhooks at the same moment credit once', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '75');
    const paid = emu.pay(checkout.order_id);
    const events = await eventsOf(checkout.order_id);
    const answers = await Promise.all([verify(browser, paid), ...events.map(deliver), verify(browser, paid)]);
    for (const a of answers) assert.equal(a.statusCode, 200, a.body);
    assert.equal((await depositCredits(deposit.id)).length, 1);
    assert.equal(await balanceOf(account.id), '7500');
  });
});

/** The hidden fields of an HTML form the emulator answered (its hand-back to the callback). */
function formFields(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1] as string,
      (m[2] as string).replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))),
    ]),
  );
}

/** What the customer's browser does on the gateway's pages: open Hosted Checkout with the form, press a button. */
async function checkoutButton(checkout: { url: string; fields: Record<string, string> }, action: string) {
  const page = await fetch(checkout.url, { method: 'POST', body: new URLSearchParams(checkout.fields) });
  assert.equal(page.status, 200, await page.clone().text());
  const form = formFields(await page.text());
  return fetch(`${emu.url}/checkout/${checkout.fields.order_id}`, {
    method: 'POST',
    body: new URLSearchParams({ ...form, method: 'upi', action }),
    redirect: 'manual',
  });
}

/** The gateway's POST to the callback URL, as the customer's browser sends it. */
function postBack(fields: Record<string, string>) {
  return t.inject({
    method: 'POST',
    url: '/wallet/razorpay-return',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: emu.url },
    payload: new URLSearchParams(fields).toString(),
  });
}

describe('Hosted Checkout and the way back to the panel', () => {
  test('the answer carries the hosted form: the gateway page, its fields, callback and cancel on PUBLIC_URL', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '500');
    assert.equal(checkout.url, `${emu.url}/v1/checkout/embedded`);
    assert.deepEqual(checkout.fields, {
      key_id: emu.keyId,
      order_id: checkout.order_id,
      amount: '50000',
      currency: 'INR',
      name: checkout.name,
      description: `Wallet deposit ${deposit.public_id}`,
      'prefill[name]': account.name,
      'prefill[email]': account.email,
      callback_url: 'http://localhost:8080/wallet/razorpay-return',
      cancel_url: `http://localhost:8080/wallet/razorpay-return?cancelled=1&razorpay_order_id=${checkout.order_id}`,
    });
    const wallet = (await browser.get('/api/v1/client/wallet/')).json().wallet;
    assert.equal(wallet.online_payments, true);
  });

  test('the panel may send forms to the gateway, and nowhere else', async () => {
    const page = await t.inject({ method: 'GET', url: '/wallet', headers: { accept: 'text/html' } });
    assert.equal(page.statusCode, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, new RegExp(`form-action 'self' ${emu.url.replace(/[.]/g, '\\.')};`));
    assert.match(csp, /connect-src 'self';/);
    assert.match(csp, /script-src 'self';/);
  });

  test('pay: the gateway posts back, the route turns it into the panel page with the signed fields; verify credits', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { checkout } = await start(browser, '500');
    const handBack = await checkoutButton(checkout, 'pay');
    const fields = formFields(await handBack.text());
    assert.deepEqual(Object.keys(fields).sort(), ['razorpay_order_id', 'razorpay_payment_id', 'razorpay_signature']);
    const back = await postBack({ ...fields, extra: '<script>' });
    assert.equal(back.statusCode, 303, back.body);
    assert.equal(back.headers['cache-control'], 'no-store');
    const location = new URL(String(back.headers.location), 'http://panel');
    assert.equal(location.pathname, '/wallet/razorpay-return');
    assert.deepEqual(Object.fromEntries(location.searchParams), fields, 'only the known fields pass');
    // Nothing was credited by the hand-back itself: the panel's verify does it.
    assert.equal(await balanceOf(account.id), '0');
    const res = await verify(browser, fields as Parameters<typeof verify>[1]);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().deposit.status, 'approved');
    assert.equal(await balanceOf(account.id), '50000');
  });

  test('fail: the error words and the order reach the panel page; nothing is credited', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { checkout } = await start(browser, '500');
    const handBack = await checkoutButton(checkout, 'fail');
    const back = await postBack(formFields(await handBack.text()));
    assert.equal(back.statusCode, 303);
    const query = new URL(String(back.headers.location), 'http://panel').searchParams;
    assert.equal(query.get('error_code'), 'BAD_REQUEST_ERROR');
    assert.ok(query.get('error_description'));
    assert.equal(query.get('razorpay_order_id'), checkout.order_id);
    assert.equal(query.get('razorpay_signature'), null);
    assert.equal(await balanceOf(account.id), '0');
  });

  test('cancel: the gateway sends the customer to cancel_url; nothing is created', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const { checkout } = await start(browser, '500');
    const cancel = await checkoutButton(checkout, 'cancel');
    assert.equal(cancel.status, 303);
    assert.equal(cancel.headers.get('location'), checkout.fields.cancel_url);
    assert.equal(emu.state.orders.get(checkout.order_id)?.attempts, 0);
  });

  test('junk posted back is dropped, never echoed; an empty post goes to the bare page', async () => {
    const junk = await postBack({
      razorpay_order_id: 'order_1"><script>',
      razorpay_signature: 'x'.repeat(500),
      'error[code]': 'E',
      'error[description]': `a\u0000b${'y'.repeat(1000)}`,
      'error[metadata]': '{not json',
    });
    assert.equal(junk.statusCode, 303);
    const query = new URL(String(junk.headers.location), 'http://panel').searchParams;
    assert.equal(query.get('razorpay_order_id'), null);
    assert.equal(query.get('razorpay_signature'), null);
    assert.equal(query.get('error_code'), 'E');
    assert.equal(query.get('error_description')?.length, 300);
    assert.equal(query.get('error_description')?.includes(String.fromCharCode(0)), false);
    const empty = await t.inject({ method: 'POST', url: '/wallet/razorpay-return' });
    assert.equal(empty.statusCode, 303);
    assert.equal(empty.headers.location, '/wallet/razorpay-return');
  });
});

describe('refusals', () => {
  test('a forged checkout signature is 400 and credits nothing', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '50');
    const paid = emu.pay(checkout.order_id);
    const forged = { ...paid, razorpay_signature: 'a'.repeat(64) };
    const res = await verify(browser, forged);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().code, 'bad_signature');
    const missing = await verify(browser, { ...paid, razorpay_signature: '' });
    assert.equal(missing.statusCode, 422);
    assert.equal((await depositCredits(deposit.id)).length, 0);
    assert.equal(await balanceOf(account.id), '0');
  });

  test('a webhook with a wrong or missing signature is 400 and credits nothing', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '60');
    emu.pay(checkout.order_id);
    const [captured] = await eventsOf(checkout.order_id);
    assert.ok(captured);
    const wrong = await deliver({ body: captured.body, signature: 'f'.repeat(64) });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error, 'bad_signature');
    const tampered = await deliver({
      body: captured.body.replace('"amount":6000', '"amount":9000'),
      signature: captured.signature,
    });
    assert.equal(tampered.statusCode, 400);
    const none = await t.inject({
      method: 'POST',
      url: WEBHOOK,
      headers: { 'content-type': 'application/json' },
      payload: captured.body,
    });
    assert.equal(none.statusCode, 400);
    assert.equal((await depositCredits(deposit.id)).length, 0);
    assert.equal(await balanceOf(account.id), '0');
  });

  test('another account cannot verify my order', async () => {
    const mine = await signedInBrowser(t, freshIp());
    const other = await signedInBrowser(t, freshIp());
    const { checkout } = await start(mine.browser, '40');
    const paid = emu.pay(checkout.order_id);
    const res = await verify(other.browser, paid);
    assert.equal(res.statusCode, 404);
  });

  test('a failed payment credits nothing and rejects the deposit with the reason', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '80');
    emu.fail(checkout.order_id, { description: 'Your bank declined the payment', reason: 'payment_failed' });
    const events = await eventsOf(checkout.order_id);
    assert.deepEqual(
      events.map((e) => e.event),
      ['payment.failed'],
    );
    for (const e of [...events, ...events]) assert.equal((await deliver(e)).statusCode, 200);
    const row = await t.deps.database.db
      .selectFrom('deposits')
      .selectAll()
      .where('id', '=', deposit.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'rejected');
    assert.match(row.reason ?? '', /declined/);
    assert.equal((await depositCredits(deposit.id)).length, 0);
    assert.equal(await balanceOf(account.id), '0');
  });

  test('an abandoned checkout leaves the deposit pending', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const { deposit, checkout } = await start(browser, '90');
    emu.cancel(checkout.order_id);
    assert.equal((await eventsOf(checkout.order_id)).length, 0);
    const res = await browser.get(`${DEPOSIT}?id=${deposit.id}`);
    assert.equal(res.json().deposit.status, 'pending');
    assert.equal((await depositCredits(deposit.id)).length, 0);
  });

  test('signed events about other orders or of other kinds are acknowledged and ignored', async () => {
    const body = JSON.stringify({ entity: 'event', event: 'refund.processed', payload: {} });
    const { webhookSignature } = await import('../../emulators/src/razorpay/index.ts');
    const res = await deliver({ body, signature: webhookSignature(body, emu.webhookSecret) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().handled, 'ignored');
  });
});

describe('without RAZORPAY_* (and not in demo mode)', () => {
  test('method razorpay is 422 not_supported "online payments are not configured", the webhook 404', async () => {
    const bare = await createTestApp();
    try {
      const { browser } = await signedInBrowser(bare, freshIp());
      const res = await browser.post(DEPOSIT, { method: 'razorpay', amount: '10' }, { csrf: true });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().code, 'not_supported');
      assert.match(res.json().message, /online payments are not configured/i);
      const hook = await bare.inject({
        method: 'POST',
        url: WEBHOOK,
        payload: '{}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(hook.statusCode, 404);
      assert.equal((await browser.get('/api/v1/client/wallet/')).json().wallet.online_payments, false);
      const page = await bare.inject({ method: 'GET', url: '/wallet', headers: { accept: 'text/html' } });
      assert.match(String(page.headers['content-security-policy']), /form-action 'self';/);
    } finally {
      await bare.close();
    }
  });
});

describe('RAZORPAY_* configuration', () => {
  test('all three or none; the secrets never appear in the problem', () => {
    const base = { DATA_DIR: '/tmp/hp-config-test', DEMO: '0' };
    assert.equal(loadConfig(base).razorpay, null);
    assert.throws(
      () => loadConfig({ ...base, RAZORPAY_KEY_ID: 'rzp_test_abcdef123', RAZORPAY_KEY_SECRET: 'sekrit-value' }),
      (error: Error) =>
        error instanceof ConfigError && /set together/.test(error.message) && !/sekrit/.test(error.message),
    );
    const full = loadConfig({
      ...base,
      RAZORPAY_KEY_ID: 'rzp_live_abcdef123',
      RAZORPAY_KEY_SECRET: 'k',
      RAZORPAY_WEBHOOK_SECRET: 'w',
    });
    assert.equal(full.razorpay?.apiUrl, 'https://api.razorpay.com');
  });
});
