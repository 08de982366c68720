// The second token surface's instance list and detail (issue 16 follow-ups, CONTRACT §9): they
// cover what the surface deploys only (KVM = plan type vps, and bare metal; a game or web id
// answers exactly like a missing one, paging and totals counted in the query), and their power
// and utilisation come from one cached listing per node (core/product-kit/live.ts nodeProbes): no
// live read per instance, nothing taken from the per-account live-read allowance, one probe per
// node however many lists ask, an older answer served with its time when the node is slow, null
// utilisation with a reason when it is not known. And the session surface's management route
// answers an action a product lists as unsupported with 422 not_supported.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fastJsonStringify from 'fast-json-stringify';
import { type TSchema, Type } from 'typebox';
import type { Service } from '../src/db/tables.ts';
import { PaginationSchema as ClientPaginationSchema } from '../src/http/client/context.ts';
import { okSchema as clientOkSchema } from '../src/http/client/envelopes.ts';
import { InstanceSchema } from '../src/http/cloud/views.ts';
import { serializationSchema } from '../src/http/plugins/serializer.ts';
import { okSchema, PaginationSchema } from '../src/http/rest/envelopes.ts';
import { ServiceSchema } from '../src/http/views/service.view.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { ManualClock } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const CLOUD = '/cloud/v1';
const MISSING = 987_654;

let u: UpstreamApp;
const clock = new ManualClock();
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let api: ApiClient;
let kvmId: number;
let metalId: number;
let gameId: number;
let webId: number;

