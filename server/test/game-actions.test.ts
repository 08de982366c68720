// Every game action game.test.ts does not already walk through, end to end over HTTP (spec 4.9,
// CONTRACT §6): the answer a client gets AND what the emulated Pterodactyl panel holds after it.
// Info (activity pages, network, resources, overview), files (signed upload URL, folders,
// renames), backups (limit, throttle, signed download, delete), databases (rotate, delete),
// schedules (cron checked field by field, tasks, execute on the console), startup variables
// against the egg's rules, subusers, the console and the power state machine, and the state
// refusals: no_server, server_installing, suspended, not_game_service.

import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Service, ServiceStatus } from '../src/db/tables.ts';
import { type GameClient, gameClient, orderGame, panelFile, panelServer, WAIT } from './support/game.ts';
import { multipart } from './support/uploads.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let c: GameClient;

before(async () => {
  u = await createUpstreamApp({ game: true });
  c = await gameClient(u, { order: true });
});
after(() => u.close());

const db = () => u.t.deps.database.db;
const ptero = () => {
  assert.ok(u.ptero, 'the app has no game panel');
  return u.ptero;
};

/** A refusal in the session envelope with this status and code. */
function refused(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.success, false, res.body);
  assert.equal(body.code, code, res.body);
  assert.equal(typeof body.message, 'string', res.body);
  return body;
}

/** A success with this status; its body. */
function ok(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.equal(body.success, true, res.body);
  assert.equal(typeof body.message, 'string');
  return body;
}

/** The power state the panel reports through `resources`, once it is `state`. */
async function powerIs(state: string, client: GameClient = c): Promise<void> {
  await waitFor(
    `power ${state}`,
    async () => {
      const res = await client.read('resources');
      return res.statusCode === 200 && res.json().resources.state === state;
    },
    WAIT,
  );
}

/** The server running, with the EULA accepted. */
async function running(): Promise<void> {
  ok(await c.act('eula_accept'));
  ok(await c.act('power', { signal: 'start' }), 202);
  await powerIs('running');
}

const runtime = () => ptero().state.runtimeOf(panelServer(u, c.serviceId).id);

