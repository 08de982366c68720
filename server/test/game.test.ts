// Game servers end to end (issue 12): a Minecraft plan ordered through the session surface is
// provisioned on the emulated Pterodactyl panel through the real driver (panel user, server
// with the plan's limits, install), then managed through /api/v1/client/game/ as a new user
// would: accept the EULA, start it, `say hello` on the console WebSocket, edit
// server.properties, back up and restore, add a database, invite a subuser, rename, reinstall.
// The route's own rules (CONTRACT §6: methods, unknown actions, check order, paths) and both
// shared surfaces (services list and status, /api/v1/instances) are covered here too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { PRODUCTS } from '../src/core/products/index.ts';
import { panelActions } from '../src/http/client/panel.routes.ts';
import { type GameClient, gameClient, orderGame, panelFile, panelServer, WAIT } from './support/game.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let c: GameClient;
let wsBase: string;

before(async () => {
  u = await createUpstreamApp({ game: true });
  const address = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  wsBase = address.replace(/^http/, 'ws');
  c = await gameClient(u, { order: true });
});
after(() => u.close());

/** The power state the panel reports, once it is `state`. */
async function powerIs(state: string): Promise<void> {
  await waitFor(
    `power ${state}`,
    async () => {
      const res = await c.read('resources');
      return res.statusCode === 200 && res.json().resources.state === state;
    },
    WAIT,
  );
}

describe('provisioning', () => {
  test('the server exists on the panel with the plan limits, owned by the account panel user', async () => {
    const server = panelServer(u, c.serviceId);
    assert.equal(server.status, null, 'installed');
    assert.equal(server.memory, 2048);
    assert.equal(server.cpu, 150);
    assert.equal(server.disk, 10 * 1024);
    assert.equal(server.databaseLimit, 1);
    assert.equal(server.backupLimit, 2);
    const owner = u.ptero?.state.users.get(server.ownerId);
    assert.equal(owner?.externalId, `hp-${u.t.deps.installation.id}-acct-${c.accountId}`);
    const service = await u.t.deps.database.db
      .selectFrom('services')
      .selectAll()
      .where('id', '=', c.serviceId)
      .executeTakeFirstOrThrow();
    assert.equal(service.status, 'active');
    assert.equal((service.external as { identifier: string }).identifier, server.identifier);

    const status = await c.read('provision_status');
    assert.equal(status.statusCode, 200, status.body);
    assert.equal(status.json().provision.status, 'active');
    assert.equal(status.json().provision.panel_status, 'installed');
    assert.equal(status.json().provision.job.status, 'succeeded');
    const events = (await c.read('events')).json().events.map((e: { kind: string }) => e.kind);
    assert.ok(events.includes('server_created'), events.join());
  });

  test('a second order of the same account reuses its panel user', async () => {
    const users = u.ptero?.state.users.size;
    const { serviceId } = await orderGame(u, c);
    assert.equal(u.ptero?.state.users.size, users, 'no new panel user for the same account');
    assert.equal(panelServer(u, serviceId).ownerId, panelServer(u, c.serviceId).ownerId);
  });
});

