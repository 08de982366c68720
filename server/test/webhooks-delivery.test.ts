// Delivering webhooks (issue 37, CONTRACT §13): an order's events reach a local receiver signed and
// in order — the test receiver (verified with the Standard Webhooks reference library) and the
// receiver README.md shows, run as its own process — through the worker, as in production. Then,
// with an injected clock and passes the test runs: the retry schedule, ordering per endpoint while
// an earlier delivery waits for a retry, disabling after 3 days of failures (and the mail), 410
// Gone, at least once after a worker died mid-attempt (an expired lease), redelivery, the log kept
// to 100 deliveries per endpoint, and answers read only so far.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from '../src/core/webhooks/dispatcher.ts';
import { Browser } from './support/browser.ts';
import { freshIp, lastMail, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, onPostgres, type TestApp } from './support/harness.ts';
import { freePort, runNode } from './support/process.ts';
import { ROOT } from './support/template.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';
import {
  addEndpoint,
  type DeliveryView,
  deliveriesOf,
  hooksPost,
  type Receiver,
  startReceiver,
  WEBHOOKS,
} from './support/webhooks.ts';

/** The receiver README.md shows, exactly as written there, in a file of its own. */
function readmeReceiver(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /<!-- webhook-receiver -->\n```js\n([\s\S]*?)```/.exec(readme);
  if (!match?.[1]) throw new Error('README.md has no webhook receiver block');
  return match[1];
}

describe('an order, end to end through the worker', () => {
  let u: UpstreamApp;
  let receiver: Receiver;
  let readme: ChildProcess | null = null;
  const printed: string[] = [];
  let dir: string;
  before(async () => {
    u = await createUpstreamApp({ env: { DEMO: '1' } });
    receiver = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'hp-receiver-'));
  });
  after(async () => {
    readme?.kill();
    await receiver.close();
    await u.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('order.created, order.paid, invoice.issued and service.active arrive signed, in order', async () => {
    const { browser, account } = await signedInBrowser(u.t, freshIp());
    const events = ['order.created', 'order.paid', 'invoice.issued', 'service.active'];
    const mine = await addEndpoint(browser, { url: receiver.url, events, description: 'test receiver' });
    // The README's receiver, on a port of its own, with the secret its endpoint was given.
    const probe = await startReceiver();
    const port = probe.port;
    await probe.close();
    const theirs = await addEndpoint(browser, { url: `http://127.0.0.1:${port}/`, events });
    writeFileSync(join(dir, 'receiver.mjs'), readmeReceiver());
    readme = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
      env: { ...process.env, WEBHOOK_SECRET: theirs.secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    readme.stdout?.on('data', (chunk: Buffer) => printed.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    // It answers once it listens: the test event goes through when it does.
    await waitFor('the README receiver to take a test event', async () => {
      await hooksPost(browser, { action: 'test', id: theirs.id });
      return waitFor('its answer', async () => printed.some((l) => l.startsWith('verified webhook.test')), 2000).catch(
        () => false,
      );
    });

    await u.t.deps.wallet.credit(account.id, '2000', 'float');
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const order = await browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, config: { server_name: 'hooked', region: 'mum1' }, idempotency_key: `hook-${Date.now()}` },
      { csrf: true },
    );
    assert.equal(order.statusCode, 201, order.body);
    const got = await waitFor('four events at the test receiver', async () =>
      receiver.received.length >= 4 ? receiver.received : null,
    );
    assert.deepEqual(
      got.map((r) => JSON.parse(r.body).type),
      events,
    );
    const verifier = new Webhook(mine.secret);
    for (const r of got) {
      const headers = r.headers as Record<string, string>;
      const event = verifier.verify(r.body, headers) as { id: string; data: Record<string, { id?: number }> };
      assert.equal(event.id, headers['webhook-id']);
      assert.equal(headers['user-agent'], 'Hostplane-Webhooks/1');
    }
    const bodies = got.map((r) => JSON.parse(r.body));
    assert.equal(bodies[0].data.order.public_id, order.json().order.public_id);
    assert.equal(bodies[1].data.order.status, 'paid');
    assert.equal(bodies[2].data.invoice.order_id, order.json().order.id);
    assert.equal(bodies[3].data.service.id, order.json().service.id);
    assert.equal(bodies[3].data.service.status, 'active');
    assert.equal(new Set(bodies.map((b) => b.id)).size, 4);
    // The README's receiver verified the same four with its own few lines.
    await waitFor('the README receiver to verify the order', async () =>
      events.every((type) => printed.some((l) => l.startsWith(`verified ${type} `))),
    );
    // The receiver answers before the worker records the answer: wait for the log to settle.
    const log = await waitFor('the delivery log to record four answers', async () => {
      const rows = await deliveriesOf(browser, mine.id);
      return rows.length >= 4 && rows.every((d) => d.status !== 'pending') ? rows : null;
    });
    assert.deepEqual(
      log.map((d) => [d.type, d.status, d.attempt, d.response_status]).reverse(),
      events.map((type) => [type, 'succeeded', 1, 204]),
    );
  });
});

