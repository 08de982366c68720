// Signed outgoing webhooks (issue 37, CONTRACT §13), the endpoint API and the signature: the
// Standard Webhooks test vector and its reference library's verify; adding, listing, changing,
// rotating and deleting endpoints on the session surface (CSRF, ownership, at most 10, bad URLs
// and events 422); the SSRF guard when saving a URL and when delivering (private, loopback,
// link-local, metadata and unique-local addresses, a name that resolves to one, a redirect to
// one); the low-balance threshold; deposits' events. Deliveries here are sent by passes the test
// runs (`dispatcher.runDue`), with an injected clock.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { post } from '../src/core/wallet/ledger.ts';
import { SECRET_PREFIX, sign } from '../src/core/webhooks/signature.ts';
import type { Resolver } from '../src/core/webhooks/ssrf.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { receivedPng } from './support/uploads.ts';
import { addEndpoint, deliveriesOf, hooksPost, type Receiver, startReceiver, WEBHOOKS } from './support/webhooks.ts';

/** A hosts file in code: names the tests resolve (anything else does not resolve). */
const HOSTS: Record<string, string> = {
  'internal.example.test': '10.0.0.7',
  'metadata.example.test': '169.254.169.254',
  'v6local.example.test': 'fd00:ec2::254',
  'loopback.example.test': '127.0.0.1',
  'public.example.test': '93.184.216.34',
  localhost: '127.0.0.1',
};
const resolver: Resolver = async (hostname) => {
  const address = HOSTS[hostname];
  if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return [{ address, family: address.includes(':') ? 6 : 4 }];
};

const ALL = [
  'order.created',
  'order.paid',
  'invoice.issued',
  'service.active',
  'service.suspended',
  'service.unsuspended',
  'service.terminated',
  'job.failed',
  'deposit.approved',
  'deposit.rejected',
  'wallet.low_balance',
];

let demo: TestApp;
let prod: TestApp;
let receiver: Receiver;
const clock = new ManualClock();

before(async () => {
  // Demo mode: http:// to this machine is allowed (the local receiver); production: https:// only.
  demo = await createTestApp({ env: { DEMO: '1' }, overrides: { clock: clock.now, webhooks: { resolver } } });
  prod = await createTestApp({ overrides: { webhooks: { resolver } } });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await demo.close();
  await prod.close();
});

const runDue = (t: TestApp) => t.deps.webhooks.dispatcher.runDue();

