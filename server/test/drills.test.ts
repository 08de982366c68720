// Failure drills (issue 39; the table is docs/RELIABILITY.md). Each stops a dependency under load
// and asserts that no money and no job is lost. PostgreSQL and Redis are servers of the drill's own
// (support/private-servers.ts): CI's shared ones serve other test files at the same time and are
// never stopped. They run on the PostgreSQL + Redis run (TEST_DATABASE_URL); the first run, on the
// embedded engine, skips them: it has no server to restart, and counts its limits in memory.
//
// a. PostgreSQL stopped and started while clients place orders (both surfaces) and provisioning
//    jobs run: what is asked during the outage is 503 service_unavailable in the surface's
//    envelope (never a 500, a hang or a crash); the pool, the invalidation listener and the job
//    queue recover without a restart; every order a client was told about, and only those, is
//    paid once, provisioned once, and its job completed; every balance is its ledger's sum.
// b. Redis stopped and started under token traffic: the process counts alone in memory while
//    Redis is away (README, rate limits), so a token gets at most its limit from Redis plus its
//    limit from memory in a window, never more, and never a 5xx; once Redis is back the counts
//    are Redis's again. A Redis that hangs instead is given up on after a second.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pg from 'pg';
import type { BusMessage } from '../src/core/bus.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrator.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, onPostgres, type TestDatabase } from './support/harness.ts';
import {
  privatePostgresMissing,
  privateRedisMissing,
  startPrivatePostgres,
  startPrivateRedis,
} from './support/private-servers.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp } from './support/upstreams.ts';
import { waitFor } from './support/wait.ts';

/** Ports of the private servers (a fixed range: a restarted server gets its port back). */
const POSTGRES_PORT = 18510;
const REDIS_PORT = 18530;

const ENGINE_SKIP =
  'a drill of the PostgreSQL + Redis run (TEST_DATABASE_URL): the embedded engine has no server to restart';
const postgresSkip = onPostgres ? privatePostgresMissing() : ENGINE_SKIP;
const redisSkip = onPostgres ? privateRedisMissing() : ENGINE_SKIP;

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** Exceptions nobody caught (an `error` event without a listener ends a server process). */
const uncaught: unknown[] = [];
process.on('uncaughtException', (error) => uncaught.push(error));

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Placer {
  name: string;
  /** Keys answered 201: the orders this client was told about. */
  placed: string[];
  /** Keys placed after the database came back. */
  placedAfter: number;
  /** Answers during the outage that said so (503). */
  unavailable: number;
  statuses: Map<number, number>;
  /** What was wrong with an answer (a status or an envelope the drill does not allow). */
  problems: string[];
  done: Promise<void>;
}