describe('the README walk-through', () => {
  test('EULA, start, say hello on the console, edit server.properties, backup and restore, database, subuser, rename', async () => {
    // A fresh server refuses to run until the EULA is accepted.
    assert.match(panelFile(u, c.serviceId, 'eula.txt')?.toString() ?? '', /eula=false/);
    const eula = await c.act('eula_accept');
    assert.equal(eula.statusCode, 200, eula.body);
    assert.match(panelFile(u, c.serviceId, 'eula.txt')?.toString() ?? '', /^eula=true$/m);

    const start = await c.act('power', { signal: 'start' });
    assert.equal(start.statusCode, 202, start.body);
    await powerIs('running');

    // The console: a one-time ticket, then Wings' protocol relayed with the panel's JWT kept server-side.
    const asked = Date.now();
    const ticket = await c.act('console_ws');
    assert.equal(ticket.statusCode, 200, ticket.body);
    const { url, expires_at } = ticket.json().console;
    assert.ok(url.startsWith('ws://localhost:8080/ws/console/?t='), url);
    assert.ok(Date.parse(expires_at) > asked, 'expires after it was asked for');
    const ws = new WebSocket(`${wsBase}/ws/console/?t=${ticket.json().console.ticket}`);
    const lines: string[] = [];
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { event: string; args?: string[] };
      if (frame.event === 'console output') lines.push(String(frame.args?.[0] ?? ''));
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    // Junk and a client's own `auth` do not break the session (the relay drops them: pterodactyl.test.ts).
    ws.send(JSON.stringify({ event: 'auth', args: ['forged'] }));
    ws.send('not json');
    ws.send(JSON.stringify({ event: 'send command', args: ['say hello'] }));
    await waitFor('the console shows the command', async () => lines.some((l) => l.includes('[Server] hello')), WAIT);
    ws.close();
    // A ticket is used once.
    const again = new WebSocket(`${wsBase}/ws/console/?t=${ticket.json().console.ticket}`);
    const refused = await new Promise<number>((resolve) => {
      again.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      again.on('open', () => resolve(101));
      again.on('error', () => {});
    });
    assert.equal(refused, 401);

    // The command action reaches the same console.
    const command = await c.act('command', { command: 'say again' });
    assert.equal(command.statusCode, 200, command.body);

    // server.properties, edited.
    const props = await c.read('file_read', { path: '/server.properties' });
    assert.equal(props.statusCode, 200, props.body);
    const edited = props.json().content.replace(/^motd=.*$/m, 'motd=Hostplane test');
    const write = await c.act('file_write', { path: 'server.properties', content: edited });
    assert.equal(write.statusCode, 200, write.body);
    assert.match(panelFile(u, c.serviceId, 'server.properties')?.toString() ?? '', /^motd=Hostplane test$/m);

    // Backup, change, restore: the change is undone.
    const backup = await c.act('backup_create', { name: 'before-change' });
    assert.equal(backup.statusCode, 202, backup.body);
    const uuid = backup.json().backup.uuid;
    await waitFor(
      'backup completed',
      async () =>
        (await c.read('backups')).json().backups.find((b: { uuid: string }) => b.uuid === uuid)?.status === 'completed',
      WAIT,
    );
    await c.act('file_write', { path: 'server.properties', content: 'motd=changed\n' });
    const stop = await c.act('power', { signal: 'kill' });
    assert.equal(stop.statusCode, 202, stop.body);
    await powerIs('offline');
    const restore = await c.act('backup_restore', { uuid, truncate: true });
    assert.equal(restore.statusCode, 202, restore.body);
    await waitFor(
      'restored',
      async () => /motd=Hostplane test/.test(panelFile(u, c.serviceId, 'server.properties')?.toString() ?? ''),
      WAIT,
    );

    // A database, with its password shown once.
    const db = await waitFor(
      'database created (after the restore finished)',
      async () => {
        const res = await c.act('db_create', { database: 'world' });
        return res.statusCode === 201 ? res : null;
      },
      WAIT,
    );
    assert.match(db.json().database.name, /^s\d+_world$/);
    assert.ok(db.json().database.password.length >= 8);
    const listed = await c.read('databases');
    assert.equal(listed.json().databases.length, 1);
    assert.equal(listed.json().databases[0].password, undefined, 'passwords are not listed');

    // A subuser with Pterodactyl's permission names.
    const invite = await c.act('user_invite', { email: 'Friend@Example.net', permissions: ['control.console'] });
    assert.equal(invite.statusCode, 201, invite.body);
    assert.equal(invite.json().user.email, 'friend@example.net');
    assert.ok(invite.json().user.permissions.includes('websocket.connect'), 'the panel always adds websocket.connect');

    // Renamed on the panel; our label stays.
    const rename = await c.act('settings_rename', { name: 'Survival SMP' });
    assert.equal(rename.statusCode, 200, rename.body);
    assert.equal(panelServer(u, c.serviceId).name, 'Survival SMP');
    assert.equal((await c.read('overview')).json().server.name, 'Survival SMP');
  });
});

