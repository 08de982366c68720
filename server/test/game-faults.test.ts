// The game panel misbehaving (reliability, CONTRACT §6): each fault knob of the emulated
// Pterodactyl panel against the game route (403 upstream_forbidden, 503 node_unreachable, a 429
// waited out or passed on, never a 500) and against provisioning (a failed install undone and
// refunded, a lost answer not making a second server, flaky and dead panels retried, retries
// running out: failed and refunded). Then a seeded fuzz of every management action on an
// installed, running server: never a 5xx, every refusal in the session envelope, no server
// made or lost on the panel.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { TObject } from 'typebox';
import type { PteroFaultKnobs } from '../../emulators/src/pterodactyl/index.ts';
import { sessionRoutes } from '../src/core/product-kit/actions.ts';
import { PRODUCTS } from '../src/core/products/index.ts';
import { retryCleanups } from '../src/worker/cleanup.ts';
import { GAME, type GameClient, gameClient, panelServer, WAIT } from './support/game.ts';
import { multipart } from './support/uploads.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const RETRY_LIMIT = 2;
const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261212);

let u: UpstreamApp;
let c: GameClient;

before(async () => {
  u = await createUpstreamApp({ game: true, retryLimit: RETRY_LIMIT });
  c = await gameClient(u, { order: true });
});
after(() => u.close());

const db = () => u.t.deps.database.db;
const ptero = () => {
  assert.ok(u.ptero, 'the app has no game panel');
  return u.ptero;
};

const CLEAR: Partial<PteroFaultKnobs> = {
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  rateLimitNext: 0,
  forbidNext: 0,
  wingsDown: false,
  failInstalls: 0,
};
const clearFaults = () => ptero().setFaults(CLEAR);

/** A refusal in the session envelope with this status and code. */
function refused(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.success, false, res.body);
  assert.equal(body.code, code, res.body);
  assert.equal(typeof body.message, 'string', res.body);
  // Never the panel's address or keys.
  for (const secret of [ptero().url, ptero().wingsUrl, ptero().appKey, ptero().clientKey]) {
    assert.ok(!res.body.includes(secret), `the answer shows ${secret}`);
  }
  return body;
}

function ok(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.json().success, true, res.body);
  return res.json();
}