describe('retries, ordering and disabling, with an injected clock', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let receiver: Receiver;
  before(async () => {
    t = await createTestApp({
      env: { DEMO: '1' },
      overrides: {
        clock: clock.now,
        webhooks: { timeoutMs: 1500 },
        limits: { panel_write_account: { points: 100_000 } },
      },
    });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const runDue = () => t.deps.webhooks.dispatcher.runDue();
  /** Move the clock past the retry that follows attempt `n` (delays may be up to 10 % longer). */
  const pastRetry = (n: number) => clock.advance(Math.ceil((RETRY_DELAYS_SECONDS[n - 1] as number) * 1.1) + 1);
  const logOf = (accountId: number, id: number) => t.deps.webhooks.deliveries(accountId, id);

  test('a failing delivery is retried on the schedule, and the next event waits behind it', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    let failures = 3;
    const path = '/ordered';
    const own = await startReceiver(path);
    own.answer = () => (failures-- > 0 ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' });
    try {
      const { id } = await addEndpoint(browser, { url: own.url, events: ['order.paid'] });
      const first = (await hooksPost(browser, { action: 'test', id })).json().delivery as DeliveryView;
      assert.equal(await runDue(), 1);
      const second = (await hooksPost(browser, { action: 'test', id })).json().delivery as DeliveryView;
      // Nothing is due: the first waits for its retry, and the second may not overtake it.
      assert.equal(await runDue(), 0);
      let log = await deliveriesOf(browser, id);
      const waiting = log.find((d) => d.id === first.id);
      assert.equal(waiting?.status, 'pending');
      assert.equal(waiting?.attempt, 1);
      assert.equal(waiting?.response_status, 503);
      assert.equal(waiting?.response_body, 'busy');
      const next = new Date(String(waiting?.next_attempt_at)).getTime() - clock.now().getTime();
      assert.ok(next >= 4000 && next <= 5600, `the first retry is 5 s later (+10 %): ${next} ms`);
      assert.equal(log.find((d) => d.id === second.id)?.attempt, 0);
      for (const n of [1, 2, 3]) {
        pastRetry(n);
        assert.ok((await runDue()) >= 1, `attempt ${n + 1}`);
      }
      log = await deliveriesOf(browser, id);
      assert.deepEqual(
        [log.find((d) => d.id === first.id), log.find((d) => d.id === second.id)].map((d) => [d?.status, d?.attempt]),
        [
          ['succeeded', 4],
          ['succeeded', 1],
        ],
      );
      const ids = own.received.map((r) => String(r.headers['webhook-id']));
      assert.deepEqual(ids, [first.event_id, first.event_id, first.event_id, first.event_id, second.event_id]);
      assert.equal((await t.deps.webhooks.get(account.id, id)).failing_since, null, 'a success clears it');
    } finally {
      clock.offsetMs = 0;
      await own.close();
    }
  });

  test('3 days of failures disable the endpoint and mail its owner; enable turns it on again', async () => {
    const { browser, account, password } = await signedInBrowser(t, freshIp());
    const down = await startReceiver('/down');
    down.answer = () => ({ status: 500 });
    try {
      const { id } = await addEndpoint(browser, { url: down.url, events: ['order.paid'] });
      await hooksPost(browser, { action: 'test', id });
      await hooksPost(browser, { action: 'test', id });
      assert.equal(await runDue(), 1);
      for (let n = 1; n < MAX_ATTEMPTS; n += 1) {
        assert.equal((await t.deps.webhooks.get(account.id, id)).enabled, true, `enabled after ${n} attempts`);
        pastRetry(n);
        assert.equal(await runDue(), 1);
      }
      const endpoint = await t.deps.webhooks.get(account.id, id);
      assert.equal(endpoint.enabled, false);
      assert.equal(endpoint.disabled_reason, 'failing');
      assert.equal(down.received.length, MAX_ATTEMPTS, 'ten attempts of the first event, none of the second');
      const log = await logOf(account.id, id);
      assert.deepEqual(
        log.map((d) => [d.status, d.attempt]),
        [
          ['failed', 0],
          ['failed', MAX_ATTEMPTS],
        ],
      );
      const mail = await lastMail(t, account.email);
      assert.equal(mail.row.template, 'webhook_disabled');
      assert.match(mail.text, new RegExp(down.url.replace(/[./]/g, '\\$&')));
      assert.match(mail.text, /failed for 3 days/);
      // Nothing is sent to a disabled endpoint.
      clock.advance(86_400);
      assert.equal(await runDue(), 0);
      clock.offsetMs = 0;
      // Enabled again (a fresh session: the old one did not last the days the clock moved).
      const again = new Browser(t, freshIp());
      assert.equal((await again.login(account.username, password)).statusCode, 200);
      const on = await hooksPost(again, { action: 'enable', id });
      assert.equal(on.json().endpoint.enabled, true);
      assert.equal(on.json().endpoint.failing_since, null);
      down.answer = () => ({ status: 204 });
      const [failed] = log;
      assert.equal((await hooksPost(again, { action: 'redeliver', delivery_id: Number(failed?.id) })).statusCode, 202);
      assert.equal(await runDue(), 1);
      assert.equal((await deliveriesOf(again, id))[0]?.status, 'succeeded');
    } finally {
      clock.offsetMs = 0;
      await down.close();
    }
  });

  test('410 Gone disables the endpoint at once', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const gone = await startReceiver('/gone');
    gone.answer = () => ({ status: 410 });
    try {
      const { id } = await addEndpoint(browser, { url: gone.url, events: ['order.paid'] });
      await hooksPost(browser, { action: 'test', id });
      assert.equal(await runDue(), 1);
      const endpoint = (await browser.get(`${WEBHOOKS}?id=${id}`)).json().endpoint;
      assert.equal(endpoint.enabled, false);
      assert.equal(endpoint.disabled_reason, 'gone');
      assert.equal((await lastMail(t, account.email)).row.template, 'webhook_disabled');
    } finally {
      await gone.close();
    }
  });

  test('at least once: a delivery left claimed by a worker that died is sent when its lease expires', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const { id } = await addEndpoint(browser, { url: receiver.url, events: ['order.paid'] });
    const queued = (await hooksPost(browser, { action: 'test', id })).json().delivery as DeliveryView;
    // What a worker killed mid-request leaves: the attempt counted, the lease held, no result.
    const now = clock.now();
    await t.deps.database.db
      .updateTable('webhook_deliveries')
      .set({ attempt: 1, claimed_until: new Date(now.getTime() + 60_000), last_attempt_at: now })
      .where('id', '=', String(queued.id))
      .execute();
    const from = receiver.received.length;
    assert.equal(await runDue(), 0, 'leased: another worker may still be sending it');
    clock.advance(61);
    try {
      assert.equal(await runDue(), 1);
    } finally {
      clock.offsetMs = 0;
    }
    assert.equal(receiver.received.length, from + 1);
    assert.equal(receiver.received[from]?.headers['webhook-id'], queued.event_id);
    const [done] = await deliveriesOf(browser, id);
    assert.equal(done?.status, 'succeeded');
    assert.equal(done?.attempt, 2);
  });

  test('redelivery sends the same event again; the log keeps 100 deliveries; answers are read only so far', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const big = await startReceiver('/big');
    big.answer = () => ({ status: 200, body: 'x'.repeat(300 * 1024) });
    try {
      const { id } = await addEndpoint(browser, { url: big.url, events: ['order.paid'] });
      const first = (await hooksPost(browser, { action: 'test', id })).json().delivery as DeliveryView;
      await runDue();
      const [sent] = await deliveriesOf(browser, id);
      assert.equal(sent?.status, 'succeeded');
      assert.equal(sent?.response_body?.length, 1024, 'the first 1 KiB is kept');
      const again = await hooksPost(browser, { action: 'redeliver', delivery_id: first.id });
      assert.equal(again.statusCode, 202, again.body);
      assert.equal(again.json().delivery.event_id, first.event_id);
      assert.notEqual(again.json().delivery.id, first.id);
      await runDue();
      const ids = big.received.map((r) => r.headers['webhook-id']);
      assert.deepEqual(ids, [first.event_id, first.event_id]);
      for (let i = 0; i < 105; i += 1) await hooksPost(browser, { action: 'test', id });
      await runDue();
      const log = await deliveriesOf(browser, id);
      assert.equal(log.length, 100);
      assert.ok(log.every((d) => d.status === 'succeeded'));
      assert.ok(!log.some((d) => d.id === first.id), 'the oldest went');
      // Events nobody's log names any more are gone too.
      const events = await t.deps.database.db
        .selectFrom('webhook_events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('body', 'like', `%"url":"${big.url}"%`)
        .executeTakeFirstOrThrow();
      assert.equal(Number(events.n), 100);
    } finally {
      await big.close();
    }
  });

  test('an endpoint that does not answer times out and is retried', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    // A server that takes the request and never answers.
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const port = (hanging.address() as AddressInfo).port;
    try {
      const { id } = await addEndpoint(browser, { url: `http://127.0.0.1:${port}/`, events: ['order.paid'] });
      await hooksPost(browser, { action: 'test', id });
      assert.equal(await runDue(), 1);
      const [d] = await deliveriesOf(browser, id);
      assert.equal(d?.status, 'pending');
      assert.equal(d?.response_status, null);
      assert.match(String(d?.error), /timed out/);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });
});

