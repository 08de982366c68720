// The second token surface, {ALT_BASE_PATH}/v1/ (spec 4.12, CONTRACT §9), against an emulated
// Proxmox node: its scope matrix read from the OpenAPI document, SSH keys (by id and inline)
// reaching cloud-init, KVM deploys (idempotent, 402, type and image checks), the list with live
// utilisation, power, snapshots (limit, restore rolling the disk back and restarting the VM),
// ownership (another account's instance, snapshot or key answers exactly like a missing one)
// and the request log.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import sshpk from 'sshpk';
import { runAdmin } from '../src/admin/run.ts';
import * as m0014 from '../src/db/migrations/0014_snapshot_jobs.ts';
import { fingerprint } from './support/db.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const CLOUD = '/cloud/v1';
const MISSING = 987_654;

let u: UpstreamApp;
let owner: ApiClient;
let intruder: ApiClient;
let instanceId: number;
let vmid: number;
let keyId: number;
let keyLine: string;
let inlineLine: string;

function ed25519(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'pem');
  key.comment = comment;
  return key.toString('ssh');
}

async function settled(client: ApiClient, jobId: number): Promise<{ status: string; error: unknown }> {
  return waitFor(`job ${jobId}`, async () => {
    const job = (await client.call('GET', `${CLOUD}/jobs/${jobId}`)).json().job;
    return job.status === 'succeeded' || job.status === 'failed' ? job : null;
  });
}