describe('panel faults on actions', () => {
  afterEach(clearFaults);

  test('forbidNext: 403 upstream_forbidden; then the action works again', async () => {
    await ptero().setFaults({ forbidNext: 1 });
    refused(await c.read('resources'), 403, 'upstream_forbidden');
    assert.equal(ptero().faults.forbidNext, 0);
    ok(await c.read('resources'));
  });

  test('down: every kind of action is 503 node_unreachable with Retry-After, never a 500; reads of our own data still answer', async () => {
    await ptero().setFaults({ down: true });
    const calls: [string, () => Promise<LightMyRequestResponse>][] = [
      ['resources', () => c.read('resources')],
      ['overview', () => c.read('overview')],
      ['files', () => c.read('files')],
      ['file_read', () => c.read('file_read', { path: 'server.properties' })],
      ['file_write', () => c.act('file_write', { path: 'down.txt', content: 'x' })],
      ['backup_create', () => c.act('backup_create', { name: 'down' })],
      ['db_create', () => c.act('db_create', { database: 'downdb' })],
      ['power', () => c.act('power', { signal: 'start' })],
      ['console_ws', () => c.act('console_ws')],
      ['startup_var', () => c.act('startup_var', { key: 'SERVER_JARFILE', value: 'a.jar' })],
      ['eula_accept', () => c.act('eula_accept')],
    ];
    for (const [name, call] of calls) {
      const res = await call();
      refused(res, 503, 'node_unreachable');
      assert.ok(Number(res.headers['retry-after']) >= 1, `${name}: Retry-After`);
    }
    ok(await c.read('events'));
    const status = ok(await c.read('provision_status')).provision;
    assert.equal(status.panel_status, 'unknown');
    await clearFaults();
    ok(await c.read('resources'));
    ok(await c.act('file_write', { path: 'down.txt', content: 'after' }));
  });

  test('hang: 503 node_unreachable once the driver gives up waiting', { timeout: 60_000 }, async () => {
    await ptero().setFaults({ hang: true });
    refused(await c.read('resources'), 503, 'node_unreachable');
    refused(await c.act('file_write', { path: 'hang.txt', content: 'x' }), 503, 'node_unreachable');
    await clearFaults();
    ok(await c.read('resources'));
  });

  test('rateLimitNext 1: the driver waits out Retry-After and the action succeeds', async () => {
    const key = 'GET /api/client/servers/:/resources';
    const before = ptero().calls.get(key) ?? 0;
    await ptero().setFaults({ rateLimitNext: 1 });
    ok(await c.read('resources'));
    assert.equal(ptero().faults.rateLimitNext, 0);
    assert.equal((ptero().calls.get(key) ?? 0) - before, 2, 'asked again after the 429');
  });

  test('rateLimitNext 5: after its retries the driver passes the 429 on (429 rate_limited with Retry-After)', async () => {
    await ptero().setFaults({ rateLimitNext: 5 });
    const res = await c.read('resources');
    refused(res, 429, 'rate_limited');
    assert.equal(res.headers['retry-after'], '2');
    assert.equal(ptero().faults.rateLimitNext, 2, 'one call and two retries');
    await clearFaults();
    ok(await c.read('resources'));
  });

  test('errorRate 1: the panel failing is 503 node_unreachable', async () => {
    await ptero().setFaults({ errorRate: 1 });
    refused(await c.read('databases'), 503, 'node_unreachable');
    refused(await c.act('schedule_create', { name: 'x', tasks: [{ action: 'backup' }] }), 503, 'node_unreachable');
    await clearFaults();
    ok(await c.read('databases'));
  });

  test('wingsDown: what needs the node is 503 node_unreachable; what only the panel knows still answers', async () => {
    await ptero().setFaults({ wingsDown: true });
    refused(await c.read('resources'), 503, 'node_unreachable');
    refused(await c.read('files'), 503, 'node_unreachable');
    refused(await c.act('power', { signal: 'start' }), 503, 'node_unreachable');
    ok(await c.read('startup'));
    ok(await c.read('databases'));
    await clearFaults();
    ok(await c.read('resources'));
    ok(await c.read('files'));
  });
});

// ---- provisioning ----

interface Placed {
  client: GameClient;
  serviceId: number;
  jobId: number;
  price: number;
}

let orders = 0;

