// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Razorpay emulator as a driver written against Razorpay's docs sees it: Basic auth and its
// 401 envelope, orders (create, validation, fetch, the order's payments), the checkout page and
// its signed callback, payments, refunds, manual capture, webhooks signed with the webhook secret
// and retried, and the fault knobs (API 5xx and slow calls, lost answers, duplicate, reordered,
// delayed and dropped webhooks).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, get, type Server } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';

/** A parsed JSON answer (JSON.parse's own type); tests check it field by field. */
type Json = ReturnType<typeof JSON.parse>;

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A merchant's webhook endpoint and callback: records what arrives; can refuse the next N. */
let received: Received[] = [];
let callbacks: { method: string; url: string; body: string }[] = [];
let refuseNext = 0;
let receiver: Server;
let receiverUrl = '';
let emu: RazorpayEmulator;

before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url?.startsWith('/callback')) {
        callbacks.push({ method: req.method ?? '', url: req.url, body });
        res.writeHead(200).end('ok');
        return;
      }
      received.push({ headers: req.headers, body });
      if (refuseNext > 0) {
        refuseNext--;
        res.writeHead(500).end();
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  emu = await startRazorpayEmulator({
    webhookUrl: `${receiverUrl}/webhook`,
    webhookSecret: 'whsec-test',
    webhookRetryDelayMs: 10,
  });
});
after(async () => {
  await emu.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});