/** Body without its request id: what "answers exactly like" compares. */
const sameAs = (body: string) => {
  const { request_id: _id, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return rest;
};

before(async () => {
  u = await createUpstreamApp();
  owner = await apiClient(u.t, ['*']);
  intruder = await apiClient(u.t, ['*']);
  keyLine = ed25519('asha@laptop');
  inlineLine = ed25519('ci@build');
  const key = await owner.call('POST', `${CLOUD}/ssh-keys`, { name: 'laptop', public_key: keyLine });
  assert.equal(key.statusCode, 201, key.body);
  keyId = key.json().ssh_key.id;
  const deploy = await owner.call('POST', `${CLOUD}/instances`, {
    type: 'kvm',
    plan: 'vps-1c-1g',
    region: 'mum1',
    image: 'debian-12',
    hostname: 'web1.example.in',
    ssh_key_ids: [keyId],
    ssh_keys: [inlineLine],
    idempotency_key: 'cloud-1',
  });
  assert.equal(deploy.statusCode, 201, deploy.body);
  instanceId = deploy.json().instance.id;
  assert.equal((await settled(owner, deploy.json().job.id)).status, 'succeeded');
  const service = await u.t.deps.database.db
    .selectFrom('services')
    .select('external')
    .where('id', '=', instanceId)
    .executeTakeFirstOrThrow();
  vmid = (service.external as { vmid: number }).vmid;
});
after(() => u.close());

describe('the surface', () => {
  test('the OpenAPI document lists every route of the surface with its scope', async () => {
    const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const listed = Object.entries(doc.paths as Record<string, Record<string, { 'x-required-scope'?: string }>>)
      .filter(([path]) => path.startsWith(`${CLOUD}/`))
      .flatMap(([path, ops]) =>
        Object.entries(ops).map(([m, op]) => `${m.toUpperCase()} ${path} ${op['x-required-scope']}`),
      )
      .sort();
    assert.deepEqual(listed, [
      'DELETE /cloud/v1/instances/{id} instances.write',
      'DELETE /cloud/v1/instances/{id}/snapshots/{sid} instances.write',
      'DELETE /cloud/v1/ssh-keys/{id} orders.write',
      'GET /cloud/v1/images read',
      'GET /cloud/v1/instances read',
      'GET /cloud/v1/instances/{id} read',
      'GET /cloud/v1/instances/{id}/snapshots read',
      'GET /cloud/v1/jobs/{id} read',
      'GET /cloud/v1/plans read',
      'GET /cloud/v1/regions read',
      'GET /cloud/v1/ssh-keys read',
      'POST /cloud/v1/instances orders.write',
      'POST /cloud/v1/instances/{id}/power instances.write',
      'POST /cloud/v1/instances/{id}/snapshots instances.write',
      'POST /cloud/v1/ssh-keys orders.write',
      'PUT /cloud/v1/instances/{id}/rdns instances.write',
    ]);
    assert.ok(doc.tags.some((t: { name: string }) => t.name === 'cloud: instances'));
  });

  test('every route × every single scope, *, and no token: allowed iff held; otherwise 403 and nothing changed', async () => {
    const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ops = Object.entries(doc.paths as Record<string, Record<string, { 'x-required-scope': string }>>)
      .filter(([path]) => path.startsWith(`${CLOUD}/`))
      .flatMap(([path, o]) =>
        Object.entries(o).map(([m, op]) => ({ method: m.toUpperCase(), path, scope: op['x-required-scope'] })),
      );
    const tokens = new Map<string, ApiClient>();
    for (const scope of ['read', 'orders.write', 'instances.write', 'billing.read', '*'])
      tokens.set(scope, await apiClient(u.t, [scope], '0', owner.accountId));
    for (const op of ops) {
      // Harmless bodies: each is refused before anything changes (a label that is not it, an empty deploy).
      // A key id that is nobody's: the allowed DELETE finds nothing to delete.
      const id = op.path.startsWith(`${CLOUD}/ssh-keys/`) ? MISSING : instanceId;
      const url = op.path.replace('{id}', String(id)).replace('{sid}', 'nope');
      const body =
        op.method === 'GET'
          ? undefined
          : op.path.endsWith('/{id}') && op.path.includes('instances')
            ? { confirm: 'no' }
            : {};
      const anonymous = await u.t.inject({ method: op.method as 'GET', url, ...(body ? { payload: body } : {}) });
      assert.equal(anonymous.statusCode, 401, `${op.method} ${op.path}`);
      assert.equal(anonymous.json().ok, false);
      for (const [scope, client] of tokens) {
        const allowed = scope === '*' || scope === op.scope;
        const before = allowed ? null : await fingerprint(u.t);
        const res = await client.call(op.method, url, body);
        if (allowed)
          assert.ok(![401, 403].includes(res.statusCode), `${op.method} ${op.path} with ${scope}: ${res.body}`);
        else {
          assert.equal(res.statusCode, 403, `${op.method} ${op.path} with ${scope}`);
          assert.equal(res.json().error, 'insufficient_scope');
          assert.equal(res.json().details.required, op.scope);
          assert.deepEqual(await fingerprint(u.t), before, `${op.method} ${op.path} with ${scope} changed something`);
        }
      }
    }
  });

  test('the token envelope, the per-token limit headers, and unknown paths in it', async () => {
    const res = await owner.call('GET', `${CLOUD}/plans`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().ok, true);
    assert.equal(res.headers['ratelimit-limit'], '600');
    const unknown = await owner.call('GET', `${CLOUD}/no/such/route`);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().ok, false);
    assert.equal(unknown.json().error, 'not_found');
  });

  test('every call of a token holder is in the request log, unknown paths included; anonymous ones are not', async () => {
    await owner.call('GET', `${CLOUD}/instances/${instanceId}`);
    await owner.call('GET', `${CLOUD}/nothing/here`);
    await u.t.inject({ method: 'GET', url: `${CLOUD}/regions?anonymous` });
    await u.t.deps.requestLog.flush();
    const { rows } = await sql<{ path: string; status: number; token_id: number | null; account_id: number }>`
      select path, status, token_id, account_id from api_request_log where path like ${`${CLOUD}/%`} order by id`.execute(
      u.t.deps.database.db,
    );
    const of = (path: string) => rows.filter((r) => r.path === path);
    assert.ok(of(`${CLOUD}/instances/${instanceId}`).some((r) => r.status === 200 && r.account_id === owner.accountId));
    assert.deepEqual(
      of(`${CLOUD}/nothing/here`).map((r) => r.status),
      [404],
    );
    assert.ok(
      of(`${CLOUD}/ssh-keys`).some((r) => r.status === 201),
      'the key added in before()',
    );
    assert.ok(rows.every((r) => r.token_id !== null));
  });

  test('a deploy is composed from the surface alone: plans, regions, images', async () => {
    const plans = (await owner.call('GET', `${CLOUD}/plans`)).json().plans;
    assert.ok(plans.length > 0);
    assert.ok(plans.every((p: { type: string }) => p.type === 'kvm' || p.type === 'baremetal'));
    assert.ok(plans.some((p: { label: string; type: string }) => p.label === 'vps-1c-1g' && p.type === 'kvm'));
    const regions = (await owner.call('GET', `${CLOUD}/regions`)).json().regions;
    assert.ok(regions.some((r: { code: string; available: { kvm: boolean } }) => r.code === 'mum1' && r.available.kvm));
    const images = (await owner.call('GET', `${CLOUD}/images`)).json().images;
    assert.ok(images.some((i: { id: string; types: string[] }) => i.id === 'debian-12' && i.types.includes('kvm')));
  });
});