describe('drill: PostgreSQL stopped and started during orders and provisioning', {
  skip: postgresSkip ?? false,
}, () => {
  test('503 in the envelope meanwhile; the pool, the listener and the jobs recover; no order, charge or job lost or doubled', {
    timeout: 300_000,
  }, async (ctx) => {
    const server = await startPrivatePostgres(POSTGRES_PORT);
    cleanups.push(() => server.destroy());
    const database = async (): Promise<TestDatabase> => {
      const url = await server.createDatabase(`drill_${randomBytes(4).toString('hex')}`);
      const opened = await openDatabase({ engine: 'postgresql', url, poolSize: 10 });
      await migrateToLatest(opened.db);
      return { database: opened, url, drop: () => opened.close() };
    };
    const u = await createUpstreamApp({
      database,
      // Rate limits count in the same PostgreSQL (no Redis): the outage reaches them too.
      redis: false,
      overrides: {
        queues: {
          'service.provision': { retryDelay: 1, retryBackoff: false, retryLimit: 20, heartbeatSeconds: 10 },
          'service.action': { retryDelay: 1, retryBackoff: false, retryLimit: 1 },
        },
        limits: { deploy_account: { points: 1000 } },
      },
    });
    cleanups.push(() => u.close());
    const { t } = u;
    const db = t.deps.database.db;
    const plan = await db.selectFrom('plans').select('id').where('label', '=', 'vps-1c-1g').executeTakeFirstOrThrow();
    // Every call to the node is slow, so that provisioning jobs are under way when the database stops.
    await u.pve.setFaults({ latencyMs: 100 });
    const browsers: { browser: Browser; accountId: number }[] = [];
    for (let i = 0; i < 2; i++) {
      const { browser, account } = await signedInBrowser(t, freshIp());
      await t.deps.wallet.credit(account.id, '50000', 'drill float');
      browsers.push({ browser, accountId: account.id });
    }
    const api: ApiClient = await apiClient(t, ['*'], '50000');

    let phase: 'before' | 'outage' | 'after' | 'done' = 'before';
    const run = (name: string, send: (key: string, n: number) => Promise<LightMyRequestResponse>): Placer => {
      const placer: Placer = {
        name,
        placed: [],
        placedAfter: 0,
        unavailable: 0,
        statuses: new Map(),
        problems: [],
        done: Promise.resolve(),
      };
      const token = name === 'token';
      placer.done = (async () => {
        for (let n = 1; phase !== 'done'; n++) {
          const key = `${name}-${n}`;
          // The same key again until it is answered: a 503 may have come after the commit.
          for (;;) {
            const res = await send(key, n);
            placer.statuses.set(res.statusCode, (placer.statuses.get(res.statusCode) ?? 0) + 1);
            if (res.statusCode === 201) {
              placer.placed.push(key);
              if (phase === 'after') placer.placedAfter++;
              break;
            }
            const body = res.json();
            if (res.statusCode === 503) {
              const envelope = token
                ? body.ok === false && body.error === 'service_unavailable' && body.status === 503
                : body.success === false && body.code === 'service_unavailable';
              if (!envelope) placer.problems.push(`503 not in the envelope: ${res.body}`);
              if (!res.headers['retry-after']) placer.problems.push('503 without Retry-After');
              placer.unavailable++;
            } else if (res.statusCode !== 409 || (token ? body.error : body.code) !== 'idempotency_in_progress') {
              placer.problems.push(`${res.statusCode} ${res.body}`);
            }
            if (placer.problems.length > 0) return;
            await pause(50);
          }
        }
      })();
      return placer;
    };
    /** A wrong answer fails the drill at once, not at the end of a wait. */
    const noProblems = (p: Placer) => {
      if (p.problems.length > 0) throw new Error(`${p.name}: ${p.problems.join('; ')}`);
      return true;
    };
    const placers = [
      ...browsers.map(({ browser }, i) =>
        run(`session${i}`, (key, n) =>
          browser.post(
            '/api/v1/client/orders/',
            {
              plan_id: plan.id,
              config: { hostname: `s${i}-${n}.example.in`, os: 'debian-12', region: 'mum1' },
              idempotency_key: key,
            },
            { csrf: true },
          ),
        ),
      ),
      run('token', (key, n) =>
        api.call('POST', '/api/v1/instances', {
          plan: 'vps-1c-1g',
          server_name: `t-${n}`,
          eula: true,
          idempotency_key: key,
        }),
      ),
    ];

    // Orders placed and jobs on the node before the database goes. The node then stops answering,
    // so that the jobs under way are still under way when it goes: each attempt gives up on the
    // node and fails to record that in the database, and must be taken up again once it is back.
    await waitFor('orders placed and a job running', async () => {
      if (placers.some((p) => p.placed.length === 0 || !noProblems(p))) return false;
      const running = await db.selectFrom('jobs').select('id').where('status', '=', 'running').executeTakeFirst();
      return running !== undefined;
    });
    await u.pve.setFaults({ hang: true });
    const running = await db.selectFrom('jobs').select('id').where('status', '=', 'running').execute();
    assert.ok(running.length > 0, 'jobs under way when the database stops');
    const linesBefore = t.logs.lines.length;
    const loggedSince = (message: string) =>
      t.logs.lines.slice(linesBefore).some((line) => line.includes(`"msg":"${message}`));
    phase = 'outage';
    await server.stop();

    // While it is away: orders are refused as unavailable, health says so, the process lives.
    await waitFor(
      'the outage to reach every client, the jobs under way and the invalidation listener',
      async () =>
        placers.every((p) => p.unavailable > 0 && noProblems(p)) &&
        loggedSince('job attempt failed; retrying') &&
        loggedSince('invalidation listener could not reconnect'),
    );
    const health = await t.inject({ method: 'GET', url: '/api/v1/health/' });
    assert.equal(health.statusCode, 503, health.body);
    assert.equal(health.json().data.database, 'unreachable');
    assert.equal((await t.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    assert.equal((await t.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
    const me = await api.call('GET', '/api/v1/me');
    assert.ok([200, 503].includes(me.statusCode), `GET /me: ${me.statusCode} ${me.body}`);
    const list = await browsers[0]!.browser.get('/api/v1/client/services/');
    assert.ok([200, 503].includes(list.statusCode), `GET services/: ${list.statusCode} ${list.body}`);

    await server.start();
    await u.pve.setFaults({ hang: false });
    phase = 'after';
    // The same process, its pools reconnected: every client places orders again.
    await waitFor('an order of every client after the restart', async () =>
      placers.every((p) => p.placedAfter > 0 && noProblems(p)),
    );
    phase = 'done';
    await Promise.all(placers.map((p) => p.done));
    for (const p of placers) assert.deepEqual(p.problems, [], `${p.name}: ${JSON.stringify([...p.statuses])}`);

    // Every job completes: the ones cut short by the outage are picked up again.
    await waitFor(
      'every service to be active',
      async () => {
        const waiting = await db.selectFrom('services').select('id').where('status', '!=', 'active').execute();
        return waiting.length === 0;
      },
      180_000,
    );

    // The invalidation listener reconnected: a NOTIFY from elsewhere reaches this process again.
    const heard: BusMessage[] = [];
    t.deps.bus.subscribe((message) => heard.push(message));
    const other = new pg.Client({ connectionString: t.deps.database.url as string });
    await other.connect();
    await waitFor('the invalidation listener to hear another process', async () => {
      await other.query(`select pg_notify('hostplane_invalidate', '{"topic":"catalog"}')`);
      await pause(100);
      return heard.some((m) => m.topic === 'catalog');
    });
    await other.end();

    // Money and jobs, read from the database.
    const accountIds = [...browsers.map((b) => b.accountId), api.accountId];
    const told = new Map<number, number>([
      ...browsers.map((b, i) => [b.accountId, placers[i]!.placed.length] as [number, number]),
      [api.accountId, placers[2]!.placed.length],
    ]);
    for (const accountId of accountIds) {
      const { rows } = await sql<{ sum: string; min: string }>`
        select coalesce(sum(amount_paise), 0)::text as sum, min(balance_after_paise)::text as min
        from wallet_transactions where account_id = ${accountId}`.execute(db);
      const wallet = await db
        .selectFrom('wallets')
        .select('balance_paise')
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      assert.equal(wallet.balance_paise, rows[0]?.sum, `account ${accountId}: the balance is the ledger's sum`);
      assert.ok(BigInt(rows[0]?.min ?? '0') >= 0n, 'never below zero');
      const orders = await db
        .selectFrom('orders')
        .select(['id', 'status', 'service_id', 'transaction_id', 'amount_paise'])
        .where('account_id', '=', accountId)
        .execute();
      assert.equal(
        orders.length,
        told.get(accountId),
        `account ${accountId}: exactly the orders the client was told of`,
      );
      for (const order of orders) {
        assert.equal(order.status, 'paid');
        assert.ok(order.service_id !== null && order.transaction_id !== null);
        const charges = await db
          .selectFrom('wallet_transactions')
          .select(['id', 'amount_paise'])
          .where('reference_type', '=', 'order')
          .where('reference_id', '=', order.id)
          .execute();
        assert.equal(charges.length, 1, `order ${order.id}: one charge`);
        assert.equal(BigInt(charges[0]!.amount_paise), -BigInt(order.amount_paise));
        const services = await db.selectFrom('services').select('id').where('order_id', '=', order.id).execute();
        assert.equal(services.length, 1, `order ${order.id}: one service`);
      }
      const refunds = await db
        .selectFrom('wallet_transactions')
        .select('id')
        .where('account_id', '=', accountId)
        .where('kind', '=', 'refund')
        .execute();
      assert.equal(refunds.length, 0, 'nothing failed, so nothing was refunded');
    }
    const jobs = await db.selectFrom('jobs').select(['id', 'status', 'attempts']).execute();
    assert.ok(jobs.length > 0);
    assert.deepEqual(
      jobs.filter((j) => j.status !== 'succeeded'),
      [],
      'every job succeeded',
    );
    const { rows: queued } = await sql<{ state: string; n: string }>`
      select state, count(*)::text as n from pgboss.job where name = 'service.provision' and state <> 'completed'
      group by state`.execute(db);
    assert.deepEqual(queued, [], 'no provisioning job left in the queue');
    const services = await db.selectFrom('services').select('id').execute();
    for (const service of services) {
      const name = `hp-${t.deps.installation.id}-svc-${service.id}`;
      assert.equal(
        [...u.pve.state.vms.values()].filter((vm) => vm.name === name).length,
        1,
        `one VM for ${service.id}`,
      );
    }
    const cut = jobs.filter((j) => running.some((r) => r.id === j.id));
    assert.ok(
      cut.every((j) => j.attempts >= 2),
      'the jobs under way were cut short and taken up again',
    );
    assert.ok(!t.logs.text().includes('"internal_error"'), 'no request answered 500');
    for (const p of placers)
      ctx.diagnostic(`${p.name}: ${p.placed.length} placed, answers ${JSON.stringify(Object.fromEntries(p.statuses))}`);
    ctx.diagnostic(`jobs under way at the stop: ${cut.map((j) => `${j.id} (${j.attempts} attempts)`).join(', ')}`);
    assert.deepEqual(uncaught, [], 'no uncaught exception');
  });
});

describe('drill: Redis stopped and started under token traffic', { skip: redisSkip ?? false }, () => {
  test('limits fall back to this process alone while Redis is away, never further; then count in Redis again', {
    timeout: 180_000,
  }, async () => {
    const LIMIT = 20;
    // Persisted, as `appendonly` keeps them: the counts of before the outage are there after it.
    const redis = await startPrivateRedis(REDIS_PORT, true);
    cleanups.push(() => redis.destroy());
    // A window of an hour: the drill is never split by a window's end, however slow the machine.
    const t = await createTestApp({
      env: { REDIS_URL: redis.url },
      overrides: { limits: { token_requests: { points: LIMIT, duration: 3600 } } },
    });
    cleanups.push(() => t.close());
    const a = await apiClient(t, ['*'], '0');
    const b = await apiClient(t, ['*'], '0');
    const me = (client: ApiClient) => client.call('GET', '/api/v1/me');
    const check = (res: LightMyRequestResponse) => {
      assert.ok(res.statusCode === 200 || res.statusCode === 429, `${res.statusCode} ${res.body}`);
      if (res.statusCode === 429) {
        assert.equal(res.json().error, 'rate_limited');
        assert.ok(Number(res.headers['retry-after']) > 0);
      }
      return res;
    };
    /** Requests until one is refused: how many passed. */
    const untilRefused = async (client: ApiClient) => {
      for (let passed = 0; ; passed++) {
        const res = check(await me(client));
        if (res.statusCode === 429) return passed;
        assert.ok(passed <= 3 * LIMIT, 'a limit that never refuses');
      }
    };
    const reader = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    reader.on('error', () => {});
    cleanups.push(async () => reader.disconnect());
    const counted = async () => {
      const keys = await reader.keys('*:token_requests:*');
      return Promise.all(keys.map(async (key) => Number(await reader.get(key))));
    };

    // Redis up: half the allowance, counted in Redis.
    for (let i = 1; i <= LIMIT / 2; i++) {
      const res = check(await me(a));
      assert.equal(res.statusCode, 200);
      assert.equal(Number(res.headers['ratelimit-remaining']), LIMIT - i);
    }
    await reader.connect();
    assert.deepEqual(await counted(), [LIMIT / 2], 'counted in Redis');
    reader.disconnect();

    // Redis stopped: the process counts alone, from its own zero, up to the limit; then 429.
    await redis.stop();
    assert.equal(await untilRefused(a), LIMIT, 'the limit again, in memory');

    await redis.start();
    await reader.connect();
    // Back: the counts are Redis's again. Memory has no room left for `a`, so a request that
    // passes was counted in Redis, which still holds what it counted before the outage.
    const back = await waitFor('a request counted in Redis again', async () => {
      const res = check(await me(a));
      return res.statusCode === 200 ? res : null;
    });
    assert.equal(Number(back.headers['ratelimit-remaining']), LIMIT / 2 - 1);
    const afterwards = 1 + (await untilRefused(a));
    // In all LIMIT / 2 + LIMIT + LIMIT / 2: the limit in Redis plus the limit in this process's
    // memory, the documented bound for one process.
    assert.equal(afterwards, LIMIT / 2, "the rest of Redis's allowance, no more");
    assert.ok((await counted()).includes(LIMIT + 1), 'Redis counted its allowance and the refusal');

    // Another token: counted in Redis.
    assert.equal(check(await me(b)).statusCode, 200);
    assert.equal((await counted()).filter((n) => n === 1).length, 1);

    // A Redis that hangs: given up on after its command timeout, and the request is answered,
    // counted in memory (where `b` has used nothing yet). Then Redis answers again.
    redis.freeze();
    const held = check(await me(b));
    assert.equal(held.statusCode, 200);
    assert.equal(Number(held.headers['ratelimit-remaining']), LIMIT - 1, "counted in this process's memory");
    redis.thaw();
    assert.equal(check(await me(b)).statusCode, 200);
    assert.deepEqual(uncaught, [], 'no uncaught exception');
  });
});
