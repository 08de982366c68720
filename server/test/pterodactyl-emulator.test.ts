// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The Pterodactyl Panel + Wings emulator over plain HTTP and WebSocket, as a driver sees it:
// auth errors, users and servers by external id, install, files (write/read/list/copy/rename/
// compress/upload/download), the fake Minecraft console (EULA, say, list), token expiry events,
// backups (limit, throttle, restore), databases, schedules, startup variables, subusers, the
// suspended 409, and the fault knobs (down, 429, 403, Wings down, failed installs).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { type PterodactylEmulator, startPterodactylEmulator } from '../../emulators/src/pterodactyl/index.ts';

/** A parsed JSON answer (JSON.parse's own type); tests check it field by field. */
type Json = ReturnType<typeof JSON.parse>;

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

let emu: PterodactylEmulator;

before(async () => {
  emu = await startPterodactylEmulator({
    // Long enough to see a new server still installing on a loaded machine (40 ms was not).
    installDelayMs: 1000,
    startDelayMs: 80,
    backupDelayMs: 30,
    statsIntervalMs: 100,
  });
});
after(async () => {
  await emu.stop();
});

async function call(
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  options: { raw?: boolean; type?: string; target?: PterodactylEmulator } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = options.raw ? String(body) : JSON.stringify(body);
    headers['Content-Type'] = options.type ?? (options.raw ? 'text/plain' : 'application/json');
  }
  const res = await fetch(`${(options.target ?? emu).url}${path}`, { method, headers, body: payload });
  const text = await res.text();
  let json: Json = {};
  try {
    json = text === '' ? {} : (JSON.parse(text) as Json);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

const app = (method: string, path: string, body?: unknown, target = emu) =>
  call(method, `/api/application${path}`, target.appKey, body, { target });
const client = (method: string, path: string, body?: unknown, target = emu) =>
  call(method, `/api/client${path}`, target.clientKey, body, { target });

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

let users = 0;
async function makeUser(target = emu): Promise<Json> {
  users += 1;
  const r = await app(
    'POST',
    '/users',
    {
      email: `player${users}-${target.url.slice(-5)}@example.com`,
      username: `player${users}`,
      first_name: 'Play',
      last_name: 'Er',
      external_id: `acct-${users}`,
    },
    target,
  );
  assert.equal(r.status, 201, r.text);
  return r.json.attributes;
}

async function freeAllocation(target = emu): Promise<number> {
  const r = await app('GET', `/nodes/${target.panelNodeId}/allocations?filter[server_id]=`, undefined, target);
  assert.equal(r.status, 200, r.text);
  return r.json.data[0].attributes.id;
}

function serverBody(user: number, allocation: number, extra: Json = {}): Json {
  return {
    name: 'Survival',
    user,
    egg: 3,
    docker_image: 'ghcr.io/pterodactyl/yolks:java_21',
    startup: 'java -Xms128M -XX:MaxRAMPercentage=95.0 -jar {{SERVER_JARFILE}}',
    environment: { SERVER_JARFILE: 'server.jar', BUILD_NUMBER: 'latest', MINECRAFT_VERSION: 'latest' },
    limits: { memory: 2048, swap: 0, disk: 10240, io: 500, cpu: 200 },
    feature_limits: { databases: 2, backups: 3, allocations: 2 },
    allocation: { default: allocation },
    ...extra,
  };
}

/** A new, installed Paper server; returns its application attributes. */
async function installedServer(extra: Json = {}, target = emu): Promise<Json> {
  const user = await makeUser(target);
  const r = await app('POST', '/servers', serverBody(user.id, await freeAllocation(target), extra), target);
  assert.equal(r.status, 201, r.text);
  const id = r.json.attributes.id;
  await waitFor(
    'install',
    async () => (await app('GET', `/servers/${id}`, undefined, target)).json.attributes.status === null,
  );
  return (await app('GET', `/servers/${id}`, undefined, target)).json.attributes;
}

interface Console {
  ws: WebSocket;
  frames: { event: string; args?: string[] }[];
  send(event: string, ...args: string[]): void;
  next(event: string, match?: (args: string[]) => boolean): Promise<string[]>;
}

async function openConsole(identifier: string, target = emu): Promise<Console> {
  const creds = await client('GET', `/servers/${identifier}/websocket`, undefined, target);
  assert.equal(creds.status, 200, creds.text);
  assert.deepEqual(Object.keys(creds.json), ['data']);
  const ws = new WebSocket(creds.json.data.socket, { headers: { Origin: target.url } });
  const frames: Console['frames'] = [];
  ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let seen = 0;
  const c: Console = {
    ws,
    frames,
    send: (event, ...args) => ws.send(JSON.stringify({ event, args })),
    async next(event, match = () => true) {
      let found: string[] | null = null;
      await waitFor(`ws event ${event}`, () => {
        for (; seen < frames.length; seen++) {
          const f = frames[seen];
          if (f && f.event === event && match(f.args ?? [])) {
            found = f.args ?? [];
            seen++;
            return true;
          }
        }
        return false;
      });
      return found ?? [];
    },
  };
  c.send('auth', creds.json.data.token);
  await c.next('auth success');
  return c;
}

function errorOf(r: Reply): Json {
  assert.ok(Array.isArray(r.json.errors), r.text);
  return r.json.errors[0];
}

describe('pterodactyl emulator', () => {
  test('auth: missing or wrong key 401, key of the wrong type 403, malformed JSON 400', async () => {
    const none = await call('GET', '/api/application/users', null);
    assert.equal(none.status, 401);
    assert.deepEqual(errorOf(none), { code: 'AuthenticationException', status: '401', detail: 'Unauthenticated.' });
    const wrong = await call('GET', '/api/client', `ptlc_${'x'.repeat(43)}`);
    assert.equal(wrong.status, 401);
    const appOnClient = await call('GET', '/api/client', emu.appKey);
    assert.equal(appOnClient.status, 403);
    assert.equal(
      errorOf(appOnClient).detail,
      'You are attempting to use an application API key on an endpoint that requires a client API key.',
    );
    const clientOnApp = await call('GET', '/api/application/users', emu.clientKey);
    assert.equal(clientOnApp.status, 403);
    assert.equal(errorOf(clientOnApp).code, 'AccessDeniedHttpException');
    const bad = await call('POST', '/api/application/users', emu.appKey, '{nope', {
      raw: true,
      type: 'application/json',
    });
    assert.equal(bad.status, 400);
    assert.match(errorOf(bad).detail, /^The JSON data passed in the request appears to be malformed: /);
    const noAccept = await fetch(`${emu.url}/api/application/users`, { redirect: 'manual' });
    assert.equal(noAccept.status, 302, 'without Accept: application/json Laravel redirects to the login');
    assert.equal(noAccept.headers.get('location'), `${emu.url}/auth/login`);
    assert.equal(emu.appKey.length, 48);
    assert.ok(emu.clientKey.startsWith('ptlc_'));
  });

  test('application: users by external id, 422 on duplicates, servers created installing then null', async () => {
    const user = await makeUser();
    const found = await app('GET', `/users?filter[external_id]=${user.external_id}`);
    assert.equal(found.json.object, 'list');
    assert.ok(found.json.data.some((u: Json) => u.attributes.id === user.id));
    assert.deepEqual(found.json.meta.pagination.links, []);
    assert.equal((await app('GET', `/users/external/${user.external_id}`)).json.attributes.email, user.email);
    assert.equal((await app('GET', '/users/external/nobody')).status, 404);
    const dup = await app('POST', '/users', {
      email: user.email,
      username: user.username,
      first_name: 'A',
      last_name: 'B',
    });
    assert.equal(dup.status, 422);
    assert.deepEqual(
      dup.json.errors.map((e: Json) => [e.meta.source_field, e.meta.rule]),
      [
        ['email', 'unique'],
        ['username', 'unique'],
      ],
    );

    const egg = await app('GET', '/nests/1/eggs/3?include=variables');
    assert.equal(egg.json.attributes.docker_images['Java 21'], 'ghcr.io/pterodactyl/yolks:java_21');
    const vars = egg.json.attributes.relationships.variables.data.map((v: Json) => v.attributes.env_variable);
    assert.ok(vars.includes('SERVER_JARFILE') && vars.includes('BUILD_NUMBER'));

    const allocation = await freeAllocation();
    const badEnv = await app(
      'POST',
      '/servers',
      serverBody(user.id, allocation, { environment: { SERVER_JARFILE: 'server.zip' } }),
    );
    assert.equal(badEnv.status, 422);
    const fields = badEnv.json.errors.map((e: Json) => e.meta.source_field);
    assert.deepEqual(fields, ['environment.SERVER_JARFILE', 'environment.BUILD_NUMBER']);
    assert.equal(badEnv.json.errors[0].detail, 'The Server Jar File variable format is invalid.');

    const created = await app('POST', '/servers', serverBody(user.id, allocation, { external_id: 'svc-1' }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.attributes.status, 'installing');
    assert.equal(created.json.attributes.container.installed, 0);
    const taken = await app('POST', '/servers', serverBody(user.id, allocation, { external_id: 'svc-1' }));
    assert.equal(taken.status, 422);
    assert.deepEqual(taken.json.errors.map((e: Json) => e.meta.source_field).sort(), [
      'allocation.default',
      'external_id',
    ]);
    const installing = await client('GET', `/servers/${created.json.attributes.identifier}/resources`);
    assert.equal(installing.status, 409);
    assert.equal(
      errorOf(installing).detail,
      'This server has not yet completed its installation process, please try again later.',
    );
    const overview = await client('GET', `/servers/${created.json.attributes.identifier}`);
    assert.equal(overview.status, 200, 'the overview answers while installing');
    assert.deepEqual(overview.json.meta.user_permissions.slice(0, 1), ['*']);
    await waitFor(
      'installed',
      async () => (await app('GET', '/servers/external/svc-1')).json.attributes?.status === null,
    );
    const byExternal = await app('GET', '/servers?filter[external_id]=svc-1');
    assert.equal(byExternal.json.data[0].attributes.id, created.json.attributes.id);
    const used = await app('GET', `/nodes/1/allocations?filter[server_id]=${created.json.attributes.id}`);
    assert.deepEqual(
      used.json.data.map((a: Json) => a.attributes.id),
      [allocation],
    );
    const stillOwns = await app('DELETE', `/users/${user.id}`);
    assert.equal(stillOwns.status, 400);
    assert.match(errorOf(stillOwns).detail, /^Cannot delete a user with active servers/);
    assert.equal((await app('DELETE', `/servers/${created.json.attributes.id}`)).status, 204);
    assert.equal((await app('DELETE', `/users/${user.id}`)).status, 204);
  });

  test('files: the fresh Paper tree, write/read/list, copy names, rename, compress/decompress, paths, limits', async () => {
    const s = await installedServer();
    const base = `/servers/${s.identifier}/files`;
    const root = await client('GET', `${base}/list?directory=/`);
    const names = root.json.data.map((f: Json) => f.attributes.name);
    assert.deepEqual(names, ['logs', 'plugins', 'eula.txt', 'server.jar', 'server.properties']);
    const props = await call('GET', `/api/client${base}/contents?file=server.properties`, emu.clientKey);
    assert.equal(props.headers.get('content-type'), 'text/plain');
    assert.match(props.text, /^max-players=20$/m);
    assert.match(props.text, /^motd=/m);
    assert.match(props.text, /^server-port=\d+$/m);
    const jar = emu.state.files.get(s.id)?.get('server.jar');
    assert.ok(jar?.content.includes(0), 'server.jar is binary');

    const write = await call('POST', `/api/client${base}/write?file=/config/a.yml`, emu.clientKey, 'a: 1\n', {
      raw: true,
    });
    assert.equal(write.status, 204);
    assert.equal(write.text, '');
    assert.equal((await call('GET', `/api/client${base}/contents?file=config/a.yml`, emu.clientKey)).text, 'a: 1\n');
    const dir = await client('GET', `${base}/contents?file=/config`);
    assert.equal(dir.status, 400);
    assert.match(errorOf(dir).detail, /file is a directory/);
    const outside = await client('GET', `${base}/contents?file=../../etc/passwd`);
    assert.equal(outside.status, 404);
    assert.equal(errorOf(outside).code, 'DaemonConnectionException');
    const missing = await client('GET', `${base}/list?directory=/nope`);
    assert.equal(missing.status, 404);

    const big = 'x'.repeat(4 * 1024 * 1024 + 1);
    await call('POST', `/api/client${base}/write?file=big.log`, emu.clientKey, big, { raw: true });
    const tooBig = await client('GET', `${base}/contents?file=big.log`);
    assert.equal(tooBig.status, 400);
    assert.equal(
      errorOf(tooBig).detail,
      'The file you are attempting to open is too large to view in the file editor.',
    );

    assert.equal((await client('POST', `${base}/copy`, { location: '/config/a.yml' })).status, 204);
    assert.equal((await client('POST', `${base}/copy`, { location: '/config/a.yml' })).status, 204);
    const copies = (await client('GET', `${base}/list?directory=/config`)).json.data.map(
      (f: Json) => f.attributes.name,
    );
    assert.deepEqual(copies, ['a copy 1.yml', 'a copy.yml', 'a.yml']);
    assert.equal(
      (await client('PUT', `${base}/rename`, { root: '/config', files: [{ from: 'a copy.yml', to: '../b.yml' }] }))
        .status,
      204,
    );
    assert.ok(emu.state.files.get(s.id)?.has('b.yml'));
    const clash = await client('PUT', `${base}/rename`, { root: '/', files: [{ from: 'b.yml', to: 'eula.txt' }] });
    assert.equal(clash.status, 400);

    const compressed = await client('POST', `${base}/compress`, { root: '/', files: ['config', 'b.yml'] });
    assert.equal(compressed.status, 200, compressed.text);
    assert.equal(compressed.json.object, 'file_object');
    const archive = compressed.json.attributes.name as string;
    assert.match(archive, /^archive-\d{4}-\d{2}-\d{2}T\d{6}Z\.tar\.gz$/);
    assert.equal((await client('POST', `${base}/delete`, { root: '/', files: ['config', 'b.yml'] })).status, 204);
    assert.equal((await client('POST', `${base}/decompress`, { root: '/', file: archive })).status, 204);
    assert.equal((await call('GET', `/api/client${base}/contents?file=config/a.yml`, emu.clientKey)).text, 'a: 1\n');
    assert.equal((await client('POST', `${base}/create-folder`, { root: '/', name: 'world' })).status, 204);
    assert.equal(
      (await client('POST', `${base}/chmod`, { root: '/', files: [{ file: 'b.yml', mode: '600' }] })).status,
      204,
    );
    const listed = (await client('GET', `${base}/list`)).json.data.find((f: Json) => f.attributes.name === 'b.yml');
    assert.equal(listed.attributes.mode, '-rw-------');
    assert.equal(listed.attributes.mode_bits, '600');
    const activity = await client('GET', `/servers/${s.identifier}/activity?per_page=100`);
    const events = activity.json.data.map((a: Json) => a.attributes.event);
    assert.ok(events.includes('server:file.write'));
    assert.ok(events.includes('server:file.compress'));
  });

  test('files: signed upload (multipart, streamed) and download URLs on Wings, single use', async () => {
    const s = await installedServer();
    const base = `/servers/${s.identifier}/files`;
    const up = await client('GET', `${base}/upload`);
    assert.equal(up.json.object, 'signed_url');
    const uploadUrl = up.json.attributes.url as string;
    assert.ok(uploadUrl.startsWith(`${emu.wingsUrl}/upload/file?token=`));
    const data = Buffer.alloc(300_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
    const form = new FormData();
    form.append('files', new Blob([data]), 'plugin.jar');
    form.append('files', new Blob(['hello']), 'notes.txt');
    const sent = await fetch(`${uploadUrl}&directory=/plugins`, { method: 'POST', body: form });
    assert.equal(sent.status, 200);
    assert.deepEqual(emu.state.files.get(s.id)?.get('plugins/plugin.jar')?.content, data);
    const again = await fetch(`${uploadUrl}&directory=/plugins`, { method: 'POST', body: form });
    assert.equal(again.status, 404, 'an upload token works once');

    const down = await client('GET', `${base}/download?file=/plugins/plugin.jar`);
    assert.equal(down.json.object, 'signed_url');
    const got = await fetch(down.json.attributes.url);
    assert.equal(got.status, 200);
    assert.match(got.headers.get('content-disposition') ?? '', /attachment; filename="plugin.jar"/);
    assert.deepEqual(Buffer.from(await got.arrayBuffer()), data);
  });

  test('console: EULA not accepted stops the boot; accepted runs; say/list over the socket and the API', async () => {
    const s = await installedServer();
    const id = s.identifier;
    const con = await openConsole(id);
    assert.deepEqual(await con.next('status'), ['offline']);
    const offlineStats = JSON.parse((await con.next('stats'))[0] ?? '{}');
    assert.equal(offlineStats.state, 'offline');
    assert.equal((await client('POST', `/servers/${id}/power`, { signal: 'start' })).status, 204);
    await con.next('status', (a) => a[0] === 'starting');
    await con.next(
      'console output',
      (a) =>
        a[0]?.includes('You need to agree to the EULA in order to run the server. Go to eula.txt for more info.') ??
        false,
    );
    await con.next('status', (a) => a[0] === 'offline');
    const offline = await client('POST', `/servers/${id}/command`, { command: 'say hi' });
    assert.equal(offline.status, 502);
    assert.equal(errorOf(offline).detail, 'Server must be online in order to send commands.');

    await call('POST', `/api/client/servers/${id}/files/write?file=eula.txt`, emu.clientKey, 'eula=true\n', {
      raw: true,
    });
    con.send('set state', 'start');
    await con.next('console output', (a) => a[0]?.includes('Done (2.345s)! For help, type "help"') ?? false);
    await con.next('status', (a) => a[0] === 'running');
    const running = await client('GET', `/servers/${id}/resources`);
    assert.equal(running.json.object, 'stats');
    assert.equal(running.json.attributes.current_state, 'running');
    assert.ok(running.json.attributes.resources.memory_bytes > 0);
    await con.next('stats', (a) => JSON.parse(a[0] ?? '{}').state === 'running');

    con.send('send command', 'say hello');
    await con.next('console output', (a) => a[0]?.endsWith('[Server] hello') ?? false);
    assert.equal((await client('POST', `/servers/${id}/command`, { command: 'list' })).status, 204);
    await con.next('console output', (a) => a[0]?.includes('There are 0 of a max of 20 players online: ') ?? false);
    assert.equal((await client('POST', `/servers/${id}/command`, { command: 'op Steve' })).status, 204);
    await con.next('console output', (a) => a[0]?.endsWith('Made Steve a server operator') ?? false);
    await client('POST', `/servers/${id}/command`, { command: 'fly' });
    await con.next('console output', (a) => a[0]?.endsWith('Unknown command. Type "/help" for help.') ?? false);
    const log = emu.state.files.get(s.id)?.get('logs/latest.log')?.content.toString() ?? '';
    assert.match(log, /\[Server\] hello/);

    con.send('send logs');
    await con.next('console output', (a) => a[0]?.includes('Starting org.bukkit.craftbukkit.Main') ?? false);
    assert.equal(
      (await client('POST', `/servers/${id}/power`, { signal: 'start' })).status,
      204,
      'start while running',
    );
    assert.equal((await client('POST', `/servers/${id}/power`, { signal: 'stop' })).status, 204);
    await con.next('status', (a) => a[0] === 'stopping');
    await con.next('status', (a) => a[0] === 'offline');
    const events = (await client('GET', `/servers/${id}/activity?filter[event]=power`)).json.data.map(
      (a: Json) => a.attributes.event,
    );
    assert.ok(events.includes('server:power.start') && events.includes('server:power.stop'));
    con.ws.close();

    const foreign = new WebSocket(`${emu.wingsUrl.replace('http', 'ws')}/api/servers/${s.uuid}/ws`, {
      headers: { Origin: 'http://evil.example' },
    });
    const refused = await new Promise<number>((resolve) => {
      foreign.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      foreign.on('open', () => resolve(101));
      foreign.on('error', () => {});
    });
    assert.equal(refused, 403);

    // A valid token of another server: Wings answers `auth success` without checking it
    // (unsafeSendJson), then every push fails TokenValid: `jwt error` "jwt: server uuid mismatch".
    const other = await installedServer();
    const creds = await client('GET', `/servers/${other.identifier}/websocket`);
    const mixed = new WebSocket(`${emu.wingsUrl.replace('http', 'ws')}/api/servers/${s.uuid}/ws`, {
      headers: { Origin: emu.url },
    });
    const got: Json[] = [];
    mixed.on('message', (d) => got.push(JSON.parse(d.toString())));
    await new Promise((r) => mixed.once('open', r));
    mixed.send(JSON.stringify({ event: 'auth', args: [creds.json.data.token] }));
    await waitFor('mismatch', () => got.some((f) => f.event === 'jwt error'));
    assert.deepEqual(got.slice(0, 2), [
      { event: 'auth success' },
      { event: 'jwt error', args: ['jwt: server uuid mismatch'] },
    ]);
    mixed.close();
  });

  test('console token: expiring, expired, then jwt error until a fresh auth', async () => {
    const short = await startPterodactylEmulator({ installDelayMs: 10, tokenTtlSeconds: 2, tokenCheckMs: 50 });
    try {
      const s = await installedServer({}, short);
      const con = await openConsole(s.identifier, short);
      await con.next('token expiring');
      await con.next('token expired');
      con.send('send stats');
      const err = await con.next('jwt error');
      assert.equal(err[0], 'jwt: exp claim is invalid');
      const fresh = await client('GET', `/servers/${s.identifier}/websocket`, undefined, short);
      con.send('auth', fresh.json.data.token);
      await con.next('auth success');
      con.send('send stats');
      await con.next('stats');
      con.ws.close();
    } finally {
      await short.stop();
    }
  });

  test('backups: create, complete with checksum, restore the tree, limit 400 and throttle 429', async () => {
    const s = await installedServer();
    const base = `/servers/${s.identifier}/backups`;
    const created = await client('POST', base, { name: 'first' });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.json.attributes.completed_at, null);
    const uuid = created.json.attributes.uuid;
    await waitFor('backup', async () => (await client('GET', `${base}/${uuid}`)).json.attributes.completed_at !== null);
    const done = (await client('GET', `${base}/${uuid}`)).json.attributes;
    assert.equal(done.is_successful, true);
    assert.match(done.checksum, /^sha1:[0-9a-f]{40}$/);
    assert.ok(done.bytes > 0);
    const listed = await client('GET', base);
    assert.equal(listed.json.meta.backup_count, 1);

    await call(
      'POST',
      `/api/client/servers/${s.identifier}/files/write?file=server.properties`,
      emu.clientKey,
      'motd=x\n',
      {
        raw: true,
      },
    );
    await call('POST', `/api/client/servers/${s.identifier}/files/write?file=junk.txt`, emu.clientKey, 'junk', {
      raw: true,
    });
    const restore = await client('POST', `${base}/${uuid}/restore`, { truncate: true });
    assert.equal(restore.status, 204);
    const busy = await client('GET', `/servers/${s.identifier}/files/list`);
    assert.equal(busy.status, 409);
    assert.equal(errorOf(busy).detail, 'This server is currently restoring from a backup, please try again later.');
    await waitFor('restored', async () => (await app('GET', `/servers/${s.id}`)).json.attributes.status === null);
    const props = await call(
      'GET',
      `/api/client/servers/${s.identifier}/files/contents?file=server.properties`,
      emu.clientKey,
    );
    assert.match(props.text, /^max-players=20$/m);
    assert.equal(emu.state.files.get(s.id)?.has('junk.txt'), false);
    const missingTruncate = await client('POST', `${base}/${uuid}/restore`, {});
    assert.equal(missingTruncate.status, 422);

    const link = await client('GET', `${base}/${uuid}/download`);
    const archive = await fetch(link.json.attributes.url);
    assert.equal(archive.status, 200);
    assert.equal(Number(archive.headers.get('content-length')), done.bytes);

    assert.equal((await client('POST', base, { name: 'second' })).status, 200);
    const throttled = await client('POST', base, { name: 'third' });
    assert.equal(throttled.status, 429);
    assert.equal(errorOf(throttled).detail, 'Only 2 backups may be generated within a 600 second span of time.');
    assert.ok(Number(throttled.headers.get('retry-after')) > 0);

    const limited = await installedServer({ feature_limits: { databases: 0, backups: 1 } });
    assert.equal((await client('POST', `/servers/${limited.identifier}/backups`, {})).status, 200);
    const full = await client('POST', `/servers/${limited.identifier}/backups`, {});
    assert.equal(full.status, 400);
    assert.equal(errorOf(full).detail, 'Cannot create a new backup, this server has reached its limit of 1 backups.');
    const locked = await client('POST', `${base}/${uuid}/lock`);
    assert.equal(locked.json.attributes.is_locked, true);
    assert.equal((await client('DELETE', `${base}/${uuid}`)).status, 400);
  });

  test('databases: prefixed names, password only when asked, rotate, limit', async () => {
    const s = await installedServer({ feature_limits: { databases: 1, backups: 1 } });
    const base = `/servers/${s.identifier}/databases`;
    const made = await client('POST', base, { database: 'world', remote: '%' });
    assert.equal(made.status, 200, made.text);
    const db = made.json.attributes;
    assert.equal(db.name, `s${s.id}_world`);
    assert.match(db.username, new RegExp(`^u${s.id}_[A-Za-z0-9]{10}$`));
    assert.deepEqual(db.host, { address: '127.0.0.1', port: 3306 });
    const password = db.relationships.password.attributes.password;
    assert.equal(typeof password, 'string');
    const plain = await client('GET', base);
    assert.equal(plain.json.data[0].attributes.relationships, undefined);
    const withPw = await client('GET', `${base}?include=password`);
    assert.equal(withPw.json.data[0].attributes.relationships.password.attributes.password, password);
    const rotated = await client('POST', `${base}/${db.id}/rotate-password`);
    assert.notEqual(rotated.json.attributes.relationships.password.attributes.password, password);
    const over = await client('POST', base, { database: 'other', remote: '%' });
    assert.equal(over.status, 400);
    const badName = await client('POST', base, { database: 'no spaces', remote: '%' });
    assert.equal(badName.status, 422);
    assert.equal((await client('DELETE', `${base}/${db.id}`)).status, 204);
  });

  test('schedules: cron errors, tasks, execute runs the command on the console', async () => {
    const s = await installedServer();
    await call('POST', `/api/client/servers/${s.identifier}/files/write?file=eula.txt`, emu.clientKey, 'eula=true', {
      raw: true,
    });
    const base = `/servers/${s.identifier}/schedules`;
    const cron = { minute: '*/5', hour: '*', day_of_month: '*', month: '*', day_of_week: '*' };
    const bad = await client('POST', base, { name: 'bad', ...cron, minute: '99' });
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad).detail, 'The cron data provided does not evaluate to a valid expression.');
    // The next run lies after the moment the schedule was made (compared with the clock read
    // before the request: the next */5 minute may already have come by the time the answer does).
    const before = Date.now();
    const made = await client('POST', base, { name: 'announce', is_active: true, only_when_online: false, ...cron });
    assert.equal(made.status, 200, made.text);
    const schedule = made.json.attributes;
    assert.ok(Date.parse(schedule.next_run_at) > before);
    const empty = await client('POST', `${base}/${schedule.id}/execute`);
    assert.equal(empty.status, 400);
    const task = await client('POST', `${base}/${schedule.id}/tasks`, {
      action: 'command',
      payload: 'say scheduled',
      time_offset: 0,
    });
    assert.equal(task.json.object, 'schedule_task');
    assert.equal((await client('POST', `/servers/${s.identifier}/power`, { signal: 'start' })).status, 204);
    await waitFor('running', () => emu.state.runtime.get(s.id)?.state === 'running');
    const run = await client('POST', `${base}/${schedule.id}/execute`);
    assert.equal(run.status, 202);
    assert.equal(run.text, '[]');
    await waitFor('scheduled command', () =>
      (emu.state.runtime.get(s.id)?.console ?? []).some((l) => l.endsWith('[Server] scheduled')),
    );
    const listed = await client('GET', base);
    assert.equal(listed.json.data[0].attributes.relationships.tasks.data.length, 1);
    // The panel's scheduler runs a due schedule by itself.
    const stored = emu.state.schedules.get(schedule.id);
    assert.ok(stored);
    await waitFor('not processing', () => !stored.isProcessing);
    await client('POST', `${base}/${schedule.id}/tasks/${task.json.attributes.id}`, {
      action: 'command',
      payload: 'say by cron',
      time_offset: 0,
    });
    stored.nextRunAt = new Date(Date.now() - 1000).toISOString();
    await waitFor('the scheduler', () =>
      (emu.state.runtime.get(s.id)?.console ?? []).some((l) => l.endsWith('[Server] by cron')),
    );
    await client('POST', `/servers/${s.identifier}/power`, { signal: 'kill' });
  });

  test('startup: variables listed with meta, rules enforced, unknown and read-only refused', async () => {
    const s = await installedServer();
    const base = `/servers/${s.identifier}/startup`;
    const listed = await client('GET', base);
    assert.ok(listed.json.meta.startup_command.includes('server.jar'));
    assert.equal(listed.json.meta.docker_images['Java 21'], 'ghcr.io/pterodactyl/yolks:java_21');
    assert.ok(
      !listed.json.data.some((v: Json) => v.attributes.env_variable === 'DL_PATH'),
      'hidden variables stay hidden',
    );
    const bad = await client('PUT', `${base}/variable`, { key: 'SERVER_JARFILE', value: 'paper.zip' });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.errors[0].meta.source_field, 'value');
    const ok = await client('PUT', `${base}/variable`, { key: 'SERVER_JARFILE', value: 'paper.jar' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.attributes.server_value, 'paper.jar');
    assert.ok(ok.json.meta.startup_command.includes('paper.jar'));
    const unknown = await client('PUT', `${base}/variable`, { key: 'NOPE', value: 'x' });
    assert.equal(unknown.status, 400);
    assert.equal(errorOf(unknown).detail, 'The environment variable you are trying to edit does not exist.');

    const valheim = await makeUser();
    const r = await app('POST', '/servers', {
      ...serverBody(valheim.id, await freeAllocation()),
      egg: 14,
      environment: { SERVER_NAME: 'Viking', WORLD: 'Midgard', PASSWORD: 'secret1', PUBLIC: '1', SRCDS_APPID: '896660' },
    });
    assert.equal(r.status, 201, r.text);
    await waitFor(
      'valheim',
      async () => (await app('GET', `/servers/${r.json.attributes.id}`)).json.attributes.status === null,
    );
    const readOnly = await client('PUT', `/servers/${r.json.attributes.identifier}/startup/variable`, {
      key: 'SRCDS_APPID',
      value: '1',
    });
    assert.equal(readOnly.status, 400);
    assert.equal(errorOf(readOnly).detail, 'The environment variable you are trying to edit is read-only.');
  });

  test('subusers: invite creates a panel user, websocket.connect always added, owner and duplicates refused', async () => {
    const s = await installedServer();
    const base = `/servers/${s.identifier}/users`;
    const before = emu.state.users.size;
    const invited = await client('POST', base, { email: 'friend@example.com', permissions: ['control.console'] });
    assert.equal(invited.status, 200, invited.text);
    assert.equal(invited.json.object, 'server_subuser');
    assert.deepEqual(invited.json.attributes.permissions.sort(), ['control.console', 'websocket.connect']);
    assert.equal(emu.state.users.size, before + 1);
    const again = await client('POST', base, { email: 'friend@example.com', permissions: ['file.read'] });
    assert.equal(again.status, 400);
    const noPermissions = await client('POST', base, { email: 'other@example.com', permissions: [] });
    assert.equal(noPermissions.status, 422, 'an empty permission list fails "required"');
    const owner = emu.state.users.get(s.user);
    const self = await client('POST', base, { email: owner?.email, permissions: ['file.read'] });
    assert.equal(self.status, 400);
    assert.equal(errorOf(self).detail, 'You cannot add the server owner as a subuser for this server.');
    const uuid = invited.json.attributes.uuid;
    const updated = await client('POST', `${base}/${uuid}`, { permissions: ['file.read', 'file.fly'] });
    assert.deepEqual(updated.json.attributes.permissions.sort(), ['file.read', 'websocket.connect']);
    assert.equal((await client('DELETE', `${base}/${uuid}`)).status, 204);
    assert.equal((await client('GET', base)).json.data.length, 0);
  });

  test('suspended: every client route but the overview answers 409; reinstall goes back to installing', async () => {
    const s = await installedServer();
    assert.equal((await app('POST', `/servers/${s.id}/suspend`)).status, 204);
    const blocked = await client('GET', `/servers/${s.identifier}/files/list`);
    assert.equal(blocked.status, 409);
    assert.deepEqual(errorOf(blocked), {
      code: 'ServerStateConflictException',
      status: '409',
      detail: 'This server is currently suspended and the functionality requested is unavailable.',
    });
    assert.equal((await client('GET', `/servers/${s.identifier}/websocket`)).status, 409);
    const view = await client('GET', `/servers/${s.identifier}`);
    assert.equal(view.json.attributes.is_suspended, true);
    assert.equal((await app('POST', `/servers/${s.id}/unsuspend`)).status, 204);
    assert.equal((await client('GET', `/servers/${s.identifier}/files/list`)).status, 200);
    const reinstall = await client('POST', `/servers/${s.identifier}/settings/reinstall`);
    assert.equal(reinstall.status, 202);
    assert.equal(reinstall.text, '[]');
    assert.equal((await app('GET', `/servers/${s.id}`)).json.attributes.status, 'installing');
    await waitFor('reinstalled', async () => (await app('GET', `/servers/${s.id}`)).json.attributes.status === null);
    assert.equal((await client('POST', `/servers/${s.identifier}/settings/rename`, { name: 'Renamed' })).status, 204);
    assert.equal((await app('GET', `/servers/${s.id}`)).json.attributes.name, 'Renamed');
  });

  test('faults: down, rate limited, forbidden, Wings unreachable, failed installs, lost answers', async () => {
    const s = await installedServer();
    try {
      await emu.setFaults({ down: true });
      await assert.rejects(fetch(`${emu.url}/api/client`, { headers: { Authorization: `Bearer ${emu.clientKey}` } }));
      await emu.setFaults({ down: false, rateLimitNext: 1 });
      const limited = await client('GET', '');
      assert.equal(limited.status, 429);
      assert.deepEqual(errorOf(limited), {
        code: 'ThrottleRequestsException',
        status: '429',
        detail: 'Too Many Attempts.',
      });
      assert.equal(limited.headers.get('retry-after'), '2');
      assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
      assert.equal((await client('GET', '')).status, 200);

      await emu.setFaults({ forbidNext: 1 });
      const denied = await client('GET', `/servers/${s.identifier}/files/list`);
      assert.equal(denied.status, 403);
      assert.equal(errorOf(denied).detail, 'This action is unauthorized.');

      await emu.setFaults({ wingsDown: true });
      const noWings = await client('POST', `/servers/${s.identifier}/power`, { signal: 'start' });
      assert.equal(noWings.status, 504);
      assert.deepEqual(errorOf(noWings), {
        code: 'DaemonConnectionException',
        status: '504',
        detail: 'Could not establish a connection to the machine running this server. Please try again.',
      });
      assert.equal((await client('GET', `/servers/${s.identifier}`)).status, 200, 'the overview needs no Wings');
      await assert.rejects(fetch(`${emu.wingsUrl}/download/file?token=x`));
      await emu.setFaults({ wingsDown: false });
      const back = await openConsole(s.identifier);
      assert.deepEqual(await back.next('status'), ['offline'], 'Wings is back: consoles open again');
      back.ws.close();

      await emu.setFaults({ failInstalls: 1 });
      assert.equal((await app('POST', `/servers/${s.id}/reinstall`)).status, 204);
      await waitFor(
        'failed',
        async () => (await app('GET', `/servers/${s.id}`)).json.attributes.status === 'reinstall_failed',
      );
      const failedView = await client('GET', `/servers/${s.identifier}`);
      assert.equal(failedView.json.attributes.is_installing, false, 'reinstall_failed counts as installed');
      assert.equal((await client('GET', `/servers/${s.identifier}/files/list`)).status, 200);

      const control = await fetch(`${emu.url}/__emulator/faults`, {
        method: 'POST',
        body: JSON.stringify({ loseNext: 'POST /api/application/users' }),
      });
      assert.equal(control.status, 200);
      await assert.rejects(
        fetch(`${emu.url}/api/application/users`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${emu.appKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ email: 'lost@example.com', username: 'lost', first_name: 'L', last_name: 'O' }),
        }),
      );
      assert.ok(emu.state.userByEmail('lost@example.com'), 'the work was done');
      const state = (await (await fetch(`${emu.url}/__emulator/state`)).json()) as Json;
      assert.ok(state.calls['POST /api/application/users'] > 0);
      assert.ok((emu.calls.get('GET /api/client/servers/:/files/list') ?? 0) > 0);
    } finally {
      emu.reset();
    }
  });

  test('state file: servers, files and keys survive a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ptero-emu-'));
    try {
      const file = join(dir, 'panel.json');
      const first = await startPterodactylEmulator({ stateFile: file, installDelayMs: 10 });
      const s = await installedServer({}, first);
      await call('POST', `/api/client/servers/${s.identifier}/files/write?file=keep.txt`, first.clientKey, 'kept', {
        raw: true,
        target: first,
      });
      const keys = [first.appKey, first.clientKey];
      await first.stop();
      const second = await startPterodactylEmulator({ stateFile: file });
      try {
        assert.deepEqual([second.appKey, second.clientKey], keys);
        const back = await call(
          'GET',
          `/api/client/servers/${s.identifier}/files/contents?file=keep.txt`,
          second.clientKey,
          undefined,
          {
            target: second,
          },
        );
        assert.equal(back.text, 'kept');
        assert.equal((await app('GET', `/servers/${s.id}`, undefined, second)).json.attributes.external_id, null);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