/** A new funded client orders mc-java-2g; not waited for. */
async function place(app: UpstreamApp = u): Promise<Placed> {
  const client = await gameClient(app);
  const plan = await app.t.deps.database.db
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', 'mc-java-2g')
    .executeTakeFirstOrThrow();
  const res = await client.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { server_name: `faulty${++orders}`, eula: true, region: 'mum1' },
      idempotency_key: `faults-${orders}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  return { client, serviceId: res.json().service.id, jobId: res.json().job.id, price: Number(plan.price_paise) };
}

async function settled(placed: Placed, app: UpstreamApp = u) {
  return waitFor(
    `job ${placed.jobId} settled`,
    async () => {
      const job = await app.t.deps.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', placed.jobId)
        .executeTakeFirstOrThrow();
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    WAIT,
  );
}

const serversOf = (serviceId: number, app: UpstreamApp = u) =>
  [...(app.ptero?.state.servers.values() ?? [])].filter(
    (s) => s.externalId === `hp-${app.t.deps.installation.id}-svc-${serviceId}`,
  );

const statusOf = async (serviceId: number, app: UpstreamApp = u) =>
  (
    await app.t.deps.database.db
      .selectFrom('services')
      .select('status')
      .where('id', '=', serviceId)
      .executeTakeFirstOrThrow()
  ).status;

/** The ledger adds up to the balance, which is the float again: the order was refunded. */
async function refunded(placed: Placed, app: UpstreamApp = u): Promise<void> {
  const d = app.t.deps.database.db;
  const rows = await d
    .selectFrom('wallet_transactions')
    .select(['kind', 'amount_paise'])
    .where('account_id', '=', placed.client.accountId)
    .orderBy('id')
    .execute();
  const sum = rows.reduce((total, r) => total + Number(r.amount_paise), 0);
  const wallet = await d
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', placed.client.accountId)
    .executeTakeFirstOrThrow();
  assert.equal(sum, Number(wallet.balance_paise), 'the ledger adds up to the balance');
  assert.equal(sum, 5000 * 100, 'the float is whole again');
  assert.deepEqual(
    rows.map((r) => [r.kind, Number(r.amount_paise)]),
    [
      ['adjustment', 500_000],
      ['order', -placed.price],
      ['refund', placed.price],
    ],
  );
  const notes = (await placed.client.browser.get('/api/v1/client/notifications/')).json().notifications;
  assert.ok(
    notes.some((n: { kind: string }) => n.kind === 'service_failed'),
    JSON.stringify(notes),
  );
}

/** Watch the panel while a job runs: the most servers it ever had for the service. */
function watchServers(serviceId: number, app: UpstreamApp = u): { most(): number; stop(): void } {
  let most = 0;
  const timer = setInterval(() => {
    most = Math.max(most, serversOf(serviceId, app).length);
  }, 5);
  return {
    most: () => Math.max(most, serversOf(serviceId, app).length),
    stop: () => clearInterval(timer),
  };
}

describe('panel faults during provisioning', () => {
  afterEach(clearFaults);

  test('failInstalls: the job fails, the service is failed and refunded, the panel server is deleted', async () => {
    const deletes = () => ptero().calls.get('DELETE /api/application/servers/:/force') ?? 0;
    const before = deletes();
    await ptero().setFaults({ failInstalls: 1 });
    const placed = await place();
    const job = await settled(placed);
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'upstream_error');
    assert.equal(job.attempts, 1, 'a failed install script is not retried');
    assert.equal(await statusOf(placed.serviceId), 'failed');
    await refunded(placed);
    assert.equal(serversOf(placed.serviceId).length, 0, 'undone on the panel');
    assert.equal(deletes() - before, 1);
    // The failed service answers the game route as having no server.
    refused(await placed.client.read('files', {}, placed.serviceId), 409, 'no_server');
  });

  test('loseNext on server creation: the retry finds the server it made; exactly one, and the job succeeds', async () => {
    const key = 'POST /api/application/servers';
    const before = ptero().calls.get(key) ?? 0;
    await ptero().setFaults({ loseNext: key });
    const placed = await place();
    const watch = watchServers(placed.serviceId);
    const job = await settled(placed);
    watch.stop();
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.ok(job.attempts >= 2, `attempts ${job.attempts}`);
    assert.equal(ptero().faults.loseNext, null, 'the answer was lost');
    assert.equal((ptero().calls.get(key) ?? 0) - before, 1, 'created once');
    assert.equal(watch.most(), 1);
    assert.equal(serversOf(placed.serviceId).length, 1);
    assert.equal(await statusOf(placed.serviceId), 'active');
    ok(await placed.client.read('overview', {}, placed.serviceId));
  });

  test('errorRate 0.3: retried; it ends active with one server, or failed and refunded; never two servers', async (t) => {
    await ptero().setFaults({ errorRate: 0.3 });
    const placed = await place();
    const watch = watchServers(placed.serviceId);
    const job = await settled(placed);
    watch.stop();
    await clearFaults();
    assert.ok(watch.most() <= 1, `${watch.most()} panel servers for one service`);
    const status = await statusOf(placed.serviceId);
    t.diagnostic(`job ${job.status} after ${job.attempts} attempts (${job.error_code ?? 'no error'})`);
    if (job.status === 'succeeded') {
      assert.equal(status, 'active');
      assert.equal(serversOf(placed.serviceId).length, 1);
    } else {
      assert.equal(status, 'failed');
      assert.equal(job.error_code, 'node_unreachable');
      await refunded(placed);
      // The undo is one best-effort attempt, itself under the same faults (see the report).
      if (serversOf(placed.serviceId).length > 0) t.diagnostic('the failed service left its panel server behind');
    }
  });

  test('errorRate 0.3 for the first attempt, then a healthy panel: the retry continues what it made; one server, active', async () => {
    await ptero().setFaults({ errorRate: 0.3 });
    const placed = await place();
    const watch = watchServers(placed.serviceId);
    await waitFor(
      'an attempt failed on the flaky panel (or the job got through)',
      async () => {
        const job = await db().selectFrom('jobs').selectAll().where('id', '=', placed.jobId).executeTakeFirstOrThrow();
        return job.error_code === 'node_unreachable' || job.status === 'succeeded';
      },
      WAIT,
    );
    await clearFaults();
    const job = await settled(placed);
    watch.stop();
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.equal(watch.most(), 1, 'never two servers');
    assert.equal(serversOf(placed.serviceId).length, 1);
    assert.equal(await statusOf(placed.serviceId), 'active');
  });

  test('down while provisioning: the attempt fails node_unreachable and is retried; it completes once the panel is back', async () => {
    await ptero().setFaults({ down: true });
    const placed = await place();
    await waitFor(
      'an attempt failed on the dead panel',
      async () => {
        const job = await db().selectFrom('jobs').selectAll().where('id', '=', placed.jobId).executeTakeFirstOrThrow();
        return job.error_code === 'node_unreachable' && job.status === 'running';
      },
      WAIT,
    );
    await clearFaults();
    const job = await settled(placed);
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.ok(job.attempts >= 2);
    assert.equal(serversOf(placed.serviceId).length, 1);
    assert.equal(await statusOf(placed.serviceId), 'active');
    const events = ok(await placed.client.read('events', {}, placed.serviceId)).events.map(
      (e: { kind: string }) => e.kind,
    );
    assert.ok(events.includes('provision_retry'), events.join());
  });

  test('down until the retries run out: failed, refunded, nothing left on the panel', async () => {
    await ptero().setFaults({ down: true });
    const placed = await place();
    const job = await settled(placed);
    await clearFaults();
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'node_unreachable');
    assert.equal(job.attempts, RETRY_LIMIT + 1, 'the first attempt and every retry');
    assert.equal(await statusOf(placed.serviceId), 'failed');
    await refunded(placed);
    assert.equal(serversOf(placed.serviceId).length, 0);
  });
});

describe('a panel that dies after the server was made', () => {
  let slow: UpstreamApp;
  before(async () => {
    slow = await createUpstreamApp({ game: { installDelayMs: 3000 }, retryLimit: RETRY_LIMIT });
  });
  after(() => slow.close());

  test('down from mid-install until the retries run out: failed and refunded at once; the server is removed by the cleanup pass', async () => {
    const panel = slow.ptero;
    assert.ok(panel);
    const placed = await place(slow);
    await waitFor('the server was made', async () => serversOf(placed.serviceId, slow).length === 1, WAIT);
    await panel.setFaults({ down: true });
    const job = await settled(placed, slow);
    assert.equal(job.status, 'failed');
    await refunded(placed, slow);
    // The undo ran while the panel was down: the server is still there, and the service says so.
    assert.equal(serversOf(placed.serviceId, slow).length, 1);
    const pending = await cleanupPending(slow, placed.serviceId);
    assert.equal(pending, true);
    // The cleanup pass of the maintenance sweep keeps trying: nothing while the panel is down …
    assert.deepEqual(await retryCleanups(slow.t.deps, slow.t.deps.logger), { cleaned: 0, left: 1 });
    await panel.setFaults({ down: false });
    // … and once it answers, the server goes and the mark with it.
    assert.deepEqual(await retryCleanups(slow.t.deps, slow.t.deps.logger), { cleaned: 1, left: 0 });
    assert.equal(serversOf(placed.serviceId, slow).length, 0, 'the failed service left its panel server behind');
    assert.equal(await cleanupPending(slow, placed.serviceId), false);
    assert.deepEqual(await retryCleanups(slow.t.deps, slow.t.deps.logger), { cleaned: 0, left: 0 });
  });
});

async function cleanupPending(app: UpstreamApp, serviceId: number): Promise<boolean> {
  const row = await app.t.deps.database.db
    .selectFrom('services')
    .select('config')
    .where('id', '=', serviceId)
    .executeTakeFirstOrThrow();
  return (row.config as { cleanup_pending?: boolean }).cleanup_pending === true;
}

// ---- fuzz ----

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '..',
  '../',
  '../../etc/passwd',
  '/../../etc/shadow',
  'a/../../b',
  '%2e%2e/x',
  '..%2f..%2f',
  '..\\..\\windows',
  '/',
  '.',
  '\u202egnp.exe',
  'ä😀𝕏\u0301',
  '😀'.repeat(300),
  'x'.repeat(5000),
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '\r\nX-Injected: 1',
  '$'.concat('{jndi:ldap://x}'),
  '-1',
  '2147483648',
  'NaN',
  'true',
  'null',
  '[]',
  '{}',
];
const NASTY_VALUES: unknown[] = [
  0,
  -1,
  -0.5,
  1.5,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  1e308,
  true,
  false,
  null,
  [],
  [1, 'a', null],
  [[[[[[[[[[]]]]]]]]]],
  {},
  { nested: { deeper: { deepest: ['..'] } } },
  JSON.parse('{"__proto__":{"polluted":true}}'),
  { constructor: { prototype: { polluted: true } } },
];
const PLAUSIBLE = [
  'server.properties',
  'eula.txt',
  'logs',
  'fuzz/notes.txt',
  'world',
  'say fuzz',
  'start',
  'kill',
  'SERVER_JARFILE',
  'fuzz.jar',
  'fuzzdb',
  'friend@example.net',
  '*/5',
  '0',
];

const nastyString = fc.constantFrom(...NASTY_STRINGS);
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_VALUES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  const?: unknown;
}

/** A value of the schema's type (often plausible, so the request reaches the panel) or a spoiled one. */
function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return nasty;
  let own: fc.Arbitrary<unknown>;
  if (schema.anyOf) {
    const consts = schema.anyOf.map((s) => s.const).filter((v) => v !== undefined);
    own = consts.length > 0 ? fc.constantFrom(...consts) : fc.oneof(...schema.anyOf.map((s) => valueFor(s, depth + 1)));
  } else {
    switch (schema.type) {
      case 'integer':
        own = fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53));
        break;
      case 'boolean':
        own = fc.boolean();
        break;
      case 'array':
        own = fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 });
        break;
      case 'object':
        own = objectFor(schema, depth + 1);
        break;
      default:
        own = fc.oneof(
          fc.constantFrom(...PLAUSIBLE),
          fc.string({ maxLength: 30 }),
          fc.string({ unit: 'grapheme', maxLength: 30 }),
          nastyString,
        );
    }
  }
  return fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: nasty });
}

function objectFor(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const shaped = fc.record(Object.fromEntries(Object.entries(props).map(([key, sub]) => [key, valueFor(sub, depth)])), {
    requiredKeys: [],
  }) as fc.Arbitrary<Record<string, unknown>>;
  const extra = fc
    .tuple(shaped, fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('action', 'service')), nasty)
    .map(([object, key, value]) => ({ ...object, [key]: value }));
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: extra });
}

/** One request of the fuzz: the parameters, or a body that is not an object at all. */
type Input = { kind: 'params'; params: Record<string, unknown> } | { kind: 'raw'; body: string | unknown[] };

const inputFor = (schema: TObject): fc.Arbitrary<Input> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: objectFor(schema as unknown as JsonSchema).map((params): Input => ({ kind: 'params', params })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<string | unknown[]>('{"path":', '[1,2', 'null', '"text"', '42', [], [{ path: '..' }])
        .map((body): Input => ({ kind: 'raw', body })),
    },
  );

/** A value as it goes in a query string: text as is, arrays as repeated keys, anything else as JSON. */
function toQuery(search: URLSearchParams, key: string, value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 5)) search.append(key, typeof item === 'string' ? item : JSON.stringify(item));
    return;
  }
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  search.append(key, text.slice(0, 6000));
}

async function send(action: { name: string; method: 'read' | 'mutate' }, input: Input) {
  const url = `${GAME}?service=${c.serviceId}&action=${action.name}`;
  if (action.method === 'read') {
    const search = new URLSearchParams();
    if (input.kind === 'params') for (const [k, v] of Object.entries(input.params)) toQuery(search, k, v);
    const query = search.toString();
    return c.browser.get(query ? `${url}&${query}` : url);
  }
  const payload =
    input.kind === 'params'
      ? JSON.stringify(input.params)
      : typeof input.body === 'string'
        ? input.body
        : JSON.stringify(input.body);
  return c.browser.request('POST', url, {
    csrf: true,
    body: payload,
    headers: { 'content-type': 'application/json' },
  });
}

/** Never a 5xx; a refusal is the session envelope, a success says so. */
function sane(res: LightMyRequestResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body.slice(0, 500)}`);
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode >= 400) {
    assert.equal(body.success, false, what);
    assert.equal(typeof body.message, 'string', what);
    assert.equal(typeof body.code, 'string', what);
    assert.equal(typeof body.errors, 'object', what);
  } else {
    assert.equal(body.success, true, what);
  }
  assert.equal(({} as { polluted?: unknown }).polluted, undefined, `${what}: prototype polluted`);
}