beforeEach(async () => {
  await emu.webhooksIdle();
  emu.reset({ data: true });
  received = [];
  callbacks = [];
  refuseNext = 0;
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function call(
  method: string,
  path: string,
  options: { body?: unknown; form?: string; auth?: string | null } = {},
): Promise<{ status: number; json: Json }> {
  const auth = options.auth === undefined ? basic(emu.keyId, emu.keySecret) : options.auth;
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

async function newOrder(amount = 50_000): Promise<Json> {
  const r = await call('POST', '/v1/orders', {
    body: { amount, currency: 'INR', receipt: 'dep_1', notes: { user: 'u1' } },
  });
  assert.equal(r.status, 200);
  return r.json;
}

/** A GET on a new connection (no keep-alive pool), answering the status. */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

const hmac = (data: string, secret: string) => createHmac('sha256', secret).update(data).digest('hex');

/** The events the receiver got, in arrival order, each checked against its signature. */
function events(): { id: string; event: string; body: Json }[] {
  return received.map((r) => {
    assert.equal(r.headers['x-razorpay-signature'], hmac(r.body, 'whsec-test'), 'the signature verifies');
    return { id: String(r.headers['x-razorpay-event-id']), event: JSON.parse(r.body).event, body: JSON.parse(r.body) };
  });
}

describe('auth', () => {
  test('no key, a wrong secret and an unknown key are refused with 401 and the error envelope', async () => {
    for (const auth of [null, basic(emu.keyId, 'wrong'), basic('rzp_test_other', emu.keySecret), 'Bearer x']) {
      const r = await call('POST', '/v1/orders', { body: { amount: 100, currency: 'INR' }, auth });
      assert.equal(r.status, 401);
      assert.equal(r.json.error.code, 'BAD_REQUEST_ERROR');
      assert.equal(typeof r.json.error.description, 'string');
      for (const key of ['source', 'step', 'reason']) assert.equal(typeof r.json.error[key], 'string');
      assert.deepEqual(r.json.error.metadata, {});
    }
    assert.equal(emu.state.orders.size, 0);
  });
});

describe('orders', () => {
  test('create and fetch: Razorpay order object, id shape, paise, status created', async () => {
    const order = await newOrder(12_345);
    assert.match(order.id, /^order_[A-Za-z0-9]{14}$/);
    assert.equal(order.entity, 'order');
    assert.equal(order.amount, 12_345);
    assert.equal(order.amount_paid, 0);
    assert.equal(order.amount_due, 12_345);
    assert.equal(order.currency, 'INR');
    assert.equal(order.receipt, 'dep_1');
    assert.equal(order.status, 'created');
    assert.equal(order.attempts, 0);
    assert.deepEqual(order.notes, { user: 'u1' });
    assert.ok(Number.isInteger(order.created_at) && order.created_at > 1_600_000_000 && order.created_at < 1e10);
    const got = await call('GET', `/v1/orders/${order.id}`);
    assert.deepEqual(got.json, order);
    const payments = await call('GET', `/v1/orders/${order.id}/payments`);
    assert.deepEqual(payments.json, { entity: 'collection', count: 0, items: [] });
  });

  test('a form-encoded body (the docs curl examples) works too; empty notes answer []', async () => {
    const r = await call('POST', '/v1/orders', { form: 'amount=100&currency=INR&notes[a]=b' });
    assert.equal(r.status, 200);
    assert.equal(r.json.amount, 100);
    assert.deepEqual(r.json.notes, { a: 'b' });
    const bare = await call('POST', '/v1/orders', { body: { amount: 100, currency: 'INR' } });
    assert.deepEqual(bare.json.notes, []);
    assert.equal(bare.json.receipt, null);
  });

  test('bad input is a 400 BAD_REQUEST_ERROR naming the field; nothing is created', async () => {
    const cases: [unknown, string | undefined][] = [
      [{ amount: 99, currency: 'INR' }, 'amount'],
      [{ amount: 100.5, currency: 'INR' }, 'amount'],
      [{ currency: 'INR' }, 'amount'],
      [{ amount: 100 }, 'currency'],
      [{ amount: 100, currency: 'USD' }, 'currency'],
      [{ amount: 100, currency: 'INR', receipt: 'x'.repeat(41) }, 'receipt'],
      [
        { amount: 100, currency: 'INR', notes: Object.fromEntries([...Array(16).keys()].map((i) => [`k${i}`, 'v'])) },
        'notes',
      ],
      [{ amount: 100, currency: 'INR', colour: 'red' }, undefined],
    ];
    for (const [body, field] of cases) {
      const r = await call('POST', '/v1/orders', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, 'BAD_REQUEST_ERROR');
      assert.equal(r.json.error.reason, 'input_validation_failed');
      assert.equal(r.json.error.field, field);
    }
    assert.equal((await call('POST', '/v1/orders', { form: 'amount=abc&currency=INR' })).status, 400);
    assert.equal(emu.state.orders.size, 0);
  });

  test('unknown and malformed ids: 400 "does not exist" / "not a valid id"', async () => {
    const missing = await call('GET', '/v1/orders/order_AAAAAAAAAAAAAA');
    assert.equal(missing.status, 400);
    assert.equal(missing.json.error.description, 'The id provided does not exist');
    const bad = await call('GET', '/v1/payments/nonsense');
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.description, /not a valid id/);
  });
});

describe('checkout and payments', () => {
  test('pay: the checkout signature verifies with the key secret; order paid; payment captured', async () => {
    const order = await newOrder();
    const done = emu.pay(order.id, { method: 'card' });
    assert.equal(done.razorpay_order_id, order.id);
    assert.match(done.razorpay_payment_id, /^pay_[A-Za-z0-9]{14}$/);
    assert.equal(done.razorpay_signature, hmac(`${order.id}|${done.razorpay_payment_id}`, emu.keySecret));
    const payment = await call('GET', `/v1/payments/${done.razorpay_payment_id}`);
    assert.equal(payment.json.entity, 'payment');
    assert.equal(payment.json.status, 'captured');
    assert.equal(payment.json.captured, true);
    assert.equal(payment.json.method, 'card');
    assert.equal(payment.json.order_id, order.id);
    assert.equal(payment.json.amount, 50_000);
    assert.equal(payment.json.amount_refunded, 0);
    assert.equal(payment.json.refund_status, null);
    assert.equal(payment.json.error_code, null);
    const after = await call('GET', `/v1/orders/${order.id}`);
    assert.equal(after.json.status, 'paid');
    assert.equal(after.json.amount_paid, 50_000);
    assert.equal(after.json.amount_due, 0);
    assert.equal(after.json.attempts, 1);
    const list = await call('GET', `/v1/orders/${order.id}/payments`);
    assert.equal(list.json.count, 1);
    assert.equal(list.json.items[0].id, done.razorpay_payment_id);
    assert.throws(() => emu.pay(order.id), /already been paid/);
  });

  test('the checkout page: HTML with Pay, Fail, Cancel and no external assets; Pay posts the signed fields to the callback', async () => {
    const order = await newOrder();
    const callback = `${receiverUrl}/callback?d=1`;
    const page = await fetch(emu.checkoutUrl(order.id, callback));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    for (const label of ['>Pay<', '>Fail<', '>Cancel<', order.id, '₹500.00']) assert.ok(html.includes(label), label);
    assert.doesNotMatch(html, /(src|href)="https?:/);
    const form = new URLSearchParams({ callback, method: 'upi', action: 'pay' });
    const answer = await fetch(`${emu.url}/checkout/${order.id}`, { method: 'POST', body: form });
    const handBack = await answer.text();
    assert.ok(handBack.includes(`action="${callback.replace('&', '&#38;')}"`));
    const fields = Object.fromEntries(
      [...handBack.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
        m[1]!,
        m[2]!.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))),
      ]),
    );
    assert.equal(fields.razorpay_order_id, order.id);
    assert.equal(fields.razorpay_signature, hmac(`${order.id}|${fields.razorpay_payment_id}`, emu.keySecret));
    assert.equal(emu.state.payments.get(fields.razorpay_payment_id!)?.status, 'captured');
    const paid = await fetch(emu.checkoutUrl(order.id));
    assert.equal(paid.status, 409);
    assert.equal((await fetch(emu.checkoutUrl('order_AAAAAAAAAAAAAA'))).status, 404);
    assert.equal((await fetch(emu.checkoutUrl(order.id, 'javascript:alert(1)'))).status, 400);
  });

  test('callbackMethod get: a 303 to the callback with the fields in the query; Cancel creates nothing', async () => {
    const get = await startRazorpayEmulator({ callbackMethod: 'get' });
    try {
      const r = await fetch(`${get.url}/v1/orders`, {
        method: 'POST',
        headers: { authorization: basic(get.keyId, get.keySecret), 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 1000, currency: 'INR' }),
      });
      const order = (await r.json()) as { id: string };
      const cancel = await fetch(`${get.url}/checkout/${order.id}`, {
        method: 'POST',
        body: new URLSearchParams({ callback: `${receiverUrl}/callback`, action: 'cancel' }),
        redirect: 'manual',
      });
      assert.equal(cancel.status, 303);
      const back = new URL(cancel.headers.get('location') ?? '');
      assert.equal(back.searchParams.get('error[reason]'), 'payment_cancelled');
      assert.equal(get.state.payments.size, 0);
      const pay = await fetch(`${get.url}/checkout/${order.id}`, {
        method: 'POST',
        body: new URLSearchParams({ callback: `${receiverUrl}/callback`, action: 'pay' }),
        redirect: 'manual',
      });
      const fields = new URL(pay.headers.get('location') ?? '').searchParams;
      assert.equal(
        fields.get('razorpay_signature'),
        hmac(`${order.id}|${fields.get('razorpay_payment_id')}`, get.keySecret),
      );
    } finally {
      await get.stop();
    }
  });

  test('hosted checkout: the form POSTed to /v1/checkout/embedded shows the page; Cancel goes to cancel_url', async () => {
    const order = await newOrder();
    const callback = `${receiverUrl}/callback`;
    const cancelUrl = `${receiverUrl}/cancelled?o=${order.id}`;
    const hosted = (fields: Record<string, string>) =>
      fetch(`${emu.url}/v1/checkout/embedded`, { method: 'POST', body: new URLSearchParams(fields) });
    const form = {
      key_id: emu.keyId,
      order_id: order.id,
      amount: '50000',
      name: 'Hostplane',
      'prefill[email]': 'asha@example.in',
      callback_url: callback,
      cancel_url: cancelUrl,
    };
    const page = await hosted(form);
    assert.equal(page.status, 200);
    const html = await page.text();
    for (const label of ['>Pay<', '>Fail<', '>Cancel<', order.id, '₹500.00']) assert.ok(html.includes(label), label);
    assert.ok(html.includes(`name="cancel_url" value="${cancelUrl}"`));
    // Not this account's key, no callback, a script URL, the wrong amount, a GET: refused.
    assert.equal((await hosted({ ...form, key_id: 'rzp_test_someoneelse' })).status, 401);
    assert.equal((await hosted({ ...form, callback_url: '' })).status, 400);
    assert.equal((await hosted({ ...form, cancel_url: 'javascript:alert(1)' })).status, 400);
    assert.equal((await hosted({ ...form, amount: '100' })).status, 400);
    assert.equal((await fetch(`${emu.url}/v1/checkout/embedded`)).status, 405);
    assert.equal((await hosted({ ...form, order_id: 'order_AAAAAAAAAAAAAA' })).status, 404);
    // Cancel: to cancel_url, nothing created.
    const cancel = await fetch(`${emu.url}/checkout/${order.id}`, {
      method: 'POST',
      body: new URLSearchParams({ callback, cancel_url: cancelUrl, action: 'cancel' }),
      redirect: 'manual',
    });
    assert.equal(cancel.status, 303);
    assert.equal(cancel.headers.get('location'), cancelUrl);
    assert.equal(emu.state.orders.get(order.id)?.attempts, 0);
  });

  test('fail: a failed payment with the error fields, order attempted, payment.failed; a retry can pay', async () => {
    const order = await newOrder();
    const { payment, error } = emu.fail(order.id);
    assert.equal(error.metadata.payment_id, payment.id);
    const got = await call('GET', `/v1/payments/${payment.id}`);
    assert.equal(got.json.status, 'failed');
    assert.equal(got.json.captured, false);
    assert.equal(got.json.error_code, 'BAD_REQUEST_ERROR');
    assert.equal(typeof got.json.error_description, 'string');
    const after = await call('GET', `/v1/orders/${order.id}`);
    assert.equal(after.json.status, 'attempted');
    assert.equal(after.json.attempts, 1);
    await emu.webhooksIdle();
    assert.deepEqual(
      events().map((e) => e.event),
      ['payment.failed'],
    );
    emu.pay(order.id);
    assert.equal((await call('GET', `/v1/orders/${order.id}/payments`)).json.count, 2);
    assert.equal((await call('POST', `/v1/payments/${payment.id}/refund`, { body: {} })).status, 400);
  });

  test('manual capture: authorized until POST /capture with the exact amount', async () => {
    const manual = await startRazorpayEmulator({ autoCapture: false });
    try {
      const auth = basic(manual.keyId, manual.keySecret);
      const post = (path: string, body: unknown) =>
        fetch(`${manual.url}${path}`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const order = (await (await post('/v1/orders', { amount: 1000, currency: 'INR' })).json()) as { id: string };
      const { payment } = manual.pay(order.id);
      assert.equal(payment.status, 'authorized');
      assert.equal((await post(`/v1/payments/${payment.id}/capture`, { amount: 999, currency: 'INR' })).status, 400);
      const captured = await post(`/v1/payments/${payment.id}/capture`, { amount: 1000, currency: 'INR' });
      assert.equal(captured.status, 200);
      assert.equal(((await captured.json()) as { status: string }).status, 'captured');
      assert.equal(manual.state.orders.get(order.id)?.status, 'paid');
    } finally {
      await manual.stop();
    }
  });
});