/** A second service of the client's account, of `type`, in `status`, pointing at the first one's panel server. */
async function twin(type: Service['type'], status: ServiceStatus, label: string, withServer = true): Promise<Service> {
  const first = await db().selectFrom('services').selectAll().where('id', '=', c.serviceId).executeTakeFirstOrThrow();
  return db()
    .insertInto('services')
    .values({
      account_id: first.account_id,
      plan_id: first.plan_id,
      order_id: null,
      type,
      label,
      status,
      location_id: first.location_id,
      node_id: first.node_id,
      price_paise: first.price_paise,
      config: JSON.stringify(first.config),
      external: withServer ? JSON.stringify(first.external) : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const retire = (id: number) =>
  db().updateTable('services').set({ status: 'terminated' }).where('id', '=', id).execute();

describe('info', () => {
  test('activity: newest first and paged; an action just done is its first event', async () => {
    ok(await c.act('file_write', { path: 'activity-probe.txt', content: 'probe\n' }));
    const first = ok(await c.read('activity'));
    const events = ptero().state.activity.filter((a) => a.serverId === panelServer(u, c.serviceId).id);
    assert.equal(first.pagination.total, events.length);
    assert.equal(first.pagination.page, 1);
    assert.equal(first.pagination.per_page, 25);
    const newest = first.activity[0];
    assert.equal(newest.event, 'server:file.write');
    assert.match(String(newest.properties.file), /activity-probe\.txt$/);
    assert.equal(typeof newest.at, 'string');
    assert.equal(typeof newest.via_api, 'boolean');
    assert.equal(newest.at, events.at(-1)?.timestamp, 'the newest event of the panel');

    // Pages of two: the whole list cut in order, newest first.
    ok(await c.act('folder_create', { name: 'activity-folder' }), 201);
    const all = ok(await c.read('activity', { per_page: 100 }));
    const p1 = ok(await c.read('activity', { page: 1, per_page: 2 }));
    const p2 = ok(await c.read('activity', { page: 2, per_page: 2 }));
    assert.equal(p1.activity[0].event, 'server:file.create-directory');
    assert.equal(p1.activity[1].event, 'server:file.write');
    const ids = (page: { activity: { id: string }[] }) => page.activity.map((a) => a.id);
    assert.deepEqual(ids(p1), ids(all).slice(0, 2));
    assert.deepEqual(ids(p2), ids(all).slice(2, 4));
    assert.equal(p1.pagination.total, all.activity.length);
    assert.equal(p1.pagination.pages, Math.ceil(p1.pagination.total / 2));

    refused(await c.read('activity', { per_page: 0 }), 422, 'validation_failed');
    const bad = refused(await c.read('activity', { page: 'two' }), 422, 'validation_failed');
    assert.ok('page' in (bad.errors as object), JSON.stringify(bad.errors));
  });

  test("network: the allocation's address; overview and resources agree with the panel", async () => {
    const server = panelServer(u, c.serviceId);
    const allocation = ptero().state.allocations.get(server.allocationId);
    assert.ok(allocation);
    const address = `${allocation.alias ?? allocation.ip}:${allocation.port}`;
    const network = ok(await c.read('network'));
    assert.deepEqual(network.allocations, [
      { ip: allocation.alias ?? allocation.ip, port: allocation.port, address, notes: null, primary: true },
    ]);

    const resources = ok(await c.read('resources')).resources;
    assert.equal(resources.state, runtime().state);
    for (const key of ['memory_bytes', 'cpu_percent', 'disk_bytes', 'uptime_seconds']) {
      assert.equal(typeof resources[key], 'number', key);
    }
    assert.equal(typeof resources.network.rx_bytes, 'number');

    const overview = ok(await c.read('overview')).server;
    assert.equal(overview.identifier, server.identifier);
    assert.equal(overview.name, server.name);
    assert.equal(overview.address, address);
    assert.equal(overview.status, 'installed');
    assert.equal(overview.power, runtime().state);
    assert.deepEqual(overview.limits, {
      memory_mb: 2048,
      cpu_percent: 150,
      disk_mb: 10 * 1024,
      databases: 1,
      backups: 2,
    });
    assert.equal(overview.docker_image, server.image);
    assert.equal(typeof overview.sftp.port, 'number');
    assert.ok(!JSON.stringify(overview).includes(ptero().appKey), 'no panel key in the answer');
  });
});

describe('files', () => {
  test('file_upload_url: a signed URL on the node; a multipart POST (field files, &directory=) lands the file', async () => {
    const asked = Date.now();
    const res = await c.read('file_upload_url');
    const { upload } = ok(res);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.ok(upload.url.startsWith(ptero().wingsUrl), upload.url);
    assert.ok(Date.parse(upload.expires_at) > asked, 'expires after it was asked for');
    const data = randomBytes(64 * 1024);
    const form = multipart({}, [
      { field: 'files', filename: 'direct.bin', contentType: 'application/octet-stream', data },
    ]);
    const url = `${upload.url}&directory=${encodeURIComponent('/incoming')}`;
    const sent = await fetch(url, { method: 'POST', headers: { 'content-type': form.contentType }, body: form.body });
    assert.equal(sent.status, 200, await sent.text());
    assert.deepEqual(panelFile(u, c.serviceId, 'incoming/direct.bin'), data);
    const listing = ok(await c.read('files', { directory: '/incoming' }));
    assert.ok(
      listing.files.some((f: { name: string; size: number }) => f.name === 'direct.bin' && f.size === data.length),
    );
    // The URL is good for one upload.
    const again = await fetch(url, { method: 'POST', headers: { 'content-type': form.contentType }, body: form.body });
    assert.ok(again.status >= 400, `a second upload with the same URL: ${again.status}`);
  });

  test('folder_create: folders in the root and in a folder, on the panel', async () => {
    const top = ok(await c.act('folder_create', { name: 'maps' }), 201);
    assert.equal(top.path, '/maps');
    const nested = ok(await c.act('folder_create', { root: '/maps', name: 'nether' }), 201);
    assert.equal(nested.path, '/maps/nether');
    const tree = ptero().state.files.get(panelServer(u, c.serviceId).id);
    assert.equal(tree?.get('maps')?.dir, true);
    assert.equal(tree?.get('maps/nether')?.dir, true);
    const nestedName = await c.act('folder_create', { root: '/', name: 'a/b' });
    assert.equal(nestedName.statusCode, 422, nestedName.body);
  });

  test('files_rename: moves a file into a folder, renames inside a root; an existing destination is refused', async () => {
    ok(await c.act('file_write', { path: 'notes.txt', content: 'n1' }));
    const moved = ok(await c.act('files_rename', { root: '/', files: [{ from: 'notes.txt', to: 'maps/notes.txt' }] }));
    assert.deepEqual(moved.files, [{ from: '/notes.txt', to: '/maps/notes.txt' }]);
    assert.equal(panelFile(u, c.serviceId, 'notes.txt'), null);
    assert.equal(panelFile(u, c.serviceId, 'maps/notes.txt')?.toString(), 'n1');

    ok(await c.act('files_rename', { root: '/maps', files: [{ from: 'notes.txt', to: 'renamed.txt' }] }));
    assert.equal(panelFile(u, c.serviceId, 'maps/notes.txt'), null);
    assert.equal(panelFile(u, c.serviceId, 'maps/renamed.txt')?.toString(), 'n1');

    ok(await c.act('file_write', { path: 'maps/other.txt', content: 'o' }));
    const clash = await c.act('files_rename', { root: '/maps', files: [{ from: 'other.txt', to: 'renamed.txt' }] });
    refused(clash, 409, 'conflict');
    assert.equal(panelFile(u, c.serviceId, 'maps/renamed.txt')?.toString(), 'n1', 'the destination is untouched');
    assert.equal(panelFile(u, c.serviceId, 'maps/other.txt')?.toString(), 'o');
  });

  test('files_rename: "../name" from a folder root moves the file up, still inside the server', async () => {
    ok(await c.act('file_write', { path: 'maps/up.txt', content: 'up' }));
    const res = ok(await c.act('files_rename', { root: '/maps', files: [{ from: 'up.txt', to: '../up.txt' }] }));
    assert.equal(panelFile(u, c.serviceId, 'maps/up.txt'), null);
    assert.equal(panelFile(u, c.serviceId, 'up.txt')?.toString(), 'up', `answered ${JSON.stringify(res.files)}`);
  });
});

describe('backups', () => {
  const panelBackups = () =>
    [...ptero().state.backups.values()].filter(
      (b) => b.serverId === panelServer(u, c.serviceId).id && b.deletedAt === null,
    );
  const completed = (uuid: string) =>
    waitFor(
      `backup ${uuid} completed`,
      async () =>
        ok(await c.read('backups')).backups.find((b: { uuid: string }) => b.uuid === uuid)?.status === 'completed',
      WAIT,
    );

  test('list, create to the plan limit (409 limit_reached), signed download, delete; then the panel throttle (429)', async () => {
    const empty = ok(await c.read('backups'));
    assert.deepEqual(empty.backups, []);
    assert.equal(empty.count, 0);
    assert.equal(empty.limit, 2);

    const one = ok(await c.act('backup_create', { name: 'first', ignored: ['*.log'] }), 202).backup;
    assert.equal(one.name, 'first');
    assert.deepEqual(one.ignored, ['*.log']);
    await completed(one.uuid);

    // Its archive, through the signed URL: the bytes the panel holds.
    const linkAsked = Date.now();
    const download = await c.read('backup_download', { uuid: one.uuid });
    const link = ok(download).download;
    assert.equal(download.headers['cache-control'], 'no-store');
    assert.ok(link.url.startsWith(ptero().wingsUrl), link.url);
    assert.ok(Date.parse(link.expires_at) > linkAsked, 'expires after it was asked for');
    const fetched = await fetch(link.url);
    assert.equal(fetched.status, 200);
    const bytes = Buffer.from(await fetched.arrayBuffer());
    const held = ptero().state.backups.get(one.uuid);
    assert.ok(bytes.length > 0);
    assert.equal(bytes.length, held?.bytes);
    assert.deepEqual(bytes, held?.archive);

    const two = ok(await c.act('backup_create', { name: 'second' }), 202).backup;
    assert.equal(panelBackups().length, 2);
    const creates = () => ptero().calls.get('POST /api/client/servers/:/backups') ?? 0;
    const asked = creates();

    // A third: the plan allows 2 (checked before the panel is asked).
    const third = refused(await c.act('backup_create', { name: 'third' }), 409, 'limit_reached');
    assert.deepEqual(third.details, { limit: 2, resource: 'backups' });
    assert.equal(creates(), asked, 'the panel was not asked');
    assert.equal(panelBackups().length, 2);

    // Deleting one frees a place, but the panel allows 2 backups per 600 s, deleted ones counted.
    const deleted = ok(await c.act('backup_delete', { uuid: one.uuid }));
    assert.equal(deleted.uuid, one.uuid);
    assert.notEqual(ptero().state.backups.get(one.uuid)?.deletedAt, null, 'soft-deleted on the panel');
    const after = ok(await c.read('backups'));
    assert.deepEqual(
      after.backups.map((b: { uuid: string }) => b.uuid),
      [two.uuid],
    );
    assert.equal(after.count, 1);
    const throttled = await c.act('backup_create', { name: 'fourth' });
    const body = refused(throttled, 429, 'rate_limited');
    assert.match(String(body.message), /2 backups/);
    assert.ok(Number(throttled.headers['retry-after']) > 60, `Retry-After ${throttled.headers['retry-after']}`);
    assert.equal(panelBackups().length, 1);

    refused(await c.read('backup_download', { uuid: one.uuid }), 404, 'not_found');
    refused(await c.act('backup_delete', { uuid: randomUUID() }), 404, 'not_found');
    refused(await c.act('backup_delete', { uuid: 'not-a-uuid' }), 422, 'validation_failed');
  });
});

describe('databases', () => {
  test('db_rotate gives a new password (the panel holds it); db_delete removes the database', async () => {
    const serverId = panelServer(u, c.serviceId).id;
    const created = ok(await c.act('db_create', { database: 'shop', remote: '10.0.0.%' }), 201).database;
    assert.equal(created.connections_from, '10.0.0.%');
    const held = () => [...ptero().state.databases.values()].filter((d) => d.serverId === serverId);
    assert.equal(held()[0]?.password, created.password);

    const rotated = ok(await c.act('db_rotate', { id: created.id })).database;
    assert.equal(rotated.id, created.id);
    assert.equal(rotated.name, created.name);
    assert.equal(typeof rotated.password, 'string');
    assert.notEqual(rotated.password, created.password);
    assert.equal(held()[0]?.password, rotated.password);

    const deleted = ok(await c.act('db_delete', { id: created.id }));
    assert.equal(deleted.id, created.id);
    assert.equal(held().length, 0);
    assert.deepEqual(ok(await c.read('databases')).databases, []);

    refused(await c.act('db_rotate', { id: created.id }), 404, 'not_found');
    const bad = refused(await c.act('db_delete', { id: 'x/../1' }), 422, 'validation_failed');
    assert.ok('id' in (bad.errors as object));
  });
});

describe('console and power', () => {
  test('command while offline is 409; start, stop, restart and kill move the state resources reports', async () => {
    if (runtime().state !== 'offline') {
      ok(await c.act('power', { signal: 'kill' }), 202);
      await powerIs('offline');
    }
    const offline = refused(await c.act('command', { command: 'say hi' }), 409, 'conflict');
    assert.match(String(offline.message), /start/i);
    refused(await c.act('power', { signal: 'explode' }), 422, 'validation_failed');

    await running();
    const said = ok(await c.act('command', { command: 'say online now' }));
    assert.equal(said.command, 'say online now');
    await waitFor('the console shows it', async () => runtime().console.some((l) => l.includes('[Server] online now')));

    ok(await c.act('power', { signal: 'stop' }), 202);
    await powerIs('offline');

    ok(await c.act('power', { signal: 'start' }), 202);
    await powerIs('running');
    const startedAt = runtime().startedAt;
    ok(await c.act('power', { signal: 'restart' }), 202);
    await waitFor('restarted', async () => runtime().state === 'running' && runtime().startedAt !== startedAt, WAIT);
    await powerIs('running');

    const kill = ok(await c.act('power', { signal: 'kill' }), 202);
    assert.equal(kill.signal, 'kill');
    await powerIs('offline');
    const events = ptero()
      .state.activity.filter((a) => a.serverId === panelServer(u, c.serviceId).id)
      .map((a) => a.event);
    for (const signal of ['start', 'stop', 'restart', 'kill'])
      assert.ok(events.includes(`server:power.${signal}`), signal);
  });
});

describe('schedules', () => {
  const held = (id: number) => ptero().state.schedules.get(id);
  const count = () =>
    [...ptero().state.schedules.values()].filter((s) => s.serverId === panelServer(u, c.serviceId).id).length;

  test('schedule_create keeps cron and tasks on the panel; bad cron fields and task payloads are 422 by field', async () => {
    const created = ok(
      await c.act('schedule_create', {
        name: 'nightly',
        minute: '0',
        hour: '4',
        tasks: [
          { action: 'command', payload: 'say nightly' },
          { action: 'power', payload: 'restart', time_offset: 5 },
          { action: 'backup' },
        ],
      }),
      201,
    ).schedule;
    assert.deepEqual(created.cron, { minute: '0', hour: '4', day_of_month: '*', month: '*', day_of_week: '*' });
    assert.equal(created.is_active, true);
    assert.equal(typeof created.next_run_at, 'string');
    const schedule = held(created.id);
    assert.ok(schedule);
    assert.deepEqual(schedule.cron, { minute: '0', hour: '4', dayOfMonth: '*', month: '*', dayOfWeek: '*' });
    assert.deepEqual(
      [...schedule.tasks].sort((a, b) => a.sequenceId - b.sequenceId).map((t) => [t.action, t.payload, t.timeOffset]),
      [
        ['command', 'say nightly', 0],
        ['power', 'restart', 5],
        ['backup', '', 0],
      ],
    );
    assert.ok(ok(await c.read('schedules')).schedules.some((s: { id: number }) => s.id === created.id));

    const before = count();
    const cron = refused(
      await c.act('schedule_create', { name: 'bad', minute: '61', hour: '4', day_of_week: '9' }),
      422,
      'validation_failed',
    );
    const errors = cron.errors as Record<string, string>;
    assert.deepEqual(Object.keys(errors).sort(), ['day_of_week', 'minute']);
    const syntax = refused(
      await c.act('schedule_create', { name: 'bad', hour: '4 * * * *', month: '13' }),
      422,
      'validation_failed',
    );
    assert.deepEqual(Object.keys(syntax.errors as object).sort(), ['hour', 'month']);
    const power = refused(
      await c.act('schedule_create', { name: 'bad', tasks: [{ action: 'power', payload: 'explode' }] }),
      422,
      'validation_failed',
    );
    assert.deepEqual(Object.keys(power.errors as object), ['tasks.0.payload']);
    const command = refused(
      await c.act('schedule_create', {
        name: 'bad',
        tasks: [{ action: 'backup' }, { action: 'command', payload: '  ' }],
      }),
      422,
      'validation_failed',
    );
    assert.deepEqual(Object.keys(command.errors as object), ['tasks.1.payload']);
    refused(
      await c.act('schedule_create', { name: 'bad', tasks: [{ action: 'shell', payload: 'rm -rf /' }] }),
      422,
      'validation_failed',
    );
    assert.equal(count(), before, 'nothing was made on the panel');
  });

  test('schedule_update replaces the tasks (or keeps them); schedule_execute runs a command on the console; schedule_delete', async () => {
    const created = ok(
      await c.act('schedule_create', {
        name: 'to update',
        minute: '*/5',
        tasks: [{ action: 'command', payload: 'say old' }, { action: 'backup' }],
      }),
      201,
    ).schedule;
    const updated = ok(
      await c.act('schedule_update', {
        id: created.id,
        name: 'updated',
        minute: '30',
        hour: '3',
        only_when_online: true,
        tasks: [{ action: 'command', payload: 'say from the schedule' }],
      }),
    ).schedule;
    assert.equal(updated.name, 'updated');
    assert.equal(updated.only_when_online, true);
    assert.deepEqual(
      updated.tasks.map((t: { action: string; payload: string }) => [t.action, t.payload]),
      [['command', 'say from the schedule']],
    );
    const schedule = held(created.id);
    assert.equal(schedule?.name, 'updated');
    assert.equal(schedule?.cron.minute, '30');
    assert.equal(schedule?.onlyWhenOnline, true);
    assert.deepEqual(
      schedule?.tasks.map((t) => [t.action, t.payload]),
      [['command', 'say from the schedule']],
    );

    // Without tasks, the tasks stay.
    ok(await c.act('schedule_update', { id: created.id, name: 'renamed only', minute: '30', hour: '3' }));
    assert.equal(held(created.id)?.name, 'renamed only');
    assert.equal(held(created.id)?.tasks.length, 1);
    refused(await c.act('schedule_update', { id: created.id, name: 'x', minute: '99' }), 422, 'validation_failed');
    assert.equal(held(created.id)?.cron.minute, '30', 'unchanged by a refused update');

    // An empty list of tasks empties the schedule; the panel will not run a schedule without tasks.
    const empty = await c.act('schedule_create', { name: 'empty', tasks: [] });
    const emptyId = ok(empty, 201).schedule.id;
    ok(await c.act('schedule_update', { id: emptyId, name: 'still empty', tasks: [] }));
    assert.equal(held(emptyId)?.tasks.length, 0);
    refused(await c.act('schedule_execute', { id: emptyId }), 409, 'conflict');
    ok(await c.act('schedule_delete', { id: emptyId }));

    await running();
    const run = ok(await c.act('schedule_execute', { id: created.id }), 202);
    assert.equal(run.id, created.id);
    await waitFor(
      'the schedule said it on the console',
      async () => runtime().console.some((l) => l.includes('[Server] from the schedule')),
      WAIT,
    );
    await waitFor('the schedule finished', async () => held(created.id)?.lastRunAt !== null, WAIT);
    const activity = ok(await c.read('activity', { per_page: 100 })).activity.map((a: { event: string }) => a.event);
    assert.ok(activity.includes('server:schedule.execute'), activity.join());

    const deleted = ok(await c.act('schedule_delete', { id: created.id }));
    assert.equal(deleted.id, created.id);
    assert.equal(held(created.id), undefined);
    assert.ok(!ok(await c.read('schedules')).schedules.some((s: { id: number }) => s.id === created.id));
    refused(await c.act('schedule_execute', { id: created.id }), 404, 'not_found');
    refused(await c.act('schedule_delete', { id: 0 }), 422, 'validation_failed');
  });
});

describe('startup', () => {
  test("startup lists the variables a client sees, with their rules; startup_var checks the egg's rules", async () => {
    const startup = ok(await c.read('startup')).startup;
    assert.match(startup.command, /java .*-jar server\.jar/);
    const keys = startup.variables.map((v: { key: string }) => v.key);
    assert.deepEqual(keys.sort(), ['BUILD_NUMBER', 'MINECRAFT_VERSION', 'SERVER_JARFILE']);
    const jar = startup.variables.find((v: { key: string }) => v.key === 'SERVER_JARFILE');
    assert.equal(jar.value, 'server.jar');
    assert.equal(jar.editable, true);
    assert.match(jar.rules, /regex:/);
    const env = () => panelServer(u, c.serviceId).environment;

    const zip = refused(
      await c.act('startup_var', { key: 'SERVER_JARFILE', value: 'server.zip' }),
      422,
      'validation_failed',
    );
    assert.deepEqual(Object.keys(zip.errors as object), ['value']);
    assert.equal(env().SERVER_JARFILE, 'server.jar');
    const long = refused(
      await c.act('startup_var', { key: 'BUILD_NUMBER', value: 'x'.repeat(21) }),
      422,
      'validation_failed',
    );
    assert.match((long.errors as Record<string, string>).value ?? '', /20/);
    const required = refused(
      await c.act('startup_var', { key: 'SERVER_JARFILE', value: '' }),
      422,
      'validation_failed',
    );
    assert.ok('value' in (required.errors as object));

    for (const key of ['NOT_A_VARIABLE', 'DL_PATH']) {
      const unknown = refused(await c.act('startup_var', { key, value: 'x' }), 422, 'validation_failed');
      assert.deepEqual(Object.keys(unknown.errors as object), ['key'], key);
    }
    refused(await c.act('startup_var', { key: 'server_jarfile', value: 'a.jar' }), 422, 'validation_failed');
    assert.equal(env().DL_PATH ?? '', '', 'a hidden variable was not set');

    const good = ok(await c.act('startup_var', { key: 'SERVER_JARFILE', value: 'paper-1.21.jar' })).variable;
    assert.equal(good.key, 'SERVER_JARFILE');
    assert.equal(good.value, 'paper-1.21.jar');
    assert.equal(env().SERVER_JARFILE, 'paper-1.21.jar');
    assert.match(ok(await c.read('startup')).startup.command, /-jar paper-1\.21\.jar/);
  });

  test('a variable the panel marks read-only is 422 on key; the panel keeps its value', async () => {
    const egg = ptero().state.eggs.get(panelServer(u, c.serviceId).eggId);
    const version = egg?.variables.find((v) => v.envVariable === 'MINECRAFT_VERSION');
    assert.ok(version);
    version.userEditable = false;
    try {
      const listed = ok(await c.read('startup')).startup.variables;
      assert.equal(listed.find((v: { key: string }) => v.key === 'MINECRAFT_VERSION')?.editable, false);
      const res = refused(
        await c.act('startup_var', { key: 'MINECRAFT_VERSION', value: '1.20.4' }),
        422,
        'validation_failed',
      );
      assert.match((res.errors as Record<string, string>).key ?? '', /read-only/);
      assert.equal(panelServer(u, c.serviceId).environment.MINECRAFT_VERSION, 'latest');
    } finally {
      version.userEditable = true;
    }
  });

  test('a read-only variable (Bedrock LD_LIBRARY_PATH) is 422 on key', async () => {
    const bedrock = await orderGame(u, c, 'mc-bedrock-2g');
    const variables = ok(await c.read('startup', {}, bedrock.serviceId)).startup.variables;
    const lib = variables.find((v: { key: string }) => v.key === 'LD_LIBRARY_PATH');
    assert.equal(lib?.editable, false);
    const res = refused(
      await c.act('startup_var', { key: 'LD_LIBRARY_PATH', value: '/tmp' }, bedrock.serviceId),
      422,
      'validation_failed',
    );
    assert.match((res.errors as Record<string, string>).key ?? '', /read-only/);
    assert.equal(panelServer(u, bedrock.serviceId).environment.LD_LIBRARY_PATH, '.');
    const name = ok(await c.act('startup_var', { key: 'SERVERNAME', value: 'Hostplane Bedrock' }, bedrock.serviceId));
    assert.equal(name.variable.value, 'Hostplane Bedrock');
    assert.equal(panelServer(u, bedrock.serviceId).environment.SERVERNAME, 'Hostplane Bedrock');
  });
});

describe('the catalog', () => {
  test('every game plan of the demo catalog provisions on the panel', async () => {
    await u.t.deps.wallet.credit(c.accountId, '20000', 'catalog test float');
    const plans = await db()
      .selectFrom('plans')
      .innerJoin('plan_locations', 'plan_locations.plan_id', 'plans.id')
      .innerJoin('locations', 'locations.id', 'plan_locations.location_id')
      .select(['plans.id', 'plans.label', 'locations.code'])
      .where('plans.type', '=', 'game')
      .orderBy('plans.id')
      .execute();
    const seen = new Set<number>();
    const failures: string[] = [];
    for (const plan of plans) {
      if (seen.has(plan.id)) continue;
      seen.add(plan.id);
      const res = await c.browser.post(
        '/api/v1/client/orders/',
        {
          plan_id: plan.id,
          config: { server_name: `cat-${plan.label}`, eula: true, region: plan.code },
          idempotency_key: `catalog-${plan.label}`,
        },
        { csrf: true },
      );
      assert.equal(res.statusCode, 201, res.body);
      const jobId = res.json().job.id as number;
      const job = await waitFor(
        `${plan.label} provisioned`,
        async () => {
          const j = await db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
          return j.status === 'succeeded' || j.status === 'failed' ? j : null;
        },
        WAIT,
      );
      if (job.status !== 'succeeded') {
        // The panel's own words are in the worker's log, not in the job.
        const said = u.t.logs
          .parsed()
          .filter((l) => l.job === jobId && typeof (l.err as { message?: unknown } | undefined)?.message === 'string')
          .map((l) => (l.err as { message: string }).message);
        failures.push(`${plan.label} (${plan.code}): ${job.error_code}: ${said.at(-1) ?? job.error_message}`);
      }
    }
    assert.ok(seen.size >= 3, `${seen.size} game plans`);
    assert.deepEqual(failures, []);
  });
});

describe('users', () => {
  test('user_invite (bad permission names refused), users, user_update replaces permissions, user_remove', async () => {
    const serverId = panelServer(u, c.serviceId).id;
    const held = () => [...ptero().state.subusers.values()].filter((s) => s.serverId === serverId);
    const before = held().length;
    const bad = refused(
      await c.act('user_invite', { email: 'helper@example.net', permissions: ['control.console', 'root.everything'] }),
      422,
      'validation_failed',
    );
    assert.ok(
      Object.keys(bad.errors as object).some((k) => k.startsWith('permissions')),
      JSON.stringify(bad.errors),
    );
    refused(
      await c.act('user_invite', { email: 'not-an-email', permissions: ['file.read'] }),
      422,
      'validation_failed',
    );
    refused(await c.act('user_invite', { email: 'helper@example.net', permissions: [] }), 422, 'validation_failed');
    assert.equal(held().length, before);

    const invited = ok(
      await c.act('user_invite', { email: 'helper@example.net', permissions: ['control.console', 'file.read'] }),
      201,
    ).user;
    assert.deepEqual([...invited.permissions].sort(), ['control.console', 'file.read', 'websocket.connect']);
    assert.equal(held().length, before + 1);
    const listed = ok(await c.read('users')).users.find((x: { uuid: string }) => x.uuid === invited.uuid);
    assert.equal(listed.email, 'helper@example.net');
    // The same person twice: the panel's refusal, as a conflict. The owner's panel user has the
    // platform's own address, which no invite may name (T3-M3).
    refused(await c.act('user_invite', { email: 'HELPER@example.net', permissions: ['file.read'] }), 409, 'conflict');
    const owner = ptero().state.users.get(panelServer(u, c.serviceId).ownerId);
    assert.ok(owner);
    refused(await c.act('user_invite', { email: owner.email, permissions: ['file.read'] }), 422, 'validation_failed');
    assert.equal(held().length, before + 1);

    const updated = ok(
      await c.act('user_update', { uuid: invited.uuid, permissions: ['backup.read', 'file.read'] }),
    ).user;
    assert.deepEqual([...updated.permissions].sort(), ['backup.read', 'file.read', 'websocket.connect']);
    const panelUser = [...ptero().state.users.values()].find((x) => x.uuid === invited.uuid);
    const sub = held().find((s) => s.userId === panelUser?.id);
    assert.deepEqual([...(sub?.permissions ?? [])].sort(), ['backup.read', 'file.read', 'websocket.connect']);
    refused(
      await c.act('user_update', { uuid: invited.uuid, permissions: ['file.read', 'file.read'] }),
      422,
      'validation_failed',
    );

    const removed = ok(await c.act('user_remove', { uuid: invited.uuid }));
    assert.equal(removed.uuid, invited.uuid);
    assert.equal(held().length, before);
    assert.ok(!ok(await c.read('users')).users.some((x: { uuid: string }) => x.uuid === invited.uuid));
    refused(await c.act('user_remove', { uuid: invited.uuid }), 404, 'not_found');
  });
});

describe('state refusals', () => {
  test('no_server: a game service still provisioning, with no panel server yet', async () => {
    const pending = await twin('game', 'provisioning', 'no-server-yet', false);
    refused(await c.read('overview', {}, pending.id), 409, 'no_server');
    refused(await c.act('file_write', { path: 'a.txt', content: 'a' }, pending.id), 409, 'no_server');
    refused(await c.act('power', { signal: 'start' }, pending.id), 409, 'no_server');
    // Where provisioning is, and the service's events, are there in every state.
    const status = ok(await c.read('provision_status', {}, pending.id)).provision;
    assert.equal(status.status, 'provisioning');
    assert.equal(status.server_created, false);
    assert.equal(status.panel_status, null);
    ok(await c.read('events', {}, pending.id));
    await retire(pending.id);

    const failed = await twin('game', 'failed', 'failed-one', false);
    refused(await c.read('files', {}, failed.id), 409, 'no_server');
    await retire(failed.id);
  });

  test('suspended: 409 for reads and changes alike', async () => {
    const suspended = await twin('game', 'suspended', 'suspended-one');
    const writes = ptero().calls.get('POST /api/client/servers/:/files/write') ?? 0;
    refused(await c.read('resources', {}, suspended.id), 409, 'suspended');
    refused(await c.act('file_write', { path: 'x.txt', content: 'x' }, suspended.id), 409, 'suspended');
    refused(await c.act('command', { command: 'op me' }, suspended.id), 409, 'suspended');
    assert.equal(ptero().calls.get('POST /api/client/servers/:/files/write') ?? 0, writes, 'the panel was not asked');
    await retire(suspended.id);
  });

  test("not_game_service: the game route on the same account's VPS is 422", async () => {
    const vps = await twin('vps', 'active', 'a-vps');
    refused(await c.read('overview', {}, vps.id), 422, 'not_game_service');
    refused(await c.act('file_write', { path: 'x.txt', content: 'x' }, vps.id), 422, 'not_game_service');
    await retire(vps.id);
  });
});

describe('the first install', () => {
  let slow: UpstreamApp;
  before(async () => {
    slow = await createUpstreamApp({ game: { installDelayMs: 4000 } });
  });
  after(() => slow.close());

  test('while the panel installs a new server the game route is 409 server_installing; then it answers', async () => {
    const client = await gameClient(slow);
    const plan = await slow.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'mc-java-2g')
      .executeTakeFirstOrThrow();
    const order = await client.browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, config: { server_name: 'slow', eula: true, region: 'mum1' }, idempotency_key: 'slow-1' },
      { csrf: true },
    );
    assert.equal(order.statusCode, 201, order.body);
    const serviceId = order.json().service.id as number;
    const jobId = order.json().job.id as number;

    // At once: no server yet, or one installing; either way not usable.
    const early = await client.read('files', {}, serviceId);
    assert.equal(early.statusCode, 409, early.body);
    assert.ok(['no_server', 'server_installing'].includes(early.json().code), early.body);

    await waitFor(
      'the panel server is recorded',
      async () => {
        const service = await slow.t.deps.database.db
          .selectFrom('services')
          .select('external')
          .where('id', '=', serviceId)
          .executeTakeFirstOrThrow();
        return service.external !== null;
      },
      WAIT,
    );
    const panel = [...(slow.ptero?.state.servers.values() ?? [])].find(
      (s) => s.externalId === `hp-${slow.t.deps.installation.id}-svc-${serviceId}`,
    );
    assert.equal(panel?.status, 'installing', 'the install is slow enough to be seen');
    refused(await client.read('files', {}, serviceId), 409, 'server_installing');
    refused(await client.act('file_write', { path: 'a.txt', content: 'a' }, serviceId), 409, 'server_installing');
    const status = ok(await client.read('provision_status', {}, serviceId)).provision;
    assert.equal(status.server_created, true);
    assert.equal(status.panel_status, 'installing');

    await waitFor(
      'installed',
      async () => {
        const job = await slow.t.deps.database.db
          .selectFrom('jobs')
          .select('status')
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
        if (job.status === 'failed') assert.fail('the provisioning job failed');
        return job.status === 'succeeded';
      },
      WAIT,
    );
    ok(await client.read('files', {}, serviceId));
  });
});