describe('a worker killed mid-delivery', {
  skip: !onPostgres && 'needs PostgreSQL (TEST_DATABASE_URL): a second process on the same database',
}, () => {
  test('SIGKILL while the endpoint holds the request: the delivery is sent again once its lease expires', async () => {
    const clock = new ManualClock();
    const t = await createTestApp({ env: { DEMO: '1' }, overrides: { clock: clock.now } });
    const held: { webhookId: string }[] = [];
    let holding = true;
    // The first request is taken and never answered (the worker dies waiting); later ones get 204.
    const server = createServer((req, res) => {
      req.resume();
      held.push({ webhookId: String(req.headers['webhook-id']) });
      if (!holding) res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const dir = mkdtempSync(join(tmpdir(), 'hp-worker-'));
    const worker = runNode('server/src/main.ts', ['--role=worker'], {
      DATABASE_URL: String(t.config.databaseUrl),
      SECRET_KEY: (t.config.secretKey as Buffer).toString('base64'),
      DATA_DIR: dir,
      DEMO: '1',
      LOG_LEVEL: 'info',
      PORT: String(await freePort()),
    });
    try {
      await waitFor('the worker to start', async () => /worker running/.test(worker.output()), 120_000);
      const { browser } = await signedInBrowser(t, freshIp());
      const { id } = await addEndpoint(browser, { url, events: ['order.paid'] });
      const queued = (await hooksPost(browser, { action: 'test', id })).json().delivery as DeliveryView;
      await waitFor('the worker to send it', async () => held.length === 1);
      worker.child.kill('SIGKILL');
      await worker.exited;
      const [left] = await deliveriesOf(browser, id);
      assert.deepEqual([left?.status, left?.attempt, left?.response_status], ['pending', 1, null]);
      holding = false;
      assert.equal(await t.deps.webhooks.dispatcher.runDue(), 0, 'its lease still holds');
      clock.advance(61);
      assert.equal(await t.deps.webhooks.dispatcher.runDue(), 1);
      const [done] = await deliveriesOf(browser, id);
      assert.deepEqual([done?.status, done?.attempt, done?.response_status], ['succeeded', 2, 204]);
      assert.deepEqual(
        held.map((h) => h.webhookId),
        [queued.event_id, queued.event_id],
      );
    } finally {
      worker.child.kill('SIGKILL');
      server.closeAllConnections();
      server.close();
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
