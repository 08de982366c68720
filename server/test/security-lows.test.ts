// Security review 3, low findings L1, L3 (server side), L5 and L6, through the real surfaces:
// L1: the game console relay holds back what Wings sends only to panel administrators (the
//     install script's output, the detail of daemon errors): the relay's JWT is a root admin's.
// L3: a snapshot description with control or bidi characters is 422 on both surfaces that take it.
// L5: an order `config` nested 10,000 or 100,000 levels deep is 422 validation_failed naming
//     config, never a 500 (the idempotency hash walked it recursively).
// L6: with a DATA_DIR too long for a Unix socket path, the admin socket lives in a private
//     directory, never at a predictable name in the shared temporary directory, and the staff CLI
//     finds it; an entry planted at the old name changes nothing.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { runRemote, startAdminSocket } from '../src/admin/socket.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type GameClient, gameClient } from './support/game.ts';
import { freePort, runNode, runToEnd, waitForJson } from './support/process.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WAIT = 60_000;
let u: UpstreamApp;
let wsBase: string;
const dirs: string[] = [];

before(async () => {
  // A slow start holds Wings' power lock for a second (startDelayMs / 4): long enough to meet it.
  u = await createUpstreamApp({ game: { startDelayMs: 4000 } });
  const address = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  wsBase = address.replace(/^http/, 'ws');
});
after(async () => {
  await u.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Frame {
  event: string;
  args?: string[];
}

describe('T3-L1: admin-only console events never reach the customer', () => {
  let c: GameClient;
  before(async () => {
    c = await gameClient(u, { order: true });
  });

  test('a reinstall shows install started/completed but no install output; a daemon error carries no detail', async () => {
    const ticket = await c.act('console_ws');
    assert.equal(ticket.statusCode, 200, ticket.body);
    const ws = new WebSocket(`${wsBase}/ws/console/?t=${ticket.json().console.ticket}`);
    const frames: Frame[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      await waitFor('the first status frame', async () => frames.some((f) => f.event === 'status'), WAIT);

      // An unknown power action: Wings tells an administrator why ("unknown power action").
      ws.send(JSON.stringify({ event: 'set state', args: ['explode'] }));
      const error = await waitFor('a daemon error', async () => frames.find((f) => f.event === 'daemon error'), WAIT);
      assert.match(error.args?.[0] ?? '', /^Error Event \[[^\]]+\]: an unexpected error was encountered/);
      assert.doesNotMatch(JSON.stringify(error), /power action/);

      const res = await c.act('reinstall', { confirm: c.label });
      assert.equal(res.statusCode, 202, res.body);
      await waitFor('install completed', async () => frames.some((f) => f.event === 'install completed'), WAIT);
      const events = frames.map((f) => f.event);
      assert.ok(events.includes('install started'), events.join());
      assert.ok(!events.includes('install output'), `install output reached the customer: ${events.join()}`);
      assert.ok(!JSON.stringify(frames).includes('Docker container image'), 'no line of the install script');

      // What Wings tells every user passes as it is: a power action while another holds the lock.
      ws.send(JSON.stringify({ event: 'set state', args: ['start'] }));
      ws.send(JSON.stringify({ event: 'set state', args: ['restart'] }));
      const busy = await waitFor(
        'the power lock',
        async () => frames.find((f) => f.event === 'daemon error' && f.args?.[0]?.includes('another power action')),
        WAIT,
      );
      assert.match(busy.args?.[0] ?? '', /^Error Event \[[^\]]+\]: another power action is currently being processed/);
    } finally {
      ws.close();
    }
  });
});

