// Issue 32, "behaviour a user would trip over": schedule_update changes only the fields sent;
// the catalog and /api/v1/locations carry every product type's availability (bare metal too);
// a game client is told how to reach the game panel (sso, credentials, panel_password) instead
// of a 409 no_vm; and "this product cannot do that" is 422 not_supported on every shared route.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { passwordMatches } from '../../emulators/src/pterodactyl/application.ts';
import { type GameClient, gameClient } from './support/game.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

let u: UpstreamApp;
let c: GameClient;

before(async () => {
  u = await createUpstreamApp({ game: true, redfish: true });
  c = await gameClient(u, { order: true });
});
after(() => u.close());

const ptero = () => {
  assert.ok(u.ptero, 'the app has no game panel');
  return u.ptero;
};

function ok(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.equal(body.success, true, res.body);
  return body;
}

function refused(res: LightMyRequestResponse, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.equal(body.success ?? body.ok, false, res.body);
  assert.equal(body.code ?? body.error, code, res.body);
  return body;
}

describe('schedule_update changes only the fields sent', () => {
  const held = (id: number) => ptero().state.schedules.get(id);

  test('omitted cron fields, name, is_active and only_when_online keep their values', async () => {
    const created = ok(
      await c.act('schedule_create', {
        name: 'nightly',
        minute: '15',
        hour: '4',
        day_of_month: '1-15',
        month: '*/2',
        day_of_week: '1-5',
        is_active: false,
        only_when_online: true,
        tasks: [{ action: 'command', payload: 'say hi' }],
      }),
      201,
    ).schedule;

    // Only the hour: every other field stays as it was, on the panel and in the answer.
    const updated = ok(await c.act('schedule_update', { id: created.id, hour: '5' })).schedule;
    assert.deepEqual(updated.cron, { minute: '15', hour: '5', day_of_month: '1-15', month: '*/2', day_of_week: '1-5' });
    assert.equal(updated.name, 'nightly');
    assert.equal(updated.is_active, false, 'is_active changes only when sent');
    assert.equal(updated.only_when_online, true);
    const schedule = held(created.id);
    assert.deepEqual(schedule?.cron, { minute: '15', hour: '5', dayOfMonth: '1-15', month: '*/2', dayOfWeek: '1-5' });
    assert.equal(schedule?.isActive, false);
    assert.equal(schedule?.onlyWhenOnline, true);
    assert.equal(schedule?.tasks.length, 1, 'tasks stay when not sent');

    // is_active when sent; the rest still kept.
    ok(await c.act('schedule_update', { id: created.id, is_active: true }));
    assert.equal(held(created.id)?.isActive, true);
    assert.equal(held(created.id)?.cron.minute, '15');
    assert.equal(held(created.id)?.name, 'nightly');

    // A bad field is still named; nothing changes.
    const bad = refused(await c.act('schedule_update', { id: created.id, day_of_week: '9' }), 422, 'validation_failed');
    assert.deepEqual(Object.keys(bad.errors), ['day_of_week']);
    assert.equal(held(created.id)?.cron.dayOfWeek, '1-5');

    // A schedule that is not there (or is another server's) is 404.
    refused(await c.act('schedule_update', { id: 999_999, hour: '1' }), 404, 'not_found');
  });
});

describe('every product type has its availability flag', () => {
  test('GET /api/v1/locations, the session catalog and /cloud/v1/regions carry available.baremetal', async () => {
    const api = await apiClient(u.t, ['read'], '0', c.accountId);
    const locations = await api.call('GET', '/api/v1/locations');
    assert.equal(locations.statusCode, 200, locations.body);
    const mum1 = locations.json().locations.find((l: { code: string }) => l.code === 'mum1');
    assert.deepEqual(Object.keys(mum1.available).sort(), ['baremetal', 'game', 'vps', 'web']);
    assert.equal(mum1.available.baremetal, true, 'mum1 has free bare-metal machines');
    const blr1 = locations.json().locations.find((l: { code: string }) => l.code === 'blr1');
    assert.equal(blr1.available.baremetal, false, 'blr1 has no bare-metal machine');

    const catalog = ok(await c.browser.get('/api/v1/client/catalog/'));
    const region = catalog.regions.find((r: { code: string }) => r.code === 'mum1');
    assert.deepEqual(Object.keys(region.available).sort(), ['baremetal', 'game', 'vps', 'web']);
    assert.equal(region.available.baremetal, true);

    const cloud = await api.call('GET', '/cloud/v1/regions');
    assert.equal(cloud.statusCode, 200, cloud.body);
    const zone = cloud.json().regions.find((r: { code: string }) => r.code === 'mum1');
    assert.equal(zone.available.baremetal, true);
    assert.equal(zone.available.kvm, true);
  });

  test('the OpenAPI document lists every plan type in the availability and plan schemas', async () => {
    const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const text = JSON.stringify(doc.paths['/api/v1/locations'].get.responses['200']);
    assert.match(text, /"baremetal":\{"type":"boolean"\}/);
  });
});