describe('fuzz', () => {
  test('every management action, seeded random parameters on a running server: no 5xx, the envelope, no server made or lost', async (t) => {
    await clearFaults();
    ok(await c.act('eula_accept'));
    ok(await c.act('power', { signal: 'start' }), 202);
    await waitFor('running', async () => (await c.read('resources')).json().resources?.state === 'running', WAIT);

    const actions = PRODUCTS.game.actions.filter((a) => sessionRoutes(a).includes('panel'));
    assert.ok(actions.length >= 40, `${actions.length} actions`);
    const servers = ptero().state.servers.size;
    const ours = panelServer(u, c.serviceId).id;
    const codes = new Map<string, number>();
    for (const [i, action] of actions.entries()) {
      const inputs = fc.sample(inputFor(action.params), { seed: FUZZ_SEED + i, numRuns: FUZZ_RUNS });
      for (const input of inputs) {
        const res = await send(action, input);
        const shown = JSON.stringify(input).slice(0, 300);
        sane(res, `${action.method} ${action.name} ${shown}`);
        const key = `${res.statusCode} ${res.json().code ?? 'ok'}`;
        codes.set(key, (codes.get(key) ?? 0) + 1);
      }
    }

    // Uploads: multipart with names and folders that try to leave the server.
    const upload = actions.find((a) => a.name === 'file_upload');
    assert.ok(upload);
    const names = fc.sample(
      fc.tuple(
        fc.constantFrom(...NASTY_STRINGS.filter((s) => s.length < 400), 'ok.txt'),
        fc.constantFrom('/', '..', 'a/../..', '%2e%2e', 'sub\u0000dir', 'plugins'),
      ),
      {
        seed: FUZZ_SEED,
        numRuns: FUZZ_RUNS,
      },
    );
    for (const [filename, directory] of names) {
      const form = multipart({ csrf_token: c.browser.csrfToken ?? '', directory }, [
        { field: 'file', filename, contentType: 'application/octet-stream', data: Buffer.from('fuzz') },
      ]);
      const res = await u.t.inject({
        method: 'POST',
        url: `${GAME}?service=${c.serviceId}&action=file_upload`,
        headers: {
          'content-type': form.contentType,
          'x-csrf-token': c.browser.csrfToken ?? '',
          cookie: [...c.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        },
        remoteAddress: c.browser.ip,
        payload: form.body,
      });
      sane(res, `file_upload ${JSON.stringify([filename.slice(0, 40), directory])}`);
    }

    assert.equal(ptero().state.servers.size, servers, 'no server made or lost on the panel');
    assert.ok(ptero().state.servers.has(ours), 'the server is still there');
    const service = await db()
      .selectFrom('services')
      .select('status')
      .where('id', '=', c.serviceId)
      .executeTakeFirstOrThrow();
    assert.ok(['active'].includes(service.status), service.status);
    t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries([...codes].sort()))}`);
    // The fuzz got past the parameter checks to the panel too.
    assert.ok(
      [...codes.keys()].some((k) => k.startsWith('2')),
      JSON.stringify(Object.fromEntries(codes)),
    );
  });
});