interface Owner {
  api: ApiClient;
  browser: Browser;
  id: number;
}
let owner: Owner | null = null;
/** A funded account, signed in and with a `*` token, that owns one running VPS (made once). */
async function withVps(): Promise<Owner> {
  if (owner) return owner;
  const { browser, account } = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(account.id, '5000', 'test float');
  const api = await apiClient(u.t, ['*'], '0', account.id);
  const res = await api.call('POST', '/api/v1/instances', {
    plan: 'vps-1c-1g',
    server_name: 'lows1',
    eula: true,
    region: 'mum1',
    idempotency_key: 'lows-vps-1',
  });
  assert.equal(res.statusCode, 201, res.body);
  const jobId = res.json().job.id;
  const job = await waitFor(
    `job ${jobId}`,
    async () => {
      const j = (await api.call('GET', `/api/v1/jobs/${jobId}`)).json().job;
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
  assert.equal(job.status, 'succeeded');
  owner = { api, browser, id: res.json().instance.id };
  return owner;
}

/** The review's probe (an OSC 52 clipboard write, a carriage return and line erase) and its kin. */
const PROBES = [
  'x\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3N8c2g=\x07\r\x1b[2K',
  'two\nlines',
  'csi\u009b2J',
  'del\x7f',
  'tab\there',
  'evil\u202etxt.exe',
  'isolate\u2066x\u2069',
];

describe('T3-L3: snapshot descriptions hold no control or bidi characters', () => {
  test('/cloud/v1 and /api/v1/client/vps/: 422 validation_failed naming description; nothing is taken', async () => {
    const { api, browser, id } = await withVps();
    for (const description of PROBES) {
      const cloud = await api.call('POST', `/cloud/v1/instances/${id}/snapshots`, {
        action: 'create',
        name: 'probe',
        description,
      });
      assert.equal(cloud.statusCode, 422, `${JSON.stringify(description)}: ${cloud.body}`);
      assert.equal(cloud.json().error, 'validation_failed');
      assert.match(cloud.json().details.fields.description, /control characters/);

      const session = await browser.post(
        `/api/v1/client/vps/?service=${id}&action=snapshot_create`,
        { name: 'probe', description },
        { csrf: true },
      );
      assert.equal(session.statusCode, 422, `${JSON.stringify(description)}: ${session.body}`);
      assert.equal(session.json().code, 'validation_failed');
      assert.match(session.json().errors.description, /control characters/);
    }
    const list = await api.call('GET', `/cloud/v1/instances/${id}/snapshots`);
    assert.deepEqual(list.json().snapshots, [], 'no snapshot was taken');
    // Plain text (accents, emoji, a right-to-left script without overrides) is still welcome.
    const fine = await api.call('POST', `/cloud/v1/instances/${id}/snapshots`, {
      action: 'create',
      name: 'fine',
      description: 'avant la mise à jour 🚀 قبل التحديث',
    });
    assert.equal(fine.statusCode, 202, fine.body);
  });
});

describe('T3-L5: an order config nested deep is 422, never 500', () => {
  test('arrays and objects nested 10,000 and 100,000 levels: 422 validation_failed naming config', async () => {
    const { browser } = await signedInBrowser(u.t, freshIp());
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    let n = 0;
    for (const depth of [10_000, 100_000]) {
      for (const [open, close] of [
        ['[', ']'],
        ['{"a":', '}'],
      ] as const) {
        // Written by hand: JSON.stringify itself would overflow the stack on such a value.
        const config = `{"hostname":${open.repeat(depth)}1${close.repeat(depth)}}`;
        const body = `{"plan_id":${plan.id},"idempotency_key":"deep-${++n}","config":${config}}`;
        assert.ok(Buffer.byteLength(body) < 1024 * 1024, 'under the body limit');
        const res = await browser.post('/api/v1/client/orders/', body, {
          csrf: true,
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.statusCode, 422, `${depth} × ${open}: ${res.body}`);
        assert.equal(res.json().code, 'validation_failed');
        assert.match(res.json().errors.config, /no nested objects or lists/);
      }
    }
    // The shape every real order has still passes the bound (and fails later on its own merits).
    const flat = await browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, idempotency_key: 'flat-1', config: { hostname: 'ok1', ssh_keys: ['not a key'] } },
      { csrf: true },
    );
    assert.equal(flat.statusCode, 422, flat.body);
    assert.equal(flat.json().code, 'bad_config_ssh_keys');
    assert.equal(flat.json().errors.config, undefined);
  });
});

/** A fresh DATA_DIR whose admin.sock would not fit in sun_path (about 150 bytes). */
function longDataDir(): string {
  const base = mkdtempSync(join(tmpdir(), 'hostplane-lows-'));
  dirs.push(base);
  const dir = join(base, 'a'.repeat(60), 'b'.repeat(60));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  assert.ok(Buffer.byteLength(join(dir, 'admin.sock')) > 108);
  return dir;
}

/** Where the socket went before: a name anyone could work out from DATA_DIR, in the shared tmp. */
function oldPredictablePath(dataDir: string): string {
  return join(tmpdir(), `hostplane-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.sock`);
}

/** Another user's entry, as far as this process can make one (root can give it away). */
function plant(path: string): void {
  mkdirSync(path, { mode: 0o755 });
  writeFileSync(join(path, 'squat'), 'not yours');
  dirs.push(path);
  if (process.getuid?.() === 0) chownSync(path, 65534, 65534);
}

const isRoot = process.getuid?.() === 0;

describe('T3-L6: the admin socket of a long DATA_DIR', () => {
  test('npm start with an entry planted at the old name: starts, and npm run admin works through a private socket', async () => {
    const dataDir = longDataDir();
    plant(oldPredictablePath(dataDir));
    const port = await freePort();
    const server = runNode('server/src/main.ts', [], {
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'info',
      DEMO: '0',
    });
    try {
      // A hang guard only: the machine may be busy with other test files.
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, server, 300_000);
      const path = await waitFor('the socket pointer', async () => {
        try {
          return readFileSync(join(dataDir, 'admin.sock.path'), 'utf8').trim();
        } catch {
          return null;
        }
      });
      assert.equal(statSync(join(dataDir, 'admin.sock.path')).mode & 0o777, 0o600);
      assert.notEqual(path, oldPredictablePath(dataDir));
      assert.equal(statSync(dirname(path)).mode & 0o777, 0o700, 'a directory only we can enter');
      assert.equal(statSync(dirname(path)).uid, process.getuid?.());
      assert.ok(statSync(path).isSocket());

      const info = await runToEnd(
        'server/src/admin/main.ts',
        ['system', 'info', '--json'],
        { DATA_DIR: dataDir },
        180_000,
      );
      assert.equal(info.code, 0, info.output);
      assert.equal(JSON.parse(info.output).engine, 'pglite');

      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
      assert.throws(() => statSync(dirname(path)), /ENOENT/, 'the private directory goes with the server');
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  test('XDG_RUNTIME_DIR is used when it is ours and private, else a private directory of our own', async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'hp-xdg-'));
    dirs.push(runtime);
    for (const [mode, inRuntime] of [
      [0o700, true],
      [0o755, false],
    ] as const) {
      chmodSync(runtime, mode);
      const dataDir = longDataDir();
      const server = await startAdminSocket(u.t.deps, dataDir, { XDG_RUNTIME_DIR: runtime });
      try {
        const path = readFileSync(join(dataDir, 'admin.sock.path'), 'utf8').trim();
        assert.equal(dirname(path) === runtime, inRuntime, `${mode.toString(8)}: ${path}`);
        assert.equal(statSync(dirname(path)).mode & 0o077, 0, 'no one else may enter');
        const info = await runRemote(dataDir, ['system', 'info', '--json'], 'staff:lows');
        assert.equal(info.exitCode, 0, info.stderr);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  test('an entry of another user at the chosen path: refused with a clear message', {
    skip: !isRoot && "needs root to make another user's entry",
  }, async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'hp-xdg-'));
    dirs.push(runtime);
    const dataDir = longDataDir();
    const first = await startAdminSocket(u.t.deps, dataDir, { XDG_RUNTIME_DIR: runtime });
    let path: string;
    try {
      path = readFileSync(join(dataDir, 'admin.sock.path'), 'utf8').trim();
    } finally {
      await new Promise((resolve) => first.close(resolve));
    }
    writeFileSync(path, '');
    chownSync(path, 65534, 65534);
    await assert.rejects(startAdminSocket(u.t.deps, dataDir, { XDG_RUNTIME_DIR: runtime }), (error: Error) => {
      assert.equal(error.name, 'ConfigError');
      assert.match(error.message, /exists and belongs to another user \(uid 65534\)/);
      return true;
    });
  });
});
