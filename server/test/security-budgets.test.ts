// Security review 3, T3-M5: panel budgets. All customers of a node share one panel key (and the
// panel throttles that key's user), so: every account has its own allowance of panel reads,
// writes and sign-in links a minute (LIMITS panel_*; 429 with Retry-After, and the refused request
// never reaches the panel), and every node has one token bucket in this process in front of its
// driver (upstreams/budgets.ts), which a customer cannot drain below what background work needs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { LIMITS } from '../src/core/ratelimit/rate-limits.ts';
import {
  BACKGROUND_WAIT_MS,
  budgetOf,
  CLIENT_WAIT_MS,
  createNodeBudgets,
  DEFAULT_NODE_BUDGET,
  nodeBudgets,
  onBehalfOfClient,
  TokenBucket,
} from '../src/upstreams/budgets.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type GameClient, gameClient, WAIT } from './support/game.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

/** A clock tests move by hand (milliseconds). */
class Clock {
  at = 1_000_000;
  readonly now = () => this.at;
  /** The waits asked for; nothing waits and the clock stays (the test moves it). */
  readonly waits: number[] = [];
  readonly sleep = async (ms: number) => {
    this.waits.push(ms);
  };
}

describe('the node token bucket (injected clock)', () => {
  test('a burst beyond the bucket waits briefly, then is refused; background work still gets tokens', () => {
    const clock = new Clock();
    // One call a second, ten at once; two of the ten kept for background work.
    const bucket = new TokenBucket({ perMinute: 60, burst: 10 }, clock.now);
    assert.equal(bucket.reserve, 2);
    const given: number[] = [];
    for (let i = 0; i < 8; i++) {
      const got = bucket.take('client', CLIENT_WAIT_MS);
      assert.ok('waitMs' in got, `call ${i + 1} refused`);
      given.push(got.waitMs);
    }
    assert.deepEqual(given, [0, 0, 0, 0, 0, 0, 0, 0], 'the burst above the reserve goes at once');
    // The next customer call waits for the next token (within the bound); the one after is refused.
    const ninth = bucket.take('client', CLIENT_WAIT_MS);
    assert.ok('waitMs' in ninth && ninth.waitMs > 0 && ninth.waitMs <= CLIENT_WAIT_MS, JSON.stringify(ninth));
    const tenth = bucket.take('client', CLIENT_WAIT_MS);
    assert.ok('refusedForMs' in tenth && tenth.refusedForMs > CLIENT_WAIT_MS, JSON.stringify(tenth));
    // Background work (a provisioning job) takes what customers may not, and waits rather than fails.
    const job = bucket.take('background', BACKGROUND_WAIT_MS);
    assert.ok('waitMs' in job, 'a job was refused while customers are');
    const queued = bucket.take('background', BACKGROUND_WAIT_MS);
    assert.ok('waitMs' in queued && queued.waitMs > 0, 'a job past the bucket waits for its token');
    // A quiet minute fills it again.
    clock.at += 60_000;
    assert.ok('waitMs' in bucket.take('client', CLIENT_WAIT_MS));
    assert.equal(Math.floor(bucket.level()), 9);
  });

  test("two accounts share a node's bucket: what one spends, the other cannot; an admitted action finishes", async () => {
    const clock = new Clock();
    const budgets = createNodeBudgets({ now: clock.now, sleep: clock.sleep });
    budgets.configure('ptero-x', { perMinute: 60, burst: 10 });
    budgets.configure('ptero-y', { perMinute: 60, burst: 10 });
    const refusal = (seconds: number) => Object.assign(new Error('busy'), { retryAfter: seconds });
    // Account A: a burst of 20 actions of one node call each, all at once.
    const burst = await Promise.allSettled(
      Array.from({ length: 20 }, () => onBehalfOfClient(() => budgets.take('ptero-x'), refusal)),
    );
    const passed = burst.filter((r) => r.status === 'fulfilled').length;
    assert.equal(passed, 9, 'eight at once above the reserve, and one more after a short wait');
    assert.equal(clock.waits.length, 1);
    for (const r of burst.filter((r) => r.status === 'rejected'))
      assert.ok(((r.reason as { retryAfter?: number }).retryAfter ?? 0) >= 1, String(r.reason));
    // Account B asks the same node at once: refused too, with a Retry-After; another node is unaffected.
    await assert.rejects(
      onBehalfOfClient(() => budgets.take('ptero-x'), refusal),
      (error: { retryAfter?: number }) => (error.retryAfter ?? 0) >= 1,
    );
    await onBehalfOfClient(() => budgets.take('ptero-y'), refusal);
    // Whatever the action makes of the driver's error (a product maps it to its own), the
    // customer gets the refusal: here the action turns it into a generic failure.
    let seen: unknown = null;
    await assert.rejects(
      onBehalfOfClient(async () => {
        await budgets.take('ptero-x').catch((error: unknown) => {
          seen = error;
          throw new Error('the panel failed');
        });
      }, refusal),
      (error: { retryAfter?: number }) => (error.retryAfter ?? 0) >= 1,
    );
    assert.ok(seen instanceof UpstreamError && seen.kind === 'rate_limited' && seen.reason === 'node_budget');
    // An action that was let in takes its later calls like background work: never cut half-way.
    clock.at += 60_000;
    await onBehalfOfClient(async () => {
      for (let i = 0; i < 15; i++) await budgets.take('ptero-x');
    }, refusal);
    // Background work (no customer scope) waits for its token instead of failing.
    await budgets.take('ptero-x');
    // A node without a budget (no driver built for it) passes.
    await budgets.take('elsewhere');
  });

  test('the background wait is bounded: past it the call fails with a retryable rate_limited', async () => {
    const clock = new Clock();
    const budgets = createNodeBudgets({ now: clock.now, sleep: clock.sleep });
    budgets.configure('slow', { perMinute: 1, burst: 1 });
    await budgets.take('slow');
    await budgets.take('slow'); // a minute's wait, asked of the fake sleep
    const bucket = budgets.bucket('slow');
    assert.ok(bucket);
    // Promise tokens ahead until the next one is more than the bound away.
    while (true) {
      const got = bucket.take('background', BACKGROUND_WAIT_MS);
      if ('refusedForMs' in got) break;
    }
    await assert.rejects(
      budgets.take('slow'),
      (error: unknown) =>
        error instanceof UpstreamError &&
        error.kind === 'rate_limited' &&
        error.retryable &&
        error.reason === 'node_budget',
    );
  });

  test("a node's settings set its budget (rate_per_minute, rate_burst); bad values keep the default", () => {
    assert.deepEqual(budgetOf({}), DEFAULT_NODE_BUDGET);
    assert.deepEqual(budgetOf({ rate_per_minute: 120, rate_burst: 12 }), { perMinute: 120, burst: 12 });
    assert.deepEqual(budgetOf({ rate_per_minute: '300' }), { perMinute: 300, burst: 30 });
    assert.deepEqual(budgetOf({ rate_per_minute: -1, rate_burst: 'x' }), DEFAULT_NODE_BUDGET);
    assert.deepEqual(budgetOf(null, { perMinute: 6, burst: 2 }), { perMinute: 6, burst: 2 });
  });
});