describe('the management route (CONTRACT §6)', () => {
  test('a read sent as POST and a mutation sent as GET are 405 with Allow; an unknown action is 422 listing them', async () => {
    const post = await c.act('files', {});
    assert.equal(post.statusCode, 405, post.body);
    assert.equal(post.headers.allow, 'GET, HEAD');
    const get = await c.read('file_write');
    assert.equal(get.statusCode, 405, get.body);
    assert.equal(get.headers.allow, 'POST');
    const unknown = await c.read('format_disk');
    assert.equal(unknown.statusCode, 422, unknown.body);
    assert.equal(unknown.json().code, 'validation_failed');
    assert.match(unknown.json().errors.action, /overview.*file_read.*reinstall/);
  });

  test('checks in order: ownership before type before state before parameters', async () => {
    const other = await gameClient(u);
    const foreign = await other.act('file_write', { path: '../x' }, c.serviceId);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(foreign.json().code, 'not_owner');
    const badParams = await c.act('file_write', { path: 42 });
    assert.equal(badParams.statusCode, 422, badParams.body);
    assert.deepEqual(Object.keys(badParams.json().errors).sort(), ['content', 'path']);
  });

  test('paths: "..", encoded, backslash and NUL forms are 400 path_traversal; the root is the server root', async () => {
    for (const path of ['../etc/passwd', '/../etc/passwd', 'logs/../../x', '%2e%2e/x', '..%2fx', 'a\\..\\b', 'a\0b']) {
      const res = await c.read('file_read', { path });
      assert.equal(res.statusCode, 400, `${JSON.stringify(path)}: ${res.body}`);
      assert.equal(res.json().code, 'path_traversal', path);
    }
    const inside = await c.read('file_read', { path: 'logs/../server.properties' });
    assert.equal(inside.statusCode, 200, inside.body);
    const absolute = await c.read('file_read', { path: '/etc/passwd' });
    assert.equal(absolute.statusCode, 404, `an absolute path is inside the server root: ${absolute.body}`);
    const rename = await c.act('files_rename', { root: '/', files: [{ from: 'eula.txt', to: '../eula.txt' }] });
    assert.equal(rename.statusCode, 400, rename.body);
    const folder = await c.act('folder_create', { root: '/', name: '../up' });
    assert.equal(folder.statusCode, 400, folder.body);
  });

  test('files: binary is 415, over 1 MiB is 413; upload streams a file in; compress and unpack', async () => {
    const jar = await c.read('file_read', { path: 'server.jar' });
    assert.equal(jar.statusCode, 415, jar.body);
    assert.equal(jar.json().code, 'binary_file');
    const big = 'x'.repeat(1024 * 1024 + 1);
    const tooBig = await c.act('file_write', { path: 'big.txt', content: big });
    assert.equal(tooBig.statusCode, 422, tooBig.body);

    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    const upload = await c.upload('/plugins', { name: 'big.bin', data });
    assert.equal(upload.statusCode, 201, upload.body);
    assert.equal(upload.json().path, '/plugins/big.bin');
    assert.deepEqual(panelFile(u, c.serviceId, 'plugins/big.bin'), data);
    const large = await c.read('file_read', { path: 'plugins/big.bin' });
    assert.equal(large.statusCode, 413, large.body);
    assert.equal(large.json().code, 'file_too_large');

    const listing = await c.read('files', { directory: '/plugins' });
    assert.ok(
      listing.json().files.some((f: { name: string; size: number }) => f.name === 'big.bin' && f.size === data.length),
    );
    const folder = await c.act('folder_create', { root: '/', name: 'world-copy' });
    assert.equal(folder.statusCode, 201, folder.body);
    await c.act('file_write', { path: 'world-copy/level.dat', content: 'level' });
    const packed = await c.act('files_compress', { root: '/', files: ['world-copy'] });
    assert.equal(packed.statusCode, 200, packed.body);
    const archive = packed.json().archive.path as string;
    const removed = await c.act('files_delete', { root: '/', files: ['world-copy'] });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(panelFile(u, c.serviceId, 'world-copy/level.dat'), null);
    const unpacked = await c.act('file_decompress', { path: archive });
    assert.equal(unpacked.statusCode, 200, unpacked.body);
    assert.equal(panelFile(u, c.serviceId, 'world-copy/level.dat')?.toString(), 'level');
    const copy = await c.act('file_copy', { path: 'world-copy/level.dat' });
    assert.equal(copy.statusCode, 200, copy.body);
    assert.equal(panelFile(u, c.serviceId, 'world-copy/level copy.dat')?.toString(), 'level');
    const download = await c.read('file_download', { path: 'world-copy/level.dat' });
    assert.equal(download.statusCode, 200, download.body);
    const fetched = await fetch(download.json().download.url);
    assert.equal(await fetched.text(), 'level');
  });

  test('plan limits: a second database is 409 limit_reached with the limit', async () => {
    const existing = (await c.read('databases')).json().databases.length;
    if (existing === 0) assert.equal((await c.act('db_create', { database: 'first' })).statusCode, 201);
    const second = await c.act('db_create', { database: 'second' });
    assert.equal(second.statusCode, 409, second.body);
    assert.equal(second.json().code, 'limit_reached');
    assert.equal(second.json().details.limit, 1);
  });

  test('reinstall: confirm must be the label; while it runs the server is installing; then active again', async () => {
    const wrong = await c.act('reinstall', { confirm: 'nope' });
    assert.equal(wrong.statusCode, 422, wrong.body);
    assert.equal(wrong.json().code, 'confirmation_mismatch');
    const res = await c.act('reinstall', { confirm: c.label });
    assert.equal(res.statusCode, 202, res.body);
    const busy = await c.read('files');
    assert.equal(busy.statusCode, 409, busy.body);
    assert.equal(busy.json().code, 'server_installing');
    await waitFor(
      'reinstalled',
      async () => {
        const job = await u.t.deps.database.db
          .selectFrom('jobs')
          .selectAll()
          .where('id', '=', res.json().job.id)
          .executeTakeFirstOrThrow();
        return job.status === 'succeeded'
          ? job
          : job.status === 'failed'
            ? assert.fail(job.error_message ?? 'failed')
            : null;
      },
      WAIT,
    );
    assert.equal((await c.read('files')).statusCode, 200);
  });
});