describe('refunds', () => {
  test('partial then full refund: rfnd_ ids, processed, payment refund_status and status; over-refund refused', async () => {
    const order = await newOrder(10_000);
    const { payment } = emu.pay(order.id);
    const part = await call('POST', `/v1/payments/${payment.id}/refund`, { body: { amount: 4000 } });
    assert.equal(part.status, 200);
    assert.match(part.json.id, /^rfnd_[A-Za-z0-9]{14}$/);
    assert.equal(part.json.entity, 'refund');
    assert.equal(part.json.payment_id, payment.id);
    assert.equal(part.json.amount, 4000);
    assert.equal(part.json.status, 'processed');
    let got = await call('GET', `/v1/payments/${payment.id}`);
    assert.equal(got.json.amount_refunded, 4000);
    assert.equal(got.json.refund_status, 'partial');
    assert.equal(got.json.status, 'captured');
    const over = await call('POST', `/v1/payments/${payment.id}/refund`, { body: { amount: 6001 } });
    assert.equal(over.status, 400);
    assert.equal(over.json.error.field, 'amount');
    const rest = await call('POST', `/v1/payments/${payment.id}/refund`, { body: {} });
    assert.equal(rest.json.amount, 6000);
    got = await call('GET', `/v1/payments/${payment.id}`);
    assert.equal(got.json.status, 'refunded');
    assert.equal(got.json.refund_status, 'full');
    assert.equal(got.json.amount_refunded, 10_000);
    assert.equal((await call('POST', `/v1/payments/${payment.id}/refund`, { body: {} })).status, 400);
    assert.equal((await call('GET', `/v1/payments/${payment.id}/refunds`)).json.count, 2);
    assert.equal((await call('GET', `/v1/refunds/${part.json.id}`)).json.amount, 4000);
    await emu.webhooksIdle();
    const refunds = events().filter((e) => e.event === 'refund.processed');
    assert.equal(refunds.length, 2);
    assert.deepEqual(refunds[0]!.body.contains, ['refund', 'payment']);
    assert.equal(refunds[0]!.body.payload.refund.entity.id, part.json.id);
  });
});