describe('instances', () => {
  test('the deploy injected both keys through cloud-init, URL-encoded as PVE wants', () => {
    const config = u.pve.state.vms.get(vmid)?.config ?? {};
    assert.doesNotMatch(config.sshkeys ?? '', /[ +]/);
    assert.deepEqual(
      decodeURIComponent(config.sshkeys ?? '')
        .split('\n')
        .sort(),
      [inlineLine, keyLine].sort(),
    );
  });

  test('list and detail: status, IPv4, region, power and live utilisation, as kvm', async () => {
    const list = await owner.call('GET', `${CLOUD}/instances?per_page=10`);
    assert.equal(list.statusCode, 200, list.body);
    const [item] = list.json().instances;
    assert.equal(item.id, instanceId);
    assert.equal(item.type, 'kvm');
    assert.equal(item.plan_type, 'vps');
    assert.equal(item.status, 'active');
    assert.equal(item.label, 'web1');
    assert.match(item.ipv4, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(item.region.code, 'mum1');
    assert.equal(item.power, 'running');
    assert.equal(typeof item.utilisation.cpu, 'number');
    assert.ok(item.utilisation.memory_total_bytes > 0);
    assert.deepEqual(list.json().pagination, { page: 1, per_page: 10, total: 1 });
    const one = await owner.call('GET', `${CLOUD}/instances/${instanceId}`);
    assert.equal(one.json().instance.credentials.username, 'root');
    assert.equal(one.headers['cache-control'], 'no-store');
  });

  test('a deploy replays under its key, and conflicts with another payload under it', async () => {
    const body = {
      type: 'kvm',
      plan: 'vps-1c-1g',
      region: 'mum1',
      image: 'debian-12',
      hostname: 'web1.example.in',
      ssh_key_ids: [keyId],
      ssh_keys: [inlineLine],
      idempotency_key: 'cloud-1',
    };
    const again = await owner.call('POST', `${CLOUD}/instances`, body);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().instance.id, instanceId);
    const other = await owner.call('POST', `${CLOUD}/instances`, { ...body, hostname: 'web9' });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().error, 'idempotency_conflict');
  });

  test('bad input: a bad key, another account’s key id, an unknown image, a type that is not the plan’s; 402', async () => {
    const base = { type: 'kvm', plan: 'vps-1c-1g', region: 'mum1', image: 'debian-12', hostname: 'bad1' };
    const services = await serviceCount();
    const badKey = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      ssh_keys: ['ssh-ed25519 AAAAnope'],
      idempotency_key: 'bad-1',
    });
    assert.equal(badKey.statusCode, 422, badKey.body);
    assert.equal(badKey.json().error, 'bad_config_ssh_keys');
    const theirs = await intruder.call('POST', `${CLOUD}/ssh-keys`, { name: 'theirs', public_key: ed25519('x@y') });
    const foreignId = theirs.json().ssh_key.id as number;
    const foreign = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      ssh_key_ids: [foreignId],
      idempotency_key: 'bad-2',
    });
    assert.equal(foreign.statusCode, 422, foreign.body);
    assert.equal(foreign.json().error, 'bad_config_ssh_key_ids');
    assert.match(foreign.json().details.fields.ssh_key_ids, new RegExp(`^${foreignId} `));
    const missing = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      ssh_key_ids: [MISSING],
      idempotency_key: 'bad-3',
    });
    assert.equal(missing.json().details.fields.ssh_key_ids, `${MISSING} is not one of your SSH keys`);
    const image = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      image: 'beos-5',
      idempotency_key: 'bad-4',
    });
    assert.equal(image.statusCode, 422, image.body);
    assert.equal(image.json().error, 'bad_config_image');
    assert.ok(image.json().details.fields.image);
    const type = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      type: 'baremetal',
      idempotency_key: 'bad-5',
    });
    assert.equal(type.statusCode, 422, type.body);
    assert.match(type.json().details.fields.type, /vps-1c-1g is a kvm plan/);
    const taken = await owner.call('POST', `${CLOUD}/instances`, {
      ...base,
      hostname: 'web1',
      idempotency_key: 'bad-6',
    });
    assert.equal(taken.statusCode, 422, taken.body);
    assert.ok(taken.json().details.fields.hostname, 'the label taken is named by the hostname');
    await intruder.call('DELETE', `${CLOUD}/ssh-keys/${foreignId}`);
    const poor = await apiClient(u.t, ['*'], '0');
    const broke = await poor.call('POST', `${CLOUD}/instances`, { ...base, idempotency_key: 'poor-1' });
    assert.equal(broke.statusCode, 402, broke.body);
    assert.equal(broke.json().error, 'insufficient_funds');
    assert.ok(broke.json().details.shortfall);
    assert.equal(await serviceCount(), services, 'nothing was ordered');
  });

  test('SSH keys: list, a bad key, a duplicate; another account’s key is 404 exactly like a missing one', async () => {
    const list = await owner.call('GET', `${CLOUD}/ssh-keys`);
    assert.deepEqual(
      list.json().ssh_keys.map((k: { id: number }) => k.id),
      [keyId],
    );
    // Times as everywhere else (CONTRACT §3): a numeric offset, not Z.
    assert.match(list.json().ssh_keys[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    const bad = await owner.call('POST', `${CLOUD}/ssh-keys`, {
      name: 'bad',
      public_key: 'ssh-dss AAAAB3NzaC1kc3MAAACBAP',
    });
    assert.equal(bad.statusCode, 422);
    assert.ok(bad.json().details.fields.public_key);
    const dup = await owner.call('POST', `${CLOUD}/ssh-keys`, { name: 'again', public_key: keyLine });
    assert.equal(dup.statusCode, 422);
    const foreign = await intruder.call('DELETE', `${CLOUD}/ssh-keys/${keyId}`);
    const missing = await intruder.call('DELETE', `${CLOUD}/ssh-keys/${MISSING}`);
    assert.equal(foreign.statusCode, 404);
    assert.deepEqual(sameAs(foreign.body), sameAs(missing.body));
    assert.equal((await owner.call('GET', `${CLOUD}/ssh-keys`)).json().ssh_keys.length, 1);
  });
});