/** A service of the owner of `type` on a plan of that type (no machine: lists never ask a node for it). */
async function row(type: Service['type'], label: string): Promise<number> {
  const db = u.t.deps.database.db;
  const kvm = await db.selectFrom('services').selectAll().where('id', '=', kvmId).executeTakeFirstOrThrow();
  const plan = await db.selectFrom('plans').select('id').where('type', '=', type).executeTakeFirst();
  const inserted = await db
    .insertInto('services')
    .values({
      account_id: kvm.account_id,
      plan_id: plan?.id ?? kvm.plan_id,
      order_id: null,
      type,
      label,
      status: 'active',
      location_id: kvm.location_id,
      node_id: null,
      price_paise: kvm.price_paise,
      config: JSON.stringify({}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

async function settled(jobId: number): Promise<string> {
  return waitFor(`job ${jobId}`, async () => {
    const job = (await api.call('GET', `${CLOUD}/jobs/${jobId}`)).json().job;
    return job.status === 'succeeded' || job.status === 'failed' ? job.status : null;
  });
}

const listings = () => u.pve.calls.get('GET /nodes/:/qemu') ?? 0;
const statusReads = () => u.pve.calls.get('GET /nodes/:/qemu/:/status/current') ?? 0;
const list = async (query = '') => {
  const res = await api.call('GET', `${CLOUD}/instances${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    instances: {
      id: number;
      type: string;
      power: string | null;
      utilisation: {
        cpu: number | null;
        cpus: number;
        memory_used_bytes: number | null;
        memory_total_bytes: number;
      } | null;
      utilisation_reason: string | null;
      live_as_of: string | null;
    }[];
    pagination: { page: number; per_page: number; total: number };
  };
};
const kvmOf = async () => (await list()).instances.find((i) => i.id === kvmId);
const sameAs = (body: string) => {
  const { request_id: _id, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
};

before(async () => {
  u = await createUpstreamApp({ overrides: { clock: clock.now } });
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '3000', 'test float');
  api = await apiClient(u.t, ['*'], '0', owner.account.id);
  const deploy = await api.call('POST', `${CLOUD}/instances`, {
    type: 'kvm',
    plan: 'vps-1c-1g',
    region: 'mum1',
    image: 'debian-12',
    hostname: 'lists1.example.in',
    idempotency_key: 'lists-1',
  });
  assert.equal(deploy.statusCode, 201, deploy.body);
  kvmId = deploy.json().instance.id;
  assert.equal(await settled(deploy.json().job.id), 'succeeded');
  metalId = await row('baremetal', 'metal1');
  gameId = await row('game', 'game1');
  webId = await row('web', 'site1');
});
after(() => u.close());

describe('what the surface lists', () => {
  test('KVM and bare metal only; paging and totals count them only; /api/v1 still lists everything', async () => {
    const all = await list();
    assert.deepEqual(
      all.instances.map((i) => [i.id, i.type]),
      [
        [metalId, 'baremetal'],
        [kvmId, 'kvm'],
      ],
    );
    assert.equal(all.pagination.total, 2);
    const first = await list('?per_page=1&page=1');
    const second = await list('?per_page=1&page=2');
    const past = await list('?per_page=1&page=3');
    assert.deepEqual(
      [...first.instances, ...second.instances].map((i) => i.id),
      [metalId, kvmId],
    );
    assert.deepEqual(
      [first.pagination.total, second.pagination.total, past.pagination.total],
      [2, 2, 2],
      'past the last page the total is still counted by type',
    );
    assert.deepEqual(past.instances, []);
    const everything = (await api.call('GET', '/api/v1/instances')).json();
    assert.equal(everything.pagination.total, 4);
    assert.deepEqual(
      everything.instances.map((i: { id: number }) => i.id),
      [webId, gameId, metalId, kvmId],
    );
  });

  test('a game or web id answers exactly like a missing id on every instance route, and nothing changes', async () => {
    const calls: [string, string, unknown][] = [
      ['GET', '', undefined],
      ['POST', '/power', { action: 'reboot' }],
      ['GET', '/snapshots', undefined],
      ['POST', '/snapshots', { action: 'create', name: 'x1' }],
      ['DELETE', '/snapshots/x1', undefined],
      ['DELETE', '', { confirm: 'game1' }],
    ];
    for (const [method, path, body] of calls) {
      const missing = await api.call(method, `${CLOUD}/instances/${MISSING}${path}`, body);
      assert.equal(missing.statusCode, 404, `${method} ${path}: ${missing.body}`);
      for (const id of [gameId, webId]) {
        const before = await fingerprint(u.t);
        const res = await api.call(method, `${CLOUD}/instances/${id}${path}`, body);
        assert.equal(res.statusCode, 404, `${method} ${path} on ${id}: ${res.body}`);
        assert.deepEqual(sameAs(res.body), sameAs(missing.body), `${method} ${path}`);
        assert.deepEqual(await fingerprint(u.t), before, `${method} ${path} changed something`);
      }
    }
    for (const id of [kvmId, metalId]) {
      const one = await api.call('GET', `${CLOUD}/instances/${id}`);
      assert.equal(one.statusCode, 200, one.body);
      assert.equal(one.json().instance.id, id);
    }
  });

  test('GET /jobs/{id}: a job of a game or web service answers exactly like a missing one', async () => {
    const db = u.t.deps.database.db;
    const jobOf = async (serviceId: number) => {
      const row = await db
        .insertInto('jobs')
        .values({
          account_id: owner.account.id,
          service_id: serviceId,
          type: 'power',
          params: JSON.stringify({ signal: 'restart' }),
          status: 'succeeded',
          progress: 100,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    const [gameJob, webJob, metalJob] = [await jobOf(gameId), await jobOf(webId), await jobOf(metalId)];
    const missing = await api.call('GET', `${CLOUD}/jobs/${MISSING}`);
    assert.equal(missing.statusCode, 404, missing.body);
    for (const id of [gameJob, webJob]) {
      const res = await api.call('GET', `${CLOUD}/jobs/${id}`);
      assert.equal(res.statusCode, 404, res.body);
      assert.deepEqual(sameAs(res.body), sameAs(missing.body));
      // The first surface sees every service, and so every job.
      const everywhere = await api.call('GET', `/api/v1/jobs/${id}`);
      assert.equal(everywhere.statusCode, 200, everywhere.body);
      assert.equal(everywhere.json().job.id, id);
    }
    const kvmJob = await db
      .selectFrom('jobs')
      .select('id')
      .where('service_id', '=', kvmId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    for (const [id, serviceId] of [
      [kvmJob.id, kvmId],
      [metalJob, metalId],
    ]) {
      const res = await api.call('GET', `${CLOUD}/jobs/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().job.resource, { type: 'service', id: serviceId });
    }
  });
});