describe('webhooks', () => {
  test('a capture sends payment.captured then order.paid, signed, with the event id and the payload format', async () => {
    const order = await newOrder();
    const { payment } = emu.pay(order.id);
    await emu.webhooksIdle();
    const got = events();
    assert.deepEqual(
      got.map((e) => e.event),
      ['payment.captured', 'order.paid'],
    );
    const [captured, paid] = got;
    assert.match(captured!.id, /^evt_[A-Za-z0-9]{14}$/);
    assert.notEqual(captured!.id, paid!.id);
    assert.equal(captured!.body.entity, 'event');
    assert.equal(captured!.body.account_id, emu.accountId);
    assert.deepEqual(captured!.body.contains, ['payment']);
    assert.equal(captured!.body.payload.payment.entity.id, payment.id);
    assert.equal(captured!.body.payload.payment.entity.status, 'captured');
    assert.ok(Number.isInteger(captured!.body.created_at));
    assert.deepEqual(paid!.body.contains, ['payment', 'order']);
    assert.equal(paid!.body.payload.order.entity.status, 'paid');
    assert.equal(received[0]!.headers['content-type'], 'application/json');
    assert.ok(emu.webhooks.every((d) => d.status === 'delivered' && d.attempts === 1));
  });

  test('a refused delivery is retried with the same event id and body', async () => {
    refuseNext = 2;
    const order = await newOrder();
    emu.fail(order.id);
    await emu.webhooksIdle();
    assert.equal(received.length, 3);
    assert.equal(new Set(received.map((r) => r.headers['x-razorpay-event-id'])).size, 1);
    assert.equal(new Set(received.map((r) => r.body)).size, 1);
    assert.equal(emu.webhooks[0]!.status, 'delivered');
    assert.equal(emu.webhooks[0]!.attempts, 3);
  });

  test('a receiver that never accepts: given up after the retries', async () => {
    refuseNext = 100;
    emu.fail((await newOrder()).id);
    await emu.webhooksIdle();
    assert.equal(received.length, 4);
    assert.equal(emu.webhooks[0]!.status, 'failed');
  });
});

