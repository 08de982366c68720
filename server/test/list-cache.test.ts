// The read caches of the hot paths (issue 18): instance lists and sessions are served from memory
// until what they show changes. Each way a change can come is checked through the HTTP surfaces:
// this process's own writes (seen at commit, before the caller goes on), a transaction that
// commits while a list is being read, a rollback, writes that bypass this process's driver (the
// database's triggers; on PostgreSQL another connection, as another process would be), the
// catalog, and sessions ended or suspended. Also the pieces: which statements write which
// tables, and the serializer's schema simplification.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fastJsonStringify from 'fast-json-stringify';
import pg from 'pg';
import type { Bus, BusMessage } from '../src/core/bus.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { createReadCache } from '../src/core/services/list-cache.ts';
import { type WriteListener, type WriteObserver, writtenTables } from '../src/db/observed.ts';
import { serializationSchema } from '../src/http/plugins/serializer.ts';
import { signedInBrowser } from './support/factories.ts';
import { createTestApp, onPostgres, type TestApp } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { waitFor } from './support/wait.ts';

let t: TestApp;
let api: ApiClient;
let other: ApiClient;

async function addService(accountId: number, label: string): Promise<number> {
  const db = t.deps.database.db;
  const plan = await db
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const location = await db.selectFrom('locations').select('id').where('code', '=', 'mum1').executeTakeFirstOrThrow();
  const row = await db
    .insertInto('services')
    .values({
      account_id: accountId,
      plan_id: plan.id,
      type: 'vps',
      label,
      status: 'active',
      location_id: location.id,
      node_id: null,
      price_paise: plan.price_paise,
      config: JSON.stringify({ hostname: `${label}.example.in`, os: 'ubuntu-24.04' }),
      external: JSON.stringify({}),
      period_end: new Date(Date.now() + 30 * 86_400_000),
      activated_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function labels(client: ApiClient, path = '/api/v1/instances'): Promise<string[]> {
  const res = await client.call('GET', path);
  assert.equal(res.statusCode, 200, res.body);
  return (res.json().instances as { label: string }[]).map((i) => i.label).sort();
}

/** A statement run outside this process's Kysely driver, as another process (or psql) would. */
async function foreignWrite(statement: string, params: unknown[]): Promise<void> {
  const database = t.deps.database;
  if (database.engine === 'pglite') {
    await database.pglite.query(statement, params);
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(statement, params);
  } finally {
    await client.end();
  }
}

before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
  api = await apiClient(t, ['read']);
  other = await apiClient(t, ['read']);
});
after(() => t.close());

describe('which tables a statement writes', () => {
  const cases: [string, string[] | null][] = [
    ['select * from "services" where "id" = $1', null],
    ['select * from services for update', null],
    ['insert into "services" ("label") values ($1) returning *', ['services']],
    ['update "services" set "label" = $1 where "id" = $2', ['services']],
    ['UPDATE api_tokens t SET last_used_at = v.at FROM (values (1)) v(id)', ['api_tokens']],
    ['delete from "sessions" where "id_hash" = $1', ['sessions']],
    ['with x as (update orders set status = $1 returning id) select * from x', ['orders']],
    ['insert into api_request_log (token_id) select u.* from unnest($1::int[]) as u', ['api_request_log']],
    ['truncate table nodes', ['nodes']],
    ['delete from only ipv4_addresses', ['ipv4_addresses']],
  ];
  for (const [statement, expected] of cases) {
    test(statement, () => {
      const found = writtenTables(statement);
      assert.deepEqual(found === null ? null : [...found].sort(), expected);
    });
  }
});

describe('the serializer schema', () => {
  test('a union of scalars (and at most one object or array) becomes a type list; literal values are kept', () => {
    const schema = {
      type: 'object',
      properties: {
        at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }], description: 'when' },
        n: { anyOf: [{ type: 'integer' }, { type: 'number' }] },
        state: {
          anyOf: [
            { const: 'a', type: 'string' },
            { const: 'b', type: 'string' },
          ],
        },
        either: { anyOf: [{ type: 'object', properties: { x: { type: 'string' } } }, { type: 'null' }] },
        two: { anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'string' } }] },
        fixed: { type: 'string', enum: ['x', 'y'], default: 'x' },
      },
    };
    const out = serializationSchema(schema) as { properties: Record<string, Record<string, unknown>> };
    assert.deepEqual(out.properties.at, { type: ['string', 'null'], description: 'when' });
    assert.deepEqual(out.properties.n, { type: ['number'] });
    assert.deepEqual(out.properties.state, { type: ['string'] });
    assert.deepEqual(out.properties.either, { type: ['null', 'object'], properties: { x: { type: 'string' } } });
    assert.ok(Array.isArray(out.properties.two?.anyOf), 'two structured branches are left to the validator');
    assert.deepEqual(out.properties.fixed, schema.properties.fixed);
    assert.ok(Array.isArray((schema.properties.at as { anyOf?: unknown }).anyOf), 'the route schema is not changed');
  });

  test('a union of objects whose shared properties agree is one object of them all; one that disagrees is left', () => {
    const ok = { type: 'boolean' };
    const merged = serializationSchema({
      anyOf: [
        {
          type: 'object',
          properties: { ok, list: { type: 'array', items: { type: 'string' } } },
          required: ['ok', 'list'],
        },
        { type: 'object', properties: { ok, item: { type: 'string', format: 'date-time' } }, required: ['ok'] },
      ],
    });
    assert.deepEqual(merged, {
      type: 'object',
      properties: {
        ok,
        list: { type: 'array', items: { type: 'string' } },
        item: { type: 'string', format: 'date-time' },
      },
      required: ['ok'],
    });
    const clash = serializationSchema({
      anyOf: [
        { type: 'object', properties: { v: { type: 'string' } } },
        { type: 'object', properties: { v: { type: 'integer' } } },
      ],
    }) as { anyOf?: unknown };
    assert.ok(Array.isArray(clash.anyOf), 'the same name with two schemas is left to the validator');
    // Written through fast-json-stringify, each shape comes out as its own branch writes it.
    const write = fastJsonStringify(merged as Parameters<typeof fastJsonStringify>[0]);
    assert.equal(write({ ok: true, list: ['a'] }), '{"ok":true,"list":["a"]}');
    assert.equal(
      write({ ok: true, item: '2026-11-26T10:00:00+05:30' }),
      '{"ok":true,"item":"2026-11-26T10:00:00+05:30"}',
    );
  });
});