describe('signatures', () => {
  test('the Standard Webhooks test vector signs to the published signature', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const body = '{"test": 2432232314}';
    assert.equal(sign(secret, id, 1614265330, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // The reference library agrees, for the vector and for a secret of ours.
    assert.equal(new Webhook(secret).sign(id, new Date(1614265330 * 1000), body), sign(secret, id, 1614265330, body));
  });

  test('a delivery verifies with the reference library, and a tampered one does not', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    const { id, secret } = await addEndpoint(browser, { url: receiver.url, events: ['order.paid'] });
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, '32 random bytes, base64');
    assert.equal(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64').length, 32);
    const before = receiver.received.length;
    assert.equal((await hooksPost(browser, { action: 'test', id })).statusCode, 202);
    assert.equal(await runDue(demo), 1);
    const got = receiver.received.slice(before);
    assert.equal(got.length, 1);
    const [request] = got;
    assert.ok(request);
    const headers = request.headers as Record<string, string>;
    assert.equal(headers['user-agent'], 'Hostplane-Webhooks/1');
    assert.equal(headers['content-type'], 'application/json');
    // The manual clock runs on real time here (no offset yet): the timestamp is now.
    const payload = new Webhook(secret).verify(request.body, headers) as Record<string, unknown>;
    assert.equal(payload.type, 'webhook.test');
    assert.equal(payload.id, headers['webhook-id']);
    assert.match(String(payload.id), /^msg_[0-9a-z]{16}$/);
    assert.deepEqual(Object.keys(payload).sort(), ['created_at', 'data', 'id', 'type']);
    assert.throws(() => new Webhook(secret).verify(request.body.replace('test', 'tset'), headers));
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request.body, headers));
    // The log shows the attempt, its answer and the request's headers (which hold no secret).
    const [logged] = await deliveriesOf(browser, id);
    assert.equal(logged?.status, 'succeeded');
    assert.equal(logged?.response_status, 204);
    assert.equal(logged?.attempt, 1);
    assert.equal(logged?.event_id, payload.id);
    assert.equal(logged?.request_headers?.['webhook-id'], payload.id);
    assert.ok(!JSON.stringify(logged).includes(secret.slice(SECRET_PREFIX.length)));
  });

  test('after a rotation both secrets sign for 24 hours, then only the new one', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    const { id, secret: old } = await addEndpoint(browser, { url: receiver.url, events: ['order.paid'] });
    const rotated = await hooksPost(browser, { action: 'rotate_secret', id });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = rotated.json().secret as string;
    assert.notEqual(fresh, old);
    assert.ok(rotated.json().endpoint.previous_secret_expires_at);
    const sendTest = async () => {
      const from = receiver.received.length;
      assert.equal((await hooksPost(browser, { action: 'test', id })).statusCode, 202);
      await runDue(demo);
      const got = receiver.received[from];
      assert.ok(got);
      return got;
    };
    const both = await sendTest();
    const signatures = String(both.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    for (const secret of [fresh, old]) new Webhook(secret).verify(both.body, both.headers as Record<string, string>);
    // Sent a day later, it is signed with the new secret only. (The session would not last the
    // day: the event is queued first. The library refuses a timestamp that old, so it is checked here.)
    const from = receiver.received.length;
    assert.equal((await hooksPost(browser, { action: 'test', id })).statusCode, 202);
    clock.advance(24 * 3600 + 60);
    try {
      await runDue(demo);
    } finally {
      clock.offsetMs = 0;
    }
    const one = receiver.received[from];
    assert.ok(one);
    const only = String(one.headers['webhook-signature']).split(' ');
    assert.equal(only.length, 1);
    const ts = Number(one.headers['webhook-timestamp']);
    assert.ok(ts * 1000 > Date.now() + 23 * 3600_000, 'the attempt is stamped with its own (injected) time');
    assert.equal(only[0], sign(fresh, String(one.headers['webhook-id']), ts, one.body));
  });
});