describe('the OpenAPI document', () => {
  test('lists every game action with its method and parameter schema (x-actions)', async () => {
    const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const path = doc.paths['/api/v1/client/game/'];
    const documented = { ...path.get['x-actions'], ...path.post['x-actions'] };
    const actions = panelActions(PRODUCTS.game);
    assert.equal(actions.length, 45, 'spec 4.9 names 44 actions; panel_password sets the panel password');
    assert.deepEqual(Object.keys(documented).sort(), actions.map((a) => a.name).sort());
    for (const a of actions) {
      const where = a.method === 'read' ? path.get : path.post;
      assert.ok(where['x-actions'][a.name], `${a.name} under ${a.method === 'read' ? 'GET' : 'POST'}`);
      assert.equal(where['x-actions'][a.name].parameters.type, 'object', a.name);
    }
  });
});

describe('the shared surfaces', () => {
  test('services list and status show the game server live; /instances lists it and runs power, console; vnc is 422', async () => {
    const list = await c.browser.get('/api/v1/client/services/');
    const mine = list.json().services.find((s: { id: number }) => s.id === c.serviceId);
    assert.equal(mine.type, 'game');
    assert.ok(['running', 'stopped', 'starting', 'stopping'].includes(mine.power), mine.power);
    const status = await c.browser.get(`/api/v1/client/services/status/?id=${c.serviceId}`);
    assert.equal(status.statusCode, 200, status.body);
    const sso = await c.browser.get(`/api/v1/client/services/?id=${c.serviceId}&action=sso`);
    assert.equal(sso.statusCode, 200, sso.body);
    assert.equal(sso.json().sso.kind, 'panel');
    assert.equal(sso.json().sso.url, `${u.ptero?.url}/server/${panelServer(u, c.serviceId).identifier}`);
    const graph = await c.browser.get(`/api/v1/client/services/graph/?id=${c.serviceId}&timeframe=hour`);
    assert.equal(graph.statusCode, 200, graph.body);

    const api = await apiClient(u.t, ['*'], '0', c.accountId);
    const instances = await api.call('GET', '/api/v1/instances');
    assert.equal(instances.statusCode, 200, instances.body);
    const inst = instances.json().instances.find((i: { id: number }) => i.id === c.serviceId);
    assert.ok(inst, instances.body);
    const start = await api.call('POST', `/api/v1/instances/${c.serviceId}/start`);
    assert.equal(start.statusCode, 202, start.body);
    const vnc = await api.call('POST', `/api/v1/instances/${c.serviceId}/vnc`);
    assert.equal(vnc.statusCode, 422, vnc.body);
    assert.equal(vnc.json().error, 'not_supported');
    const consoleTicket = await api.call('POST', `/api/v1/instances/${c.serviceId}/console`);
    assert.equal(consoleTicket.statusCode, 202, consoleTicket.body);
    assert.equal(consoleTicket.json().console.kind, 'game');
  });
});