describe('instance lists', () => {
  test("this process's write is seen by the next list at once, on every surface", async () => {
    const id = await addService(api.accountId, 'alpha');
    assert.deepEqual(await labels(api), ['alpha']);
    assert.deepEqual(await labels(api, '/cloud/v1/instances'), ['alpha']);
    await t.deps.database.db.updateTable('services').set({ label: 'alpha2' }).where('id', '=', id).execute();
    assert.deepEqual(await labels(api), ['alpha2']);
    assert.deepEqual(await labels(api, '/cloud/v1/instances'), ['alpha2']);
    await addService(api.accountId, 'beta');
    assert.deepEqual(await labels(api), ['alpha2', 'beta']);
    assert.deepEqual(await labels(other), [], "another account's list never shows them");
  });

  test('a transaction: its writes show after COMMIT returns, never from a read made before; a rollback changes nothing', async () => {
    const id = await addService(api.accountId, 'gamma');
    assert.ok((await labels(api)).includes('gamma'));
    if (onPostgres) {
      // A list read while the transaction is open sees (and may keep) the old rows.
      await t.deps.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('services').set({ label: 'gamma2' }).where('id', '=', id).execute();
        assert.ok((await labels(api)).includes('gamma'));
      });
      assert.ok((await labels(api)).includes('gamma2'), 'committed: the next list shows it');
    } else {
      await t.deps.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('services').set({ label: 'gamma2' }).where('id', '=', id).execute();
      });
      assert.ok((await labels(api)).includes('gamma2'));
    }
    await assert.rejects(
      t.deps.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('services').set({ label: 'never' }).where('id', '=', id).execute();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.ok((await labels(api)).includes('gamma2'));
  });

  test('a write from outside this process reaches the list through the database trigger', async () => {
    const id = await addService(api.accountId, 'delta');
    assert.ok((await labels(api)).includes('delta'));
    await foreignWrite('update services set label = $1 where id = $2', ['delta2', id]);
    await waitFor('the list to show the foreign write', async () => (await labels(api)).includes('delta2'));
    // An address assigned elsewhere, and an unpaid renewal: both shown in the list.
    await foreignWrite(
      `insert into ipv4_addresses (location_id, address, prefix, gateway, status, service_id, allocated_at)
         select location_id, '10.99.0.7', 24, '10.99.0.1', 'allocated', id, now() from services where id = $1`,
      [id],
    );
    await waitFor('the address', async () => {
      const res = await api.call('GET', '/api/v1/instances');
      return (
        (res.json().instances as { id: number; ipv4: string | null }[]).find((i) => i.id === id)?.ipv4 === '10.99.0.7'
      );
    });
  });

  test('a plan renamed from outside shows in every list (catalog notice)', async () => {
    await addService(api.accountId, 'epsilon');
    const plan = await t.deps.database.db
      .selectFrom('plans')
      .select(['id', 'name'])
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const browser = (await signedInBrowser(t)).browser;
    assert.equal((await browser.get('/api/v1/client/services/')).statusCode, 200);
    assert.ok((await api.call('GET', '/api/v1/instances')).body.includes(`"${plan.name}"`));
    await foreignWrite('update plans set name = $1 where id = $2', ['Renamed for the cache test', plan.id]);
    await waitFor('the new plan name', async () =>
      (await api.call('GET', '/api/v1/instances')).body.includes('"Renamed for the cache test"'),
    );
    await foreignWrite('update plans set name = $1 where id = $2', [plan.name, plan.id]);
    await waitFor('the old plan name', async () =>
      (await api.call('GET', '/api/v1/instances')).body.includes(`"${plan.name}"`),
    );
  });

  test('/plans: an aged copy is refreshed once however many ask; a catalog change shows at once', async () => {
    const plans = async () => {
      const res = await api.call('GET', '/api/v1/plans');
      assert.equal(res.statusCode, 200, res.body);
      return res.json().plans as { id: number; name: string }[];
    };
    const before = await plans();
    const catalog = t.deps.catalog.catalog;
    let computed = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    t.deps.catalog.catalog = async () => {
      computed++;
      await gate;
      return catalog();
    };
    try {
      // Past the copy's five seconds (PLANS_FRESH_MS): the next requests find it aged.
      await new Promise((r) => setTimeout(r, 5_200));
      // Fifty at once while the one refresh is held: each is answered from the aged copy. (The
      // hold ends after a second in any case, so a route that made every request wait for a
      // refresh of its own fails on the count below rather than hanging.)
      const held = setTimeout(release, 1_000);
      const answers = await Promise.all(Array.from({ length: 50 }, () => plans()));
      for (const answer of answers) assert.deepEqual(answer, before);
      assert.equal(computed, 1, 'one refresh for fifty requests');
      clearTimeout(held);
      release();
      // A change through the bus drops the copy: the next requests wait for one refresh that sees it.
      const plan = before[0] as { id: number; name: string };
      await foreignWrite('update plans set name = $1 where id = $2', ['Renamed for /plans', plan.id]);
      await waitFor('the renamed plan in /plans', async () =>
        (await plans()).some((p) => p.name === 'Renamed for /plans'),
      );
      computed = 0;
      await foreignWrite('update plans set name = $1 where id = $2', [plan.name, plan.id]);
      await waitFor('the old name in /plans', async () => (await plans()).some((p) => p.name === plan.name));
      const again = await Promise.all(Array.from({ length: 20 }, () => plans()));
      for (const answer of again) assert.deepEqual(answer, before);
      assert.ok(computed <= 2, `refreshes after the change: ${computed}`);
    } finally {
      release();
      t.deps.catalog.catalog = catalog;
    }
  });

  test('the triggers send what the caches listen for', async () => {
    const seen: BusMessage[] = [];
    t.deps.bus.subscribe((m) => seen.push(m));
    const id = await addService(other.accountId, 'zeta');
    await foreignWrite('update services set label = $1 where id = $2', ['zeta2', id]);
    await foreignWrite('update nodes set name = name where false', []);
    await foreignWrite('update sessions set expires_at = expires_at where false', []);
    await waitFor(
      'notices',
      async () =>
        seen.some((m) => m.topic === 'account_services' && m.id === other.accountId) &&
        seen.some((m) => m.topic === 'nodes') &&
        seen.some((m) => m.topic === 'sessions'),
    );
  });
});