describe('endpoints on the session surface', () => {
  test('add, list (never the secret), change, disable, enable and delete', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    const added = await hooksPost(browser, {
      url: 'https://public.example.test/hooks',
      events: ['service.active', 'order.created'],
      description: 'CI pipeline',
    });
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(added.headers['cache-control'], 'no-store');
    const { endpoint, secret } = added.json();
    // Listed in the catalogue's order, whatever order they were sent in.
    assert.deepEqual(endpoint.events, ['order.created', 'service.active']);
    assert.equal(endpoint.enabled, true);
    assert.ok(secret.startsWith(endpoint.secret_hint.replace('…', '')));
    const list = await browser.get(WEBHOOKS);
    assert.equal(list.statusCode, 200);
    assert.ok(!list.body.includes(secret), 'the list never shows the secret');
    assert.deepEqual(list.json().event_types, ALL);
    assert.equal(list.json().max_endpoints, 10);
    assert.equal(list.json().endpoints.length, 1);

    const changed = await hooksPost(browser, { action: 'update', id: endpoint.id, events: ALL, description: 'all' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(changed.json().endpoint.events, ALL);
    assert.equal(changed.json().endpoint.description, 'all');
    const off = await hooksPost(browser, { action: 'disable', id: endpoint.id });
    assert.equal(off.json().endpoint.enabled, false);
    assert.equal(off.json().endpoint.disabled_reason, 'client');
    assert.equal((await hooksPost(browser, { action: 'test', id: endpoint.id })).statusCode, 409);
    const on = await hooksPost(browser, { action: 'enable', id: endpoint.id });
    assert.equal(on.json().endpoint.enabled, true);
    assert.equal(on.json().endpoint.disabled_reason, null);
    const gone = await hooksPost(browser, { action: 'delete', id: endpoint.id });
    assert.equal(gone.statusCode, 200);
    assert.equal((await browser.get(`${WEBHOOKS}?id=${endpoint.id}`)).statusCode, 404);
  });

  test('mutations need the CSRF token', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    const res = await browser.post(WEBHOOKS, { url: receiver.url, events: ['order.paid'] });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'csrf_failed');
  });

  test("another account's endpoint and deliveries are not_owner, like missing ones", async () => {
    const { browser: owner } = await signedInBrowser(demo, freshIp());
    const { browser: other } = await signedInBrowser(demo, freshIp());
    const { id } = await addEndpoint(owner, { url: receiver.url, events: ['order.paid'] });
    await hooksPost(owner, { action: 'test', id });
    await runDue(demo);
    const [delivery] = await deliveriesOf(owner, id);
    assert.ok(delivery);
    const attempts = [
      () => other.get(`${WEBHOOKS}?id=${id}`),
      () => other.get(`${WEBHOOKS}?id=${id}&action=deliveries`),
      () => hooksPost(other, { action: 'update', id, description: 'mine now' }),
      () => hooksPost(other, { action: 'delete', id }),
      () => hooksPost(other, { action: 'rotate_secret', id }),
      () => hooksPost(other, { action: 'test', id }),
      () => hooksPost(other, { action: 'disable', id }),
      () => hooksPost(other, { action: 'enable', id }),
      () => hooksPost(other, { action: 'redeliver', delivery_id: delivery.id }),
      () => hooksPost(owner, { action: 'redeliver', delivery_id: 999_999_999 }),
      () => owner.get(`${WEBHOOKS}?id=999999`),
    ];
    for (const attempt of attempts) {
      const res = await attempt();
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json().code, 'not_owner');
    }
    assert.equal((await other.get(WEBHOOKS)).json().endpoints.length, 0);
    assert.equal((await owner.get(`${WEBHOOKS}?id=${id}`)).json().endpoint.description, '');
  });

  test('at most 10 endpoints per account', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    for (let i = 0; i < 10; i += 1)
      await addEndpoint(browser, { url: `https://public.example.test/h${i}`, events: ['order.paid'] });
    const eleventh = await hooksPost(browser, { url: 'https://public.example.test/h10', events: ['order.paid'] });
    assert.equal(eleventh.statusCode, 409, eleventh.body);
    assert.equal(eleventh.json().code, 'limit_reached');
    assert.equal((await browser.get(WEBHOOKS)).json().endpoints.length, 10);
  });

  test('bad URLs, events and descriptions are 422 naming every field', async () => {
    const { browser } = await signedInBrowser(prod, freshIp());
    const cases: [Record<string, unknown>, string[]][] = [
      [{ events: ['order.paid'] }, ['url']],
      [{ url: 'https://public.example.test/' }, ['events']],
      [{ url: 'not a url', events: [] }, ['url', 'events']],
      [{ url: 'ftp://public.example.test/', events: ['order.paid'] }, ['url']],
      [{ url: 'http://public.example.test/', events: ['order.paid'] }, ['url']],
      [{ url: 'https://user:pw@public.example.test/', events: ['order.paid'] }, ['url']],
      [{ url: 'https://public.example.test/', events: ['order.shipped'] }, ['events']],
      [{ url: 'https://public.example.test/', events: ['order.paid'], description: 'a\u0000b' }, ['description']],
      [{ url: 'https://public.example.test/', events: 'order.paid' }, ['events']],
      [{ url: 42, events: ['order.paid'], description: 'x'.repeat(201) }, ['url', 'description']],
    ];
    for (const [body, fields] of cases) {
      const res = await hooksPost(browser, body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      assert.deepEqual(Object.keys(res.json().errors).sort(), [...fields].sort(), JSON.stringify(body));
    }
    const unknownAction = await hooksPost(browser, { action: 'explode', id: 1 });
    assert.equal(unknownAction.statusCode, 422);
    assert.ok(unknownAction.json().errors.action);
    const noId = await hooksPost(browser, { action: 'rotate_secret' });
    assert.equal(noId.statusCode, 422);
    assert.ok(noId.json().errors.id);
  });
});