describe('utilisation', () => {
  test('from the node listing: cpu and memory of the running VM; bare metal null, not_reported', async () => {
    clock.advance(4); // past whatever the deploy left cached
    const { instances } = await list();
    const kvm = instances.find((i) => i.id === kvmId);
    assert.equal(kvm?.power, 'running');
    assert.ok(kvm?.utilisation, JSON.stringify(kvm));
    assert.ok(kvm.utilisation.cpu !== null && kvm.utilisation.cpu >= 0 && kvm.utilisation.cpu <= 1);
    assert.equal(kvm.utilisation.cpus, 1);
    assert.equal(kvm.utilisation.memory_total_bytes, 1024 * 1024 * 1024);
    assert.ok((kvm.utilisation.memory_used_bytes ?? 0) > 0);
    assert.equal(kvm.utilisation_reason, null);
    assert.ok(kvm.live_as_of && Math.abs(Date.parse(kvm.live_as_of) - clock.now().getTime()) < 60_000);
    assert.match(kvm.live_as_of, /\+00:00$/, 'times as everywhere else (CONTRACT §3)');
    const metal = instances.find((i) => i.id === metalId);
    assert.equal(metal?.utilisation, null);
    assert.equal(metal?.utilisation_reason, 'not_reported');
    const detail = (await api.call('GET', `${CLOUD}/instances/${kvmId}`)).json().instance;
    assert.deepEqual(detail.utilisation, kvm.utilisation, 'the detail reads the same cached listing');
  });

  test('a list is one request: no live read per instance, and the live-read allowance is untouched', async () => {
    const reads = statusReads();
    // More lists than the allowance of live reads (60 a minute per account) holds.
    for (let i = 0; i < 61; i++) assert.ok((await kvmOf())?.utilisation);
    assert.equal(statusReads(), reads, 'no status/current per instance');
    const stats = await api.call('GET', `/api/v1/instances/${kvmId}/stats`);
    assert.equal(stats.statusCode, 200, `the allowance is still there: ${stats.body}`);
  });

  test('one probe per node however many lists ask; a fresh answer is never probed again', async () => {
    clock.advance(4);
    const asked = listings();
    const answers = await Promise.all(Array.from({ length: 20 }, () => list()));
    assert.equal(listings() - asked, 1, 'twenty concurrent lists, one listing asked of the node');
    assert.ok(answers.every((a) => a.instances.find((i) => i.id === kvmId)?.utilisation));
    await list();
    await api.call('GET', `${CLOUD}/instances/${kvmId}`);
    assert.equal(listings() - asked, 1, 'a fresh answer is served as it is');
  });

  test('a slow node: the last answer with its time; too old, or a node that refuses: null, node_unreachable', async () => {
    clock.advance(4);
    // A slow probe (a loaded machine) answers the first reader with the previous answer after
    // 250 ms: read until the answer is the one probed now.
    const probedFrom = clock.now().getTime();
    const fresh = await waitFor('a fresh answer', async () => {
      const instance = await kvmOf();
      return instance?.utilisation && Date.parse(instance.live_as_of ?? '') >= probedFrom ? instance : null;
    });
    assert.ok(fresh?.utilisation && fresh.live_as_of);
    await u.pve.setFaults({ hang: true });
    try {
      clock.advance(10);
      const stale = await kvmOf();
      assert.equal(stale?.power, 'running');
      assert.deepEqual(stale?.utilisation, fresh.utilisation, 'the last answer');
      assert.equal(stale?.live_as_of, fresh.live_as_of, 'with its time');
      assert.ok(clock.now().getTime() - Date.parse(stale?.live_as_of ?? '') >= 10_000);
      assert.deepEqual(
        (await kvmOf())?.utilisation,
        fresh.utilisation,
        'again, while the probe is under way or failed',
      );
      clock.advance(61); // older than anything served
      const blind = await kvmOf();
      assert.equal(blind?.power, 'unknown');
      assert.equal(blind?.utilisation, null);
      assert.equal(blind?.utilisation_reason, 'node_unreachable');
    } finally {
      await u.pve.setFaults({ hang: false });
    }
    clock.advance(4);
    assert.ok((await kvmOf())?.utilisation, 'back once the node answers');
    await u.pve.setFaults({ down: true });
    try {
      clock.advance(4);
      const down = await kvmOf();
      assert.equal(down?.power, 'unknown', 'a node that resets is not vouched for by its old answer');
      assert.equal(down?.utilisation_reason, 'node_unreachable');
    } finally {
      await u.pve.setFaults({ down: false });
    }
    clock.advance(4);
    assert.ok((await kvmOf())?.utilisation);
  });

  test('a stopped instance: power stopped, utilisation null, not_running — at once after the job', async () => {
    const off = await api.call('POST', `${CLOUD}/instances/${kvmId}/power`, { action: 'shutdown' });
    assert.equal(off.statusCode, 202, off.body);
    assert.equal(await settled(off.json().job.id), 'succeeded');
    const stopped = await kvmOf();
    assert.equal(stopped?.power, 'stopped');
    assert.equal(stopped?.utilisation, null);
    assert.equal(stopped?.utilisation_reason, 'not_running');
    const on = await api.call('POST', `${CLOUD}/instances/${kvmId}/power`, { action: 'power_cycle' });
    assert.equal(await settled(on.json().job.id), 'succeeded');
    assert.equal((await kvmOf())?.power, 'running');
  });
});