describe('fault knobs', () => {
  test('errorNext: the next N calls answer 5xx SERVER_ERROR and do nothing', async () => {
    await emu.setFaults({ errorNext: 2, errorStatus: 503 });
    for (let i = 0; i < 2; i++) {
      const r = await call('POST', '/v1/orders', { body: { amount: 100, currency: 'INR' } });
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'SERVER_ERROR');
    }
    assert.equal(emu.state.orders.size, 0);
    assert.equal((await call('POST', '/v1/orders', { body: { amount: 100, currency: 'INR' } })).status, 200);
    assert.equal(emu.calls.get('POST /v1/orders'), 3);
  });

  test('slowNext: the next call waits slowMs, then answers', async () => {
    await emu.setFaults({ slowNext: 1, slowMs: 50 });
    const order = await newOrder();
    assert.equal(emu.faults.slowNext, 0);
    assert.equal((await call('GET', `/v1/orders/${order.id}`)).status, 200);
  });

  test('loseNext: the order is created, the answer is lost', async () => {
    await emu.setFaults({ loseNext: 'POST /v1/orders' });
    await assert.rejects(call('POST', '/v1/orders', { body: { amount: 100, currency: 'INR' } }));
    assert.equal(emu.state.orders.size, 1);
  });

  test('unknown knobs and bad values are refused, in-process and over HTTP', async () => {
    await assert.rejects(emu.setFaults({ nonsense: 1 } as never), /unknown fault knob/);
    await assert.rejects(emu.setFaults({ errorStatus: 404 }), /5xx/);
    const r = await fetch(`${emu.url}/__emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ dropWebhooks: -1 }),
    });
    assert.equal(r.status, 400);
    const ok = await fetch(`${emu.url}/__emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ dropWebhooks: 1 }),
    });
    assert.equal(ok.status, 200);
    assert.equal(emu.faults.dropWebhooks, 1);
  });

  test('duplicateWebhooks: the same event (id, body, signature) arrives twice', async () => {
    await emu.setFaults({ duplicateWebhooks: 1 });
    emu.pay((await newOrder()).id);
    await emu.webhooksIdle();
    const got = events();
    assert.deepEqual(
      got.map((e) => e.event),
      ['payment.captured', 'payment.captured', 'order.paid'],
    );
    assert.equal(got[0]!.id, got[1]!.id);
    assert.equal(received[0]!.body, received[1]!.body);
  });

  test('reorderWebhooks: order.paid arrives before payment.captured', async () => {
    await emu.setFaults({ reorderWebhooks: 1 });
    emu.pay((await newOrder()).id);
    await emu.webhooksIdle();
    assert.deepEqual(
      events().map((e) => e.event),
      ['order.paid', 'payment.captured'],
    );
    emu.pay((await newOrder()).id);
    await emu.webhooksIdle();
    assert.deepEqual(
      events()
        .slice(2)
        .map((e) => e.event),
      ['payment.captured', 'order.paid'],
    );
  });

  test('dropWebhooks: the event is never sent; webhookDelayMs: sent later, but sent', async () => {
    await emu.setFaults({ dropWebhooks: 1, webhookDelayMs: 30 });
    emu.pay((await newOrder()).id);
    await emu.webhooksIdle();
    assert.deepEqual(
      events().map((e) => e.event),
      ['order.paid'],
    );
    assert.equal(emu.webhooks.find((d) => d.event === 'payment.captured')?.status, 'dropped');
  });

  test('down: API connections are reset; the control paths and checkout still answer', async () => {
    const order = await newOrder();
    await emu.setFaults({ down: true });
    await assert.rejects(call('GET', `/v1/orders/${order.id}`));
    // A connection of its own: the knob also cut the sockets fetch keeps alive.
    assert.equal(await freshGet(emu.checkoutUrl(order.id)), 200);
    assert.equal(await freshGet(`${emu.url}/__emulator/state`), 200);
    emu.reset();
    assert.equal((await call('GET', `/v1/orders/${order.id}`)).status, 200);
  });
});