describe('the SSRF guard', () => {
  test('in production only https:// to public addresses may be saved', async () => {
    const { browser } = await signedInBrowser(prod, freshIp());
    for (const url of [
      'https://10.1.2.3/hooks',
      'https://172.16.0.1/',
      'https://192.168.1.1/',
      'https://127.0.0.1/hooks',
      'https://127.8.9.10:8443/',
      'http://127.0.0.1:4000/hooks',
      'https://localhost/hooks',
      'https://[::1]/hooks',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://224.0.0.1/',
      'https://[::ffff:10.0.0.1]/',
      receiver.url,
    ]) {
      const res = await hooksPost(browser, { url, events: ['order.paid'] });
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      assert.ok(res.json().errors.url, url);
    }
    // A name is saved as it is: its addresses are checked each time a delivery connects.
    assert.equal(
      (await hooksPost(browser, { url: 'https://public.example.test/h', events: ['order.paid'] })).statusCode,
      201,
    );
  });

  test('in demo mode http:// to this machine is allowed, private networks still are not', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    for (const url of ['http://127.0.0.1:4000/hooks', 'http://localhost:4000/', 'https://[::1]:8443/'])
      assert.equal((await hooksPost(browser, { url, events: ['order.paid'] })).statusCode, 201, url);
    for (const url of [
      'http://public.example.test/',
      'https://10.0.0.1/',
      'https://169.254.169.254/',
      'http://[fd00::1]/',
    ]) {
      const res = await hooksPost(browser, { url, events: ['order.paid'] });
      assert.equal(res.statusCode, 422, url);
    }
    // A name is resolved when sending, and the connection goes to the address checked (loopback: demo mode).
    const from = receiver.received.length;
    const { id } = await addEndpoint(browser, {
      url: `http://localhost:${receiver.port}/hooks`,
      events: ['order.paid'],
    });
    await hooksPost(browser, { action: 'test', id });
    assert.equal(await runDue(demo), 1);
    assert.equal((await deliveriesOf(browser, id))[0]?.status, 'succeeded');
    assert.equal(receiver.received.length, from + 1);
  });

  test('a name that resolves to a private, metadata or unique-local address is refused when delivering', async () => {
    const { browser } = await signedInBrowser(prod, freshIp());
    for (const host of ['internal.example.test', 'metadata.example.test', 'v6local.example.test']) {
      const { id } = await addEndpoint(browser, { url: `https://${host}/hooks`, events: ['order.paid'] });
      assert.equal((await hooksPost(browser, { action: 'test', id })).statusCode, 202);
      assert.equal(await runDue(prod), 1);
      const [delivery] = await deliveriesOf(browser, id);
      assert.equal(delivery?.status, 'pending', 'retried later, like any failure');
      assert.equal(delivery?.response_status, null);
      assert.match(String(delivery?.error), new RegExp(`^refused: ${host.replace(/\./g, '\\.')} resolves to`));
    }
  });

  test('a name rebound to loopback never reaches the receiver on it', async () => {
    const { browser } = await signedInBrowser(prod, freshIp());
    const from = receiver.received.length;
    const { id } = await addEndpoint(browser, {
      url: `https://loopback.example.test:${receiver.port}/hooks`,
      events: ['order.paid'],
    });
    await hooksPost(browser, { action: 'test', id });
    assert.equal(await runDue(prod), 1);
    const [delivery] = await deliveriesOf(browser, id);
    assert.match(String(delivery?.error), /^refused: loopback\.example\.test resolves to 127\.0\.0\.1/);
    assert.equal(receiver.received.length, from, 'no connection was made');
  });

  test('a redirect is a failure and is not followed', async () => {
    const { browser } = await signedInBrowser(demo, freshIp());
    const trap = await startReceiver('/redirect');
    trap.answer = () => ({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } });
    try {
      const { id } = await addEndpoint(browser, { url: trap.url, events: ['order.paid'] });
      await hooksPost(browser, { action: 'test', id });
      assert.equal(await runDue(demo), 1);
      const [delivery] = await deliveriesOf(browser, id);
      assert.equal(delivery?.response_status, 302);
      assert.equal(delivery?.status, 'pending');
      assert.match(String(delivery?.error), /redirects are not followed/);
      assert.equal(trap.received.length, 1);
    } finally {
      await trap.close();
    }
  });
});