describe('the lists as bytes (http/list-body.ts)', () => {
  const envelope = (item: TSchema, session: boolean, field: string) =>
    fastJsonStringify(
      serializationSchema(
        (session ? clientOkSchema : okSchema)({
          [field]: Type.Array(item),
          pagination: session ? ClientPaginationSchema : PaginationSchema,
        }),
      ) as Parameters<typeof fastJsonStringify>[0],
    );
  const routes = [
    { path: `${CLOUD}/instances`, field: 'instances', item: InstanceSchema, session: false },
    { path: '/api/v1/instances', field: 'instances', item: ServiceSchema, session: false },
    { path: '/api/v1/client/services/', field: 'services', item: ServiceSchema, session: true },
  ];
  const get = (route: (typeof routes)[number], who = owner, client = api) =>
    route.session ? who.browser.get(route.path) : client.call('GET', route.path);

  test('each list is exactly what its schema writes; the same bytes while nothing changed; a change shows at once; another caller gets its own', async () => {
    clock.advance(4);
    const other = await signedInBrowser(u.t, freshIp());
    const otherApi = await apiClient(u.t, ['*'], '0', other.account.id);
    for (const route of routes) {
      const first = await get(route);
      assert.equal(first.statusCode, 200, first.body);
      assert.match(String(first.headers['content-type']), /^application\/json; charset=utf-8/);
      const parsed = JSON.parse(first.body) as Record<string, unknown>;
      assert.deepEqual(JSON.parse(envelope(route.item, route.session, route.field)(parsed)), parsed, route.path);
      assert.equal((await get(route)).body, first.body, `${route.path}: unchanged`);
      const theirs = JSON.parse((await get(route, other, otherApi)).body) as Record<string, unknown[]>;
      assert.deepEqual(theirs[route.field], [], `${route.path}: another account lists nothing of this one`);
    }
    const db = u.t.deps.database.db;
    await db.updateTable('services').set({ label: 'renamed-now' }).where('id', '=', kvmId).execute();
    try {
      for (const route of routes) {
        const items = JSON.parse((await get(route)).body)[route.field] as { id: number; label: string }[];
        assert.equal(items.find((i) => i.id === kvmId)?.label, 'renamed-now', `${route.path}: the new label at once`);
      }
    } finally {
      await db.updateTable('services').set({ label: 'lists1' }).where('id', '=', kvmId).execute();
    }
  });
});

describe('the session surface management route', () => {
  test('an action the product lists as unsupported is 422 not_supported (bare metal: VPS snapshots)', async () => {
    const read = await owner.browser.get(`/api/v1/client/vps/?service=${metalId}&action=snapshots`);
    assert.equal(read.statusCode, 422, read.body);
    assert.equal(read.json().code, 'not_supported');
    const jobs = await u.t.deps.database.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const change = await owner.browser.post(
      `/api/v1/client/vps/?service=${metalId}&action=snapshot_create`,
      { name: 'x1' },
      { csrf: true },
    );
    assert.equal(change.statusCode, 422, change.body);
    assert.equal(change.json().code, 'not_supported');
    const after = await u.t.deps.database.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(after.n, jobs.n);
    // Any other type on the VPS route is the same one code (issue 32: 422 not_supported everywhere).
    const game = await owner.browser.get(`/api/v1/client/vps/?service=${gameId}&action=snapshots`);
    assert.equal(game.statusCode, 422, game.body);
    assert.equal(game.json().code, 'not_supported');
  });
});
