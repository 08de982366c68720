// GET /metrics: behind METRICS_TOKEN on the main port, on a listener of its own with
// METRICS_PORT, absent with neither. What it counts: requests by route pattern and status,
// rate-limit refusals, job attempts and service jobs, upstream calls by node, and what it reads
// when scraped (queue depth, database pool, event-loop lag). The registry is per process and
// this file's apps share it, so every count is compared before and after, never absolutely.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startMetricsListener } from '../src/http/metrics.routes.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import { createHttpClient } from '../src/upstreams/http.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp } from './support/harness.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const TOKEN = 'metrics-test-token-0123456789';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a scrape in the Prometheus text format (label values here hold no escapes). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there are none). */
function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

function has(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe('GET /metrics behind METRICS_TOKEN', () => {
  let u: UpstreamApp;
  before(async () => {
    u = await createUpstreamApp({ env: { METRICS_TOKEN: TOKEN } });
  });
  after(() => u.close());

  const scrape = async (): Promise<Sample[]> => {
    const res = await u.t.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200, res.body);
    return parse(res.body);
  };

  test('401 in the token envelope without the token or with a wrong one; 200 Prometheus text with it', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-token-of-enough-length',
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
    ]) {
      const res = await u.t.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization === undefined ? {} : { authorization },
      });
      assert.equal(res.statusCode, 401, String(authorization));
      const body = res.json();
      assert.equal(body.ok, false);
      assert.equal(body.error, 'invalid_token');
      assert.equal(typeof body.request_id, 'string');
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
      assert.doesNotMatch(res.body, /hostplane_/);
    }
    const res = await u.t.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.match(res.body, /^# HELP hostplane_http_requests_total /m);
    assert.match(res.body, /^# TYPE hostplane_http_request_duration_seconds histogram$/m);
  });

  test('not in the OpenAPI document', async () => {
    const res = await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().paths['/metrics'], undefined);
  });

  test('requests are counted by route pattern and status; unknown URLs fall under one label', async () => {
    const { browser } = await signedInBrowser(u.t, freshIp());
    const health = { method: 'GET', route: '/api/v1/health/', status: '200' };
    const service = { method: 'GET', route: '/api/v1/client/services/', status: '200' };
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    const before = await scrape();
    for (let i = 0; i < 3; i++)
      assert.equal((await u.t.inject({ method: 'GET', url: '/api/v1/health/' })).statusCode, 200);
    assert.equal((await browser.get('/api/v1/client/services/')).statusCode, 200);
    assert.equal((await browser.get('/api/v1/client/services/?per_page=50')).statusCode, 200);
    for (const url of ['/api/v1/no-such-thing-1', '/api/v1/no-such-thing-2?x=1']) {
      assert.equal((await u.t.inject({ method: 'GET', url })).statusCode, 404);
    }
    const now = await scrape();
    const delta = (labels: Record<string, string>) =>
      sumOf(now, 'hostplane_http_requests_total', labels) - sumOf(before, 'hostplane_http_requests_total', labels);
    assert.equal(delta(health), 3);
    assert.equal(delta(service), 2, 'the query string is not part of the route');
    assert.equal(delta(unmatched), 2);
    assert.equal(
      sumOf(now, 'hostplane_http_request_duration_seconds_count', health) -
        sumOf(before, 'hostplane_http_request_duration_seconds_count', health),
      3,
    );
    assert.equal(
      sumOf(now, 'hostplane_http_request_duration_seconds_bucket', { ...health, le: '+Inf' }),
      sumOf(now, 'hostplane_http_request_duration_seconds_count', health),
    );
    assert.ok(!now.some((s) => Object.values(s.labels).some((v) => v.includes('no-such-thing'))), 'no raw URLs');
  });

  test('a 429 from a rate limit counts as a refusal of that limit', async () => {
    const limit = { limit: 'csrf_ip' };
    const before = await scrape();
    assert.ok(has(before, 'hostplane_ratelimit_refusals_total', limit), 'every limit is there from the start');
    const ip = freshIp();
    let refused = 0;
    for (let i = 0; i < 62; i++) {
      const res = await u.t.inject({ method: 'GET', url: '/api/v1/client/auth/csrf/', remoteAddress: ip });
      if (res.statusCode === 429) refused++;
      else assert.equal(res.statusCode, 200);
    }
    assert.equal(refused, 2);
    const now = await scrape();
    assert.equal(
      sumOf(now, 'hostplane_ratelimit_refusals_total', limit) -
        sumOf(before, 'hostplane_ratelimit_refusals_total', limit),
      2,
    );
    const tooMany = { route: '/api/v1/client/auth/csrf/', status: '429' };
    assert.equal(
      sumOf(now, 'hostplane_http_requests_total', tooMany) - sumOf(before, 'hostplane_http_requests_total', tooMany),
      2,
    );
  });

  test('a provisioning job shows in the job metrics, and its calls to the node in the upstream metrics', async () => {
    const node = { node: 'pve-mum1' };
    const provision = { type: 'provision', outcome: 'succeeded' };
    const attempts = { queue: 'service.provision', outcome: 'completed' };
    const before = await scrape();
    const { browser, account } = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(account.id, '5000', 'test float');
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const placed = await browser.post(
      '/api/v1/client/orders/',
      {
        plan_id: plan.id,
        config: { hostname: 'metrics.example.in', os: 'debian-12', region: 'mum1' },
        idempotency_key: `metrics-${Date.now()}`,
      },
      { csrf: true },
    );
    assert.equal(placed.statusCode, 201, placed.body);
    const serviceId = placed.json().service.id as number;
    const active = await waitFor(`service ${serviceId} to settle`, async () => {
      const s = (await browser.get(`/api/v1/client/services/?id=${serviceId}`)).json().service;
      return s.status === 'active' || s.status === 'failed' ? s : null;
    });
    assert.equal(active.status, 'active');
    // The attempt is counted when its handler returns, just after the service became active.
    const now = await waitFor('the attempt to be counted', async () => {
      const samples = await scrape();
      const counted =
        sumOf(samples, 'hostplane_job_attempts_total', attempts) >
        sumOf(before, 'hostplane_job_attempts_total', attempts);
      return counted ? samples : null;
    });
    assert.equal(
      sumOf(now, 'hostplane_service_jobs_total', provision) - sumOf(before, 'hostplane_service_jobs_total', provision),
      1,
    );
    assert.equal(
      sumOf(now, 'hostplane_service_job_duration_seconds_count', provision) -
        sumOf(before, 'hostplane_service_job_duration_seconds_count', provision),
      1,
    );
    assert.ok(sumOf(now, 'hostplane_job_attempt_duration_seconds_count', attempts) >= 1);
    assert.ok(
      sumOf(now, 'hostplane_upstream_request_duration_seconds_count', node) >
        sumOf(before, 'hostplane_upstream_request_duration_seconds_count', node),
      'the clone, the config and the start went to the node',
    );
    assert.ok(sumOf(now, 'hostplane_upstream_request_duration_seconds_sum', node) > 0);
  });

  test('an upstream that cannot be reached counts as an error of that node', async () => {
    // A port that was free a moment ago: nothing listens there now.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const node = { node: `127.0.0.1:${port}` };
    const client = createHttpClient({ timeoutMs: 2000, label: 'test node' });
    const before = await scrape();
    try {
      await assert.rejects(
        client.send({ method: 'GET', url: new URL(`http://127.0.0.1:${port}/api`), headers: {} }),
        (error: unknown) => error instanceof UpstreamError && error.kind === 'unreachable',
      );
    } finally {
      client.close();
    }
    const now = await scrape();
    const errors = { ...node, kind: 'unreachable' };
    assert.equal(
      sumOf(now, 'hostplane_upstream_errors_total', errors) - sumOf(before, 'hostplane_upstream_errors_total', errors),
      1,
    );
    assert.equal(sumOf(now, 'hostplane_upstream_request_duration_seconds_count', node), 1);
  });

  test('read when scraped: queue depth per queue, the database pool, event-loop lag', async () => {
    const now = await scrape();
    for (const queue of ['service.provision', 'service.action', 'mail.send']) {
      for (const state of ['ready', 'deferred', 'active']) {
        assert.ok(has(now, 'hostplane_job_queue_depth', { queue, state }), `${queue} ${state}`);
      }
    }
    assert.ok(sumOf(now, 'hostplane_db_pool_connections') >= 1);
    assert.ok(has(now, 'hostplane_db_pool_idle_connections'));
    assert.ok(has(now, 'hostplane_db_pool_waiting_clients'));
    assert.equal(sumOf(now, 'hostplane_db_pool_max_connections'), u.t.deps.database.pool.options.max);
    assert.ok(has(now, 'nodejs_eventloop_lag_seconds'));
    assert.ok(has(now, 'process_cpu_seconds_total'));
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  test('no METRICS_* set: no /metrics route (404 in the token envelope)', async () => {
    const t = await createTestApp();
    try {
      assert.equal(t.config.metricsPort, null);
      assert.equal(t.config.metricsToken, null);
      const res = await t.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error, 'not_found');
    } finally {
      await t.close();
    }
  });

  test('METRICS_PORT: a listener of its own answers GET /metrics without auth, and nothing else', async () => {
    const t = await createTestApp({ env: { METRICS_PORT: '0' } });
    const listener = await startMetricsListener(t.deps, t.config.metricsHost, t.config.metricsPort as number);
    try {
      assert.equal(listener.host, '127.0.0.1');
      assert.ok(listener.port > 0);
      const base = `http://127.0.0.1:${listener.port}`;
      const res = await fetch(`${base}/metrics`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      const samples = parse(await res.text());
      assert.ok(has(samples, 'hostplane_db_pool_connections'));
      assert.ok(has(samples, 'hostplane_job_queue_depth', { queue: 'service.provision', state: 'ready' }));
      assert.equal((await fetch(`${base}/`)).status, 404);
      assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405);
      // The main port has no /metrics: the token is what opens it there.
      assert.equal((await t.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
    } finally {
      await listener.close();
      await t.close();
    }
  });
});