describe('sessions', () => {
  test('logout, a session deleted elsewhere and a suspension end the cached session at once', async () => {
    const a = await signedInBrowser(t);
    assert.equal((await a.browser.get('/api/v1/client/services/')).statusCode, 200);
    assert.equal((await a.browser.get('/api/v1/client/services/')).statusCode, 200);
    const out = await a.browser.post('/api/v1/client/auth/logout/', undefined, { csrf: true });
    assert.ok(out.statusCode < 300, out.body);
    assert.equal((await a.browser.get('/api/v1/client/services/')).statusCode, 401);

    const b = await signedInBrowser(t);
    assert.equal((await b.browser.get('/api/v1/client/services/')).statusCode, 200);
    await foreignWrite('delete from sessions where account_id = $1', [b.account.id]);
    await waitFor(
      'the deleted session to be refused',
      async () => (await b.browser.get('/api/v1/client/services/')).statusCode === 401,
    );

    const c = await signedInBrowser(t);
    assert.equal((await c.browser.get('/api/v1/client/services/')).statusCode, 200);
    await t.deps.database.db
      .updateTable('accounts')
      .set({ suspended_at: new Date() })
      .where('id', '=', c.account.id)
      .execute();
    assert.equal((await c.browser.get('/api/v1/client/services/')).statusCode, 401);
  });
});