describe('game clients reach the panel', () => {
  const SVC = '/api/v1/client/services/';
  const owner = () => {
    const server = [...ptero().state.servers.values()].find((s) => s.externalId?.endsWith(`svc-${c.serviceId}`));
    assert.ok(server, 'the service has a panel server');
    const user = ptero().state.users.get(server.ownerId);
    assert.ok(user, 'the server has an owner');
    return { server, user };
  };

  test('credentials of a game server: the panel username and how to set the password, not 409 no_vm', async () => {
    const { user } = owner();
    const res = await c.browser.get(`${SVC}?id=${c.serviceId}&action=credentials`);
    const credentials = ok(res).credentials;
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(credentials.username, user.username);
    assert.equal(credentials.password, null);
    assert.equal(credentials.url, `${ptero().url}/server/${owner().server.identifier}`);
    assert.match(credentials.note, /action=panel_password/);

    const sso = ok(await c.browser.get(`${SVC}?id=${c.serviceId}&action=sso`)).sso;
    assert.equal(sso.kind, 'panel');
    assert.equal(sso.username, user.username);
    assert.match(sso.note, /no one-time sign-in/);
  });

  test('panel_password sets a password the panel accepts for the account’s own user, shown once', async () => {
    const { user } = owner();
    refused(await c.act('panel_password', {}, c.serviceId, false), 403, 'csrf_failed');
    assert.equal(user.passwordHash ?? null, null, 'nothing changed without CSRF');
    const first = ok(await c.act('panel_password')).panel;
    assert.equal(first.username, user.username);
    assert.equal(first.url, `${ptero().url}/auth/login`);
    assert.ok(first.password.length >= 20, first.password);
    assert.ok(passwordMatches(user, first.password), 'the panel signs the user in with it');
    const second = ok(await c.act('panel_password')).panel;
    assert.notEqual(second.password, first.password);
    assert.ok(passwordMatches(user, second.password));
    assert.ok(!passwordMatches(user, first.password), 'the old one no longer works');
  });

  test('a server the panel moved to another user (a root admin) is refused, and no password changes', async () => {
    const { server, user } = owner();
    const admin = [...ptero().state.users.values()].find((x) => x.rootAdmin);
    assert.ok(admin, 'the panel has a root admin');
    const hashes = () => [...ptero().state.users.values()].map((x) => x.passwordHash ?? null);
    const before = hashes();
    server.ownerId = admin.id;
    try {
      refused(await c.act('panel_password'), 409, 'conflict');
      assert.deepEqual(hashes(), before);
    } finally {
      server.ownerId = user.id;
    }
  });
});

describe('one code for "this product cannot do that": 422 not_supported', () => {
  /** A service row of the client's account of `type`, active, on the first plan of that type. */
  async function serviceOf(type: 'baremetal' | 'web', label: string): Promise<number> {
    const db = u.t.deps.database.db;
    const plan = await db.selectFrom('plans').selectAll().where('type', '=', type).executeTakeFirstOrThrow();
    const first = await db.selectFrom('services').selectAll().where('id', '=', c.serviceId).executeTakeFirstOrThrow();
    const row = await db
      .insertInto('services')
      .values({
        account_id: c.accountId,
        plan_id: plan.id,
        order_id: null,
        location_id: first.location_id,
        node_id: null,
        price_paise: plan.price_paise,
        type,
        label,
        status: 'active',
        config: JSON.stringify({}),
        external: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  test('sso of a product without sign-on (bare metal) is 422 not_supported, not 409 sso_unavailable', async () => {
    const id = await serviceOf('baremetal', 'bm-sso');
    refused(await c.browser.get(`/api/v1/client/services/?id=${id}&action=sso`), 422, 'not_supported');
  });

  test("another product's action on the shared routes is 422 not_supported (power_cycle of a game server)", async () => {
    const res = await c.browser.post(
      '/api/v1/client/services/action/',
      { id: c.serviceId, action: 'power_cycle' },
      { csrf: true },
    );
    refused(res, 422, 'not_supported');
    const api = await apiClient(u.t, ['*'], '0', c.accountId);
    refused(await api.call('POST', `/api/v1/instances/${c.serviceId}/power_cycle`), 422, 'not_supported');
    const web = await serviceOf('web', 'web-cycle');
    refused(await api.call('POST', `/api/v1/instances/${web}/power_cycle`), 422, 'not_supported');
  });

  test('the VPS management route on a game server is 422 not_supported; the game route keeps not_game_service', async () => {
    refused(await c.browser.get(`/api/v1/client/vps/?service=${c.serviceId}&action=snapshots`), 422, 'not_supported');
    const web = await serviceOf('web', 'web-game');
    refused(await c.read('overview', {}, web), 422, 'not_game_service');
  });
});

describe('provision_status answers as the README says', () => {
  test('200 in every state: the service status, whether the panel server exists, its install state, the job', async () => {
    const active = ok(await c.read('provision_status')).provision;
    assert.equal(active.status, 'active');
    assert.equal(active.server_created, true);
    assert.equal(active.panel_status, 'installed');
    assert.equal(active.job.type, 'provision');
    assert.equal(active.job.status, 'succeeded');

    // A service whose server is not made yet: 200 too (not 409 no_server), with nothing on the panel.
    const db = u.t.deps.database.db;
    const first = await db.selectFrom('services').selectAll().where('id', '=', c.serviceId).executeTakeFirstOrThrow();
    const { id } = await db
      .insertInto('services')
      .values({
        account_id: c.accountId,
        plan_id: first.plan_id,
        order_id: null,
        location_id: first.location_id,
        node_id: first.node_id,
        price_paise: first.price_paise,
        type: 'game',
        label: 'mc-pending',
        status: 'provisioning',
        config: JSON.stringify({}),
        external: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const pending = ok(await c.read('provision_status', {}, id)).provision;
    assert.deepEqual(pending, { status: 'provisioning', server_created: false, panel_status: null, job: null });
    refused(await c.read('overview', {}, id), 409, 'no_server');
  });
});