describe('per-account panel limits and the node budget, over HTTP', () => {
  let u: UpstreamApp;
  let a: GameClient;
  let b: GameClient;
  let web: { browser: Browser; serviceId: number };
  const received = () => [...(u.ptero?.received.values() ?? [])].reduce((sum, n) => sum + n, 0);
  const whmCalls = () => [...(u.cpanel?.calls.values() ?? [])].reduce((sum, n) => sum + n, 0);

  before(async () => {
    u = await createUpstreamApp({
      game: true,
      web: true,
      overrides: {
        // The real per-account limits (the harness raises them for other tests); a roomy node
        // budget, so only the per-account limits are at work until the node test lowers it.
        limits: {},
        driverTiming: {
          pollIntervalMs: 10,
          requestTimeoutMs: 1500,
          taskTimeoutMs: 5000,
          budget: { perMinute: 600_000, burst: 10_000 },
        },
      },
    });
    a = await gameClient(u, { order: true });
    b = await gameClient(u, { order: true });
    const signed = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(signed.account.id, '5000', 'test float');
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'web-starter')
      .executeTakeFirstOrThrow();
    const ordered = await signed.browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, config: { region: 'mum1' }, domain: 'budgets.example.in', idempotency_key: 'budgets-web' },
      { csrf: true },
    );
    assert.equal(ordered.statusCode, 201, ordered.body);
    const serviceId = ordered.json().service.id as number;
    await waitFor(
      'the web service',
      async () => {
        const row = await u.t.deps.database.db
          .selectFrom('services')
          .select('status')
          .where('id', '=', serviceId)
          .executeTakeFirstOrThrow();
        return row.status === 'active';
      },
      WAIT,
    );
    web = { browser: signed.browser, serviceId };
  });
  after(() => u.close());

  function limited(res: LightMyRequestResponse, limit?: number): void {
    assert.equal(res.statusCode, 429, res.body);
    const body = res.json();
    assert.equal(body.success, false);
    assert.equal(body.code, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
    if (limit !== undefined) {
      assert.equal(res.headers['ratelimit-limit'], String(limit));
      assert.equal(res.headers['ratelimit-remaining'], '0');
    }
  }

  test('reads: past the allowance 429 with Retry-After, and the panel is not asked any more', async () => {
    const reads = LIMITS.panel_read_account.points;
    // In rounds of 20 at once (the allowance is per minute, not per moment).
    for (let i = 0; i < reads; i += 20) {
      const round = await Promise.all(Array.from({ length: Math.min(20, reads - i) }, () => a.read('files')));
      for (const res of round) assert.equal(res.statusCode, 200, res.body);
    }
    const asked = received();
    for (let i = 0; i < 5; i++) limited(await a.read('files'), reads);
    assert.equal(received(), asked, 'a refused read reached the panel');
    // Writes are counted apart: the same account may still change things.
    assert.equal((await a.act('file_write', { path: 'budget.txt', content: 'still writable\n' })).statusCode, 200);
    // Another account is not affected by the first one's limit.
    assert.equal((await b.read('files')).statusCode, 200);
  });

  test('writes: their own allowance, apart from reads', async () => {
    const writes = LIMITS.panel_write_account.points;
    for (let i = 0; i < writes; i++) {
      const res = await b.act('file_write', { path: 'budget.txt', content: `write ${i}\n` });
      assert.equal(res.statusCode, 200, `write ${i + 1}: ${res.body}`);
    }
    const asked = received();
    limited(await b.act('file_write', { path: 'budget.txt', content: 'one too many\n' }), writes);
    assert.equal(received(), asked, 'a refused write reached the panel');
    assert.equal((await b.read('files')).statusCode, 200, 'reads are counted apart');
  });

  test('sso: 10 sign-in links a minute per account, the 11th is 429 and WHM is not asked', async () => {
    const url = `/api/v1/client/services/?id=${web.serviceId}&action=sso`;
    const allowed = LIMITS.panel_sso_account.points;
    assert.equal(allowed, 10);
    for (let i = 0; i < allowed; i++) {
      const res = await web.browser.get(url);
      assert.equal(res.statusCode, 200, `sso ${i + 1}: ${res.body}`);
    }
    const asked = whmCalls();
    limited(await web.browser.get(url), allowed);
    assert.equal(whmCalls(), asked, 'a refused sign-in reached WHM');
    // The web panel's own reads are counted apart.
    const usage = await web.browser.get(`/api/v1/client/web/?service=${web.serviceId}&action=usage`);
    assert.equal(usage.statusCode, 200, usage.body);
  });

  test("an empty node bucket: a customer's action is 429 with Retry-After and never sent; a job waits for its token", async () => {
    const db = u.t.deps.database.db;
    const node = await db.selectFrom('nodes').selectAll().where('name', '=', 'ptero-mum1').executeTakeFirstOrThrow();
    // Staff lower the node's budget in its settings: one call a second, ten at once.
    const settings = { ...(node.settings as Record<string, unknown>), rate_per_minute: 60, rate_burst: 10 };
    await db
      .updateTable('nodes')
      .set({ settings: JSON.stringify(settings) })
      .where('id', '=', node.id)
      .execute();
    try {
      // A customer's action (the first builds the driver with the new budget).
      const first = await b.read('files');
      assert.equal(first.statusCode, 200, first.body);
      const bucket = nodeBudgets.bucket('ptero-mum1');
      assert.ok(bucket, 'the node has no bucket');
      assert.deepEqual(bucket.spec, { perMinute: 60, burst: 10 });
      // Everything left is taken (as another account's calls or a job's would).
      while (bucket.level() >= 0) bucket.take('background', BACKGROUND_WAIT_MS);
      const asked = received();
      const refused = await b.read('files');
      limited(refused);
      assert.match(refused.json().message, /busy/);
      assert.equal(received(), asked, 'a refused action reached the panel');
      // A job (a start, queued with no node call) is not refused: it waits for its tokens and succeeds.
      const started = await b.browser.post(
        '/api/v1/client/services/action/',
        { id: b.serviceId, action: 'start' },
        { csrf: true },
      );
      assert.equal(started.statusCode, 202, started.body);
      const jobId = started.json().job.id as number;
      const job = await waitFor(
        `job ${jobId}`,
        async () => {
          const j = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
          return j.status === 'succeeded' || j.status === 'failed' ? j : null;
        },
        WAIT,
      );
      assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    } finally {
      await db
        .updateTable('nodes')
        .set({ settings: JSON.stringify(node.settings) })
        .where('id', '=', node.id)
        .execute();
    }
  });
});