describe('the request log without foreign keys (migration 0016)', () => {
  test("a deleted token's log rows go with it; a batch leaves out rows of a token gone", async () => {
    const db = t.deps.database.db;
    const client = await apiClient(t, ['read']);
    const second = await t.deps.tokens.create(client.accountId, { name: 'second', scopes: ['read'] });
    const callWith = (secret: string) =>
      t.inject({ method: 'GET', url: '/api/v1/plans', headers: { authorization: `Bearer ${secret}` } });
    assert.equal((await client.call('GET', '/api/v1/plans')).statusCode, 200);
    assert.equal((await callWith(second.secret)).statusCode, 200);
    await t.deps.requestLog.flush();
    const rowsOf = async (column: 'token_id' | 'account_id', id: number) =>
      Number(
        (
          await db
            .selectFrom('api_request_log')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where(column, '=', id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const secondId = (
      await db
        .selectFrom('api_tokens')
        .select('id')
        .where('name', '=', 'second')
        .where('account_id', '=', client.accountId)
        .executeTakeFirstOrThrow()
    ).id;
    assert.equal(await rowsOf('token_id', secondId), 1);
    assert.equal(await rowsOf('account_id', client.accountId), 2);

    // A call logged, then its token deleted before the batch is written: the row is left out, and
    // the batch's other rows are written.
    assert.equal((await callWith(second.secret)).statusCode, 200);
    assert.equal((await client.call('GET', '/api/v1/plans')).statusCode, 200);
    await db.deleteFrom('api_tokens').where('id', '=', secondId).execute();
    await t.deps.requestLog.flush();
    assert.equal(await rowsOf('token_id', secondId), 0, 'deleting the token deleted its rows, and none came after');
    assert.equal(await rowsOf('account_id', client.accountId), 2);

    await db.deleteFrom('api_tokens').where('account_id', '=', client.accountId).execute();
    assert.equal(await rowsOf('account_id', client.accountId), 0);
  });
});

describe('the read cache (core/services/list-cache.ts)', () => {
  test('misses together share one read; a read begun before a drop is not joined after it', async () => {
    const onWrites: WriteListener[] = [];
    const cache = createReadCache<number>({
      bus: { subscribe: () => {} } as unknown as Bus,
      writes: {
        subscribe: (handler: WriteListener) => onWrites.push(handler),
      } as unknown as WriteObserver,
      tables: ['services'],
      sharedTopics: [],
    });
    let loads = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const load = async () => {
      const n = ++loads;
      await gate;
      return n;
    };
    const together = Promise.all([
      cache.read(1, 'page', load),
      cache.read(1, 'page', load),
      cache.read(1, 'page', load),
    ]);
    assert.equal(loads, 1, 'three misses of one account and key: one read');
    const otherKey = cache.read(1, 'other', load);
    const otherAccount = cache.read(2, 'page', load);
    assert.equal(loads, 3, 'another key and another account read for themselves');
    // A write this process committed: a request after it must not get rows read before it.
    for (const handler of onWrites) handler(new Set(['services']));
    const afterDrop = cache.read(1, 'page', load);
    assert.equal(loads, 4, 'a request after the drop reads again');
    release();
    assert.deepEqual(await together, [1, 1, 1]);
    assert.equal(await otherKey, 2);
    assert.equal(await otherAccount, 3);
    assert.equal(await afterDrop, 4);
    // The read after the drop was stored; the one before it was not.
    assert.equal(await cache.read(1, 'page', load), 4);
    assert.equal(loads, 4);
  });
});