describe('events from the money paths', () => {
  test('wallet.low_balance once when a debit crosses the threshold, not on every debit below it', async () => {
    const { browser: owner, account } = await signedInBrowser(demo, freshIp());
    const { id } = await addEndpoint(owner, { url: receiver.url, events: ['wallet.low_balance'] });
    const bad = await hooksPost(owner, { action: 'settings', low_balance_threshold: '-5' });
    assert.equal(bad.statusCode, 422);
    const set = await hooksPost(owner, { action: 'settings', low_balance_threshold: '100.00' });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json().settings, { low_balance_threshold: '100.00', currency: 'INR' });
    assert.equal((await owner.get(WEBHOOKS)).json().settings.low_balance_threshold, '100.00');
    const debit = (paise: bigint) =>
      demo.deps.database.db
        .transaction()
        .execute((trx) => post(trx, account.id, { kind: 'adjustment', amountPaise: paise, note: 'test' }));
    await demo.deps.wallet.credit(account.id, '150', 'float');
    await debit(-4000n); // 150 → 110: above
    await debit(-2000n); // 110 → 90: crosses
    await debit(-1000n); // 90 → 80: already below
    await debit(20000n); // 80 → 280
    await debit(-25000n); // 280 → 30: crosses again
    await runDue(demo);
    const logged = (await deliveriesOf(owner, id)).reverse();
    assert.deepEqual(
      logged.map((d) => d.type),
      ['wallet.low_balance', 'wallet.low_balance'],
    );
    const bodies = receiver.received.filter((r) => r.body.includes('wallet.low_balance')).slice(-2);
    assert.deepEqual(
      bodies.map((r) => JSON.parse(r.body).data.wallet),
      [
        { balance: '90.00', threshold: '100.00', currency: 'INR' },
        { balance: '30.00', threshold: '100.00', currency: 'INR' },
      ],
    );
    const off = await hooksPost(owner, { action: 'settings', low_balance_threshold: null });
    assert.equal(off.json().settings.low_balance_threshold, null);
  });

  test('deposit.approved and deposit.rejected carry the deposit, never its proof file', async () => {
    const { browser: owner, account } = await signedInBrowser(demo, freshIp());
    const { id } = await addEndpoint(owner, { url: receiver.url, events: ['deposit.approved', 'deposit.rejected'] });
    const submit = async (ref: string) =>
      demo.deps.deposits.submit(account.id, { amount: '250', txnRef: ref, upload: await receivedPng(demo.dataDir) });
    const a = await submit(`UTR${Date.now()}A`);
    const b = await submit(`UTR${Date.now()}B`);
    await demo.deps.deposits.approve(a.id, 'staff:test');
    await demo.deps.deposits.reject(b.id, 'staff:test', 'no such payment');
    await runDue(demo);
    const logged = (await deliveriesOf(owner, id)).reverse();
    assert.deepEqual(
      logged.map((d) => [d.type, d.status]),
      [
        ['deposit.approved', 'succeeded'],
        ['deposit.rejected', 'succeeded'],
      ],
    );
    const last = receiver.received.filter((r) => r.body.includes('deposit.'));
    const approved = JSON.parse(last.at(-2)?.body ?? '{}');
    assert.equal(approved.data.deposit.public_id, a.public_id);
    assert.equal(approved.data.deposit.amount, '250.00');
    assert.equal(JSON.parse(last.at(-1)?.body ?? '{}').data.deposit.reason, 'no such payment');
    assert.ok(!last.some((r) => /screenshot|txn_ref/.test(r.body)));
  });
});