async function serviceCount(): Promise<number> {
  const row = await u.t.deps.database.db
    .selectFrom('services')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('power and snapshots', () => {
  test('snapshot, change the disk, restore: the disk is rolled back and the VM restarted', async () => {
    const vm = () => u.pve.state.vms.get(vmid);
    const disk = vm()?.disk ?? {};
    (vm() as { disk: Record<string, string> }).disk = { ...disk, '/etc/motd': 'before' };
    const create = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'create',
      name: 'before',
    });
    assert.equal(create.statusCode, 202, create.body);
    assert.equal(create.headers.location, `${CLOUD}/jobs/${create.json().job.id}`);
    assert.equal(create.json().job.type, 'snapshot', 'a job of its own type, not power');
    const taken = await settled(owner, create.json().job.id);
    assert.equal(taken.status, 'succeeded');
    assert.equal((taken as { type?: string }).type, 'snapshot');
    const list = (await owner.call('GET', `${CLOUD}/instances/${instanceId}/snapshots`)).json();
    assert.deepEqual(
      list.snapshots.map((s: { id: string }) => s.id),
      ['before'],
    );
    assert.equal(list.limit, 3);
    // Times as everywhere else (CONTRACT §3): a numeric offset, not Z.
    assert.match(list.snapshots[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    (vm() as { disk: Record<string, string> }).disk = { ...(vm()?.disk ?? {}), '/etc/motd': 'after' };
    const runs = vm()?.runs?.length ?? 0;
    const restore = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'restore',
      snapshot_id: 'before',
    });
    assert.equal(restore.statusCode, 202, restore.body);
    assert.equal(restore.json().job.type, 'snapshot');
    assert.equal((await settled(owner, restore.json().job.id)).status, 'succeeded');
    assert.equal(vm()?.disk?.['/etc/motd'], 'before');
    assert.equal(vm()?.status, 'running');
    assert.ok((vm()?.runs?.length ?? 0) > runs, 'stopped and started again');
  });

  test('the plan limit: past 3 snapshots, 409 limit_reached; a taken name and a bad one are refused', async () => {
    for (const name of ['second', 'third']) {
      const res = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, { action: 'create', name });
      assert.equal(res.statusCode, 202, res.body);
      await settled(owner, res.json().job.id);
    }
    const jobs = await u.t.deps.database.db.selectFrom('jobs').select('id').execute();
    const over = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'create',
      name: 'fourth',
    });
    assert.equal(over.statusCode, 409, over.body);
    assert.equal(over.json().error, 'limit_reached');
    assert.equal(over.json().details.limit, 3);
    const taken = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'create',
      name: 'second',
    });
    assert.equal(taken.statusCode, 409);
    const bad = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'create',
      name: '9lives',
    });
    assert.equal(bad.statusCode, 422);
    assert.ok(bad.json().details.fields.name);
    const noName = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, { action: 'create' });
    assert.equal(noName.statusCode, 422);
    assert.equal((await u.t.deps.database.db.selectFrom('jobs').select('id').execute()).length, jobs.length);
    const del = await owner.call('DELETE', `${CLOUD}/instances/${instanceId}/snapshots/third`);
    assert.equal(del.statusCode, 202, del.body);
    assert.equal((await settled(owner, del.json().job.id)).status, 'succeeded');
    const list = (await owner.call('GET', `${CLOUD}/instances/${instanceId}/snapshots`)).json().snapshots;
    assert.deepEqual(
      list.map((s: { id: string }) => s.id),
      ['before', 'second'],
    );
  });

  test('snapshot jobs: their params and events, staff list them by type, migration 0014 both ways', async () => {
    const db = u.t.deps.database.db;
    const jobs = await db
      .selectFrom('jobs')
      .select(['id', 'type', 'params'])
      .where('service_id', '=', instanceId)
      .where('type', '=', 'snapshot')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      jobs.map((j) => j.params),
      [
        { action: 'create', name: 'before', description: '' },
        { action: 'restore', name: 'before' },
        { action: 'create', name: 'second', description: '' },
        { action: 'create', name: 'third', description: '' },
        { action: 'delete', name: 'third' },
      ],
    );
    const events = await db
      .selectFrom('service_events')
      .select('kind')
      .where('service_id', '=', instanceId)
      .where('kind', 'like', '%snapshot%')
      .execute();
    assert.deepEqual([...new Set(events.map((e) => e.kind))].sort(), [
      'snapshot_create',
      'snapshot_delete',
      'snapshot_restore',
    ]);
    // No power signal is a snapshot any more (what bad_signal answers list).
    assert.deepEqual(
      u.t.deps.products.signals.filter((name) => name.includes('snapshot')),
      [],
    );

    const staff = await runAdmin(['jobs', 'list', '--type', 'snapshot', '--json'], async () => u.t.deps);
    assert.equal(staff.exitCode, 0, staff.stderr);
    const listed = JSON.parse(staff.stdout) as { id: number; type: string }[];
    assert.ok(listed.length >= jobs.length && listed.every((j) => j.type === 'snapshot'));
    const bogus = await runAdmin(['jobs', 'list', '--type', 'snap'], async () => u.t.deps);
    assert.equal(bogus.exitCode, 2);
    assert.match(bogus.stderr, /--type is one of .*snapshot/);

    // The migration rewrites jobs recorded the old way (power + snapshot_* signal) and back, in a
    // transaction rolled back at the end.
    const rollback = new Error('rollback');
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        const shape = () =>
          trx
            .selectFrom('jobs')
            .select(['type', 'params'])
            .where(
              'id',
              'in',
              jobs.map((j) => j.id),
            )
            .orderBy('id')
            .execute();
        await m0014.down(trx as never);
        const old = await shape();
        assert.deepEqual(
          old.map((j) => [j.type, (j.params as { signal?: string }).signal, 'action' in j.params]),
          jobs.map((j) => ['power', `snapshot_${(j.params as { action: string }).action}`, false]),
        );
        await assert.rejects(
          sql`update jobs set type = 'snapshot' where id = ${jobs[0]?.id}`.execute(trx),
          /jobs_type_check/,
          'down narrows the check again',
        );
        throw rollback;
      }),
      (error) => error === rollback,
    );
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await m0014.down(trx as never);
        await m0014.up(trx as never);
        const again = await trx
          .selectFrom('jobs')
          .select(['id', 'type', 'params'])
          .where(
            'id',
            'in',
            jobs.map((j) => j.id),
          )
          .orderBy('id')
          .execute();
        assert.deepEqual(
          again.map((j) => [j.id, j.type, j.params]),
          jobs.map((j) => [j.id, j.type, j.params]),
        );
        throw rollback;
      }),
      (error) => error === rollback,
    );
    assert.equal(
      (
        await db
          .selectFrom('jobs')
          .select('type')
          .where('id', '=', jobs[0]?.id ?? 0)
          .executeTakeFirstOrThrow()
      ).type,
      'snapshot',
    );
  });

  test('a missing snapshot is 404; another account’s instance or snapshot answers exactly like a missing one', async () => {
    const mine = await owner.call('DELETE', `${CLOUD}/instances/${instanceId}/snapshots/nothing`);
    assert.equal(mine.statusCode, 404, mine.body);
    const theirs = await apiClient(u.t, ['*']);
    const deploy = await theirs.call('POST', `${CLOUD}/instances`, {
      type: 'kvm',
      plan: 'vps-1c-1g',
      region: 'mum1',
      image: 'debian-12',
      hostname: 'other',
      idempotency_key: 'theirs-1',
    });
    assert.equal(deploy.statusCode, 201, deploy.body);
    const theirId = deploy.json().instance.id as number;
    await settled(theirs, deploy.json().job.id);
    const snap = await theirs.call('POST', `${CLOUD}/instances/${theirId}/snapshots`, {
      action: 'create',
      name: 'secret',
    });
    await settled(theirs, snap.json().job.id);
    // Their snapshot's id, on my instance: not there, exactly like a name never used.
    const viaMine = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'restore',
      snapshot_id: 'secret',
    });
    const never = await owner.call('POST', `${CLOUD}/instances/${instanceId}/snapshots`, {
      action: 'restore',
      snapshot_id: 'never',
    });
    assert.equal(viaMine.statusCode, 404);
    assert.equal(viaMine.json().error, never.json().error);
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['GET', '/snapshots', undefined],
      ['POST', '/snapshots', { action: 'restore', snapshot_id: 'secret' }],
      ['POST', '/snapshots', { action: 'create', name: 'mine' }],
      ['DELETE', '/snapshots/secret', undefined],
      ['POST', '/power', { action: 'power_cycle' }],
      ['DELETE', '', { confirm: 'other' }],
    ] as const) {
      const before = await fingerprint(u.t);
      const foreign = await owner.call(method, `${CLOUD}/instances/${theirId}${path}`, body);
      const absent = await owner.call(method, `${CLOUD}/instances/${MISSING}${path}`, body);
      assert.equal(foreign.statusCode, 404, `${method} ${path}: ${foreign.body}`);
      assert.equal(foreign.json().error, 'not_owner');
      assert.deepEqual(sameAs(foreign.body), sameAs(absent.body), `${method} ${path}`);
      assert.doesNotMatch(foreign.body, /secret|other/);
      assert.deepEqual(await fingerprint(u.t), before, `${method} ${path} changed something`);
    }
    assert.equal(
      u.pve.state.vms.get(vmid)?.snapshots?.some((s) => s.name === 'secret'),
      false,
    );
  });

  test('power: shutdown stops the VM (ACPI), power_cycle brings it back at once, reboot keeps it running', async () => {
    const vm = () => u.pve.state.vms.get(vmid);
    const down = await owner.call('POST', `${CLOUD}/instances/${instanceId}/power`, { action: 'shutdown' });
    assert.equal(down.statusCode, 202, down.body);
    assert.equal((await settled(owner, down.json().job.id)).status, 'succeeded');
    assert.equal(vm()?.status, 'stopped');
    const cycle = await owner.call('POST', `${CLOUD}/instances/${instanceId}/power`, { action: 'power_cycle' });
    assert.equal(cycle.statusCode, 202, cycle.body);
    assert.equal((await settled(owner, cycle.json().job.id)).status, 'succeeded');
    assert.equal(vm()?.status, 'running');
    const reboot = await owner.call('POST', `${CLOUD}/instances/${instanceId}/power`, { action: 'reboot' });
    assert.equal((await settled(owner, reboot.json().job.id)).status, 'succeeded');
    assert.equal(vm()?.status, 'running');
    const bad = await owner.call('POST', `${CLOUD}/instances/${instanceId}/power`, { action: 'explode' });
    assert.equal(bad.statusCode, 422);
  });

  test('snapshots of a bare-metal instance: 422 not_supported', async () => {
    const db = u.t.deps.database.db;
    const first = await db.selectFrom('services').selectAll().where('id', '=', instanceId).executeTakeFirstOrThrow();
    const metal = await db
      .insertInto('services')
      .values({
        account_id: first.account_id,
        plan_id: first.plan_id,
        order_id: null,
        type: 'baremetal' as never,
        label: 'metal1',
        status: 'active',
        location_id: first.location_id,
        node_id: null,
        price_paise: first.price_paise,
        config: JSON.stringify({}),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (const [method, path, body] of [
      ['GET', '/snapshots', undefined],
      ['POST', '/snapshots', { action: 'create', name: 'x1' }],
      ['DELETE', '/snapshots/x1', undefined],
    ] as const) {
      const res = await owner.call(method, `${CLOUD}/instances/${metal.id}${path}`, body);
      assert.equal(res.statusCode, 422, `${method} ${path}: ${res.body}`);
      assert.equal(res.json().error, 'not_supported');
    }
    await db.updateTable('services').set({ status: 'terminated' }).where('id', '=', metal.id).execute();
  });

  test('delete: confirm must be the label; then the instance is terminated', async () => {
    const wrong = await owner.call('DELETE', `${CLOUD}/instances/${instanceId}`, { confirm: 'nope' });
    assert.equal(wrong.statusCode, 422);
    const del = await owner.call('DELETE', `${CLOUD}/instances/${instanceId}`, { confirm: 'web1' });
    assert.equal(del.statusCode, 202, del.body);
    assert.equal((await settled(owner, del.json().job.id)).status, 'succeeded');
    assert.equal(u.pve.state.vms.get(vmid), undefined);
  });
});
