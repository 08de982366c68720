// ci: one engine (the CLI is a client of the HTTP surfaces; every API path it calls runs on both engines in the other files)
// The `hostplane` CLI (issue 17, CONTRACT §9) as a person runs it: the real binary
// (cli/bin/hostplane.js) as a child process, each with a HOME and XDG_CONFIG_HOME of its own,
// against the real app listening on 127.0.0.1 with an emulated Proxmox node and the worker:
// login (good, bad, from standard input), the config file's mode, contexts, lists in table and
// json, a deploy followed to active, power, delete with and without confirmation, snapshots,
// SSH keys, an unreachable URL, a 429 retried, and the exit codes 0 / 1 / 2.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as forward, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sshpk from 'sshpk';
import { freePort } from './support/process.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { ROOT } from './support/template.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const BIN = join(ROOT, 'cli/bin/hostplane.js');

let u: UpstreamApp;
let url: string;
let owner: ApiClient;
const homes: string[] = [];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-cli-'));
  homes.push(dir);
  return dir;
}

/** Run the binary to its end with only these variables (plus PATH), standard input `input`. */
function hostplane(
  dir: string,
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      HOSTPLANE_POLL_MS: '50',
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(options.input ?? '');
  // A guard against a hang, not a measure.
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    }),
  );
}

function ok(r: Result): Result {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** A home already logged in to the test server with the owner's token. */
async function loggedIn(): Promise<string> {
  const dir = home();
  ok(await hostplane(dir, ['login', '--url', url, '--token', owner.secret]));
  return dir;
}

function ed25519(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'pem');
  key.comment = comment;
  return key.toString('ssh');
}

before(async () => {
  u = await createUpstreamApp();
  url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  owner = await apiClient(u.t, ['*']);
});

after(async () => {
  await u.close();
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

describe('hostplane login and contexts', () => {
  test('a bad token: exit 1, the API message with its request id, nothing saved', async () => {
    const dir = home();
    const r = await hostplane(dir, ['login', '--url', url, '--token', 'svc_not_a_real_token']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /invalid_token, HTTP 401, request id \S+\)/);
    assert.equal(r.stdout, '');
    assert.equal(existsSync(join(dir, 'config/hostplane/config.json')), false);
  });

  test('a good token: saved 0600 in a 0700 directory; whoami in table and json', async () => {
    const dir = home();
    const login = ok(await hostplane(dir, ['login', '--url', url, '--token', owner.secret]));
    assert.match(login.stdout, new RegExp(`Logged in to ${url} as ${owner.email} \\(context default`));
    const file = join(dir, 'config/hostplane/config.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'config/hostplane')).mode & 0o777, 0o700);
    const who = ok(await hostplane(dir, ['whoami']));
    assert.match(who.stdout, new RegExp(`account\\s+.*<${owner.email}>`));
    assert.match(who.stdout, /context\s+default/);
    const json = JSON.parse(ok(await hostplane(dir, ['whoami', '-o', 'json'])).stdout);
    assert.equal(json.account.email, owner.email);
    assert.deepEqual(json.token.scopes, ['*']);
  });

  test('without XDG_CONFIG_HOME the file is ~/.config/hostplane/config.json', async () => {
    const dir = home();
    ok(await hostplane(dir, ['login', '--url', url, '--token', owner.secret], { env: { XDG_CONFIG_HOME: '' } }));
    assert.equal(statSync(join(dir, '.config/hostplane/config.json')).mode & 0o777, 0o600);
  });

  test('the token read from standard input (no echo prompt); contexts list and use', async () => {
    const dir = await loggedIn();
    const other = await apiClient(u.t, ['read']);
    const staging = await hostplane(dir, ['login', '--url', url, '--context', 'staging'], {
      input: `${other.secret}\n`,
    });
    ok(staging);
    assert.match(staging.stderr, /API token for http:\/\/127\.0\.0\.1:\d+: /);
    assert.equal(staging.stderr.includes(other.secret), false, 'the token is not echoed');
    assert.equal(staging.stdout.includes(other.secret), false);

    const list = JSON.parse(ok(await hostplane(dir, ['context', 'list', '-o', 'json'])).stdout);
    assert.deepEqual(list, [
      { name: 'default', url, current: false },
      { name: 'staging', url, current: true },
    ]);
    assert.equal(JSON.parse(ok(await hostplane(dir, ['whoami', '-o', 'json'])).stdout).account.email, other.email);

    ok(await hostplane(dir, ['context', 'use', 'default']));
    const table = ok(await hostplane(dir, ['context', 'list'])).stdout;
    assert.match(table, /^\*\s+default\s+http/m);
    assert.match(table, /^\s+staging\s+http/m);
    assert.equal(JSON.parse(ok(await hostplane(dir, ['whoami', '-o', 'json'])).stdout).account.email, owner.email);
    // One command on another context without switching.
    const once = ok(await hostplane(dir, ['whoami', '-o', 'json', '--context', 'staging']));
    assert.equal(JSON.parse(once.stdout).account.email, other.email);

    const unknown = await hostplane(dir, ['context', 'use', 'nope']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /no context named nope/);

    ok(await hostplane(dir, ['logout', '--context', 'staging']));
    assert.deepEqual(
      JSON.parse(ok(await hostplane(dir, ['context', 'list', '-o', 'json'])).stdout).map(
        (c: { name: string }) => c.name,
      ),
      ['default'],
    );
  });

  test('not logged in is exit 1; HOSTPLANE_TOKEN and HOSTPLANE_URL need no config file', async () => {
    const dir = home();
    const none = await hostplane(dir, ['whoami']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /not logged in: run `hostplane login`/);
    const env = ok(
      await hostplane(dir, ['whoami', '-o', 'json'], { env: { HOSTPLANE_TOKEN: owner.secret, HOSTPLANE_URL: url } }),
    );
    assert.equal(JSON.parse(env.stdout).account.email, owner.email);
  });

  test('bad usage is exit 2', async () => {
    const dir = await loggedIn();
    for (const args of [
      [],
      ['frobnicate'],
      ['instances', 'frobnicate'],
      ['instances', 'list', '-o', 'yaml'],
      ['instances', 'show'],
      ['instances', 'power', '1', 'explode'],
      ['instances', 'list', '--no-such-flag'],
      ['instances', 'create', '--hostname', 'x'],
    ]) {
      const r = await hostplane(dir, args);
      assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
      assert.ok(r.stderr.length > 0, `${args.join(' ')} says why`);
    }
    const help = ok(await hostplane(dir, ['--help']));
    assert.match(help.stdout, /instances/);
    assert.match(help.stdout, /Exit codes: 0 done, 1 API or connection error, 2 bad usage/);
  });

  test('the workspace bin (what npx hostplane runs) and shell completion', async () => {
    const dir = home();
    const child = spawn(join(ROOT, 'node_modules/.bin/hostplane'), ['--version'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    });
    let version = '';
    child.stdout.on('data', (chunk: Buffer) => {
      version += chunk.toString();
    });
    assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0);
    assert.match(version, /^\d+\.\d+\.\d+\n$/);
    const script = ok(await hostplane(dir, ['completion'])).stdout;
    assert.match(script, /hostplane --get-yargs-completions/);
    const words = ok(await hostplane(dir, ['--get-yargs-completions', 'hostplane', 'instances', ''])).stdout;
    for (const command of ['list', 'show', 'create', 'power', 'delete'])
      assert.match(words, new RegExp(`^${command}$`, 'm'));
  });

  test('an unreachable URL: a clear message, exit 1', async () => {
    const dir = home();
    const port = await freePort();
    const r = await hostplane(dir, ['whoami', '--url', `http://127.0.0.1:${port}`], {
      env: { HOSTPLANE_TOKEN: owner.secret },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
    assert.match(r.stderr, /Is the server running/);
    assert.equal(r.stdout, '');
  });
});

describe('hostplane instances', () => {
  let dir: string;
  let id: number;

  before(async () => {
    dir = await loggedIn();
  });

  test('plans list in table and json', async () => {
    const table = ok(await hostplane(dir, ['plans', 'list'])).stdout;
    assert.match(table, /^LABEL\s+NAME\s+TYPE/m);
    assert.match(table, /^vps-1c-1g\s+.*kvm\s+1 vCPU, 1 GB RAM, 25 GB disk/m);
    const plans = JSON.parse(ok(await hostplane(dir, ['plans', 'list', '-o', 'json'])).stdout);
    assert.ok(plans.some((p: { label: string; type: string }) => p.label === 'vps-1c-1g' && p.type === 'kvm'));
    const quote = JSON.parse(ok(await hostplane(dir, ['quote', 'vps-1c-1g', '-o', 'json'])).stdout);
    assert.equal(quote.plan.label, 'vps-1c-1g');
    assert.equal(quote.price.currency, 'INR');
  });

  test('create follows the job to active; list shows it in table and json', async () => {
    const r = ok(await hostplane(dir, ['instances', 'create', '--plan', 'vps-1c-1g', '--hostname', 'cli-web1']));
    // Not a terminal: one line per change of the job instead of a bar.
    const lines = r.stderr.split('\n').filter((l) => /^create cli-web1: job \d+ /.test(l));
    assert.ok(lines.length >= 1, r.stderr);
    const percents = lines.map((l) => Number(/ (\d+)%/.exec(l)?.[1]));
    assert.deepEqual(
      percents,
      [...percents].sort((a, b) => a - b),
      'progress only grows',
    );
    assert.match(lines.at(-1) ?? '', /succeeded 100%/);
    assert.match(r.stdout, /^status\s+active$/m);
    id = Number(/^id\s+(\d+)$/m.exec(r.stdout)?.[1]);
    assert.ok(id > 0);

    const table = ok(await hostplane(dir, ['instances', 'list'])).stdout;
    assert.match(table, /^ID\s+LABEL\s+TYPE\s+STATUS\s+POWER\s+ADDRESS\s+REGION\s+PLAN$/m);
    assert.match(
      table,
      new RegExp(`^${id}\\s+cli-web1\\s+vps\\s+active\\s+\\S+\\s+\\d+\\.\\d+\\.\\d+\\.\\d+\\s+\\w+\\s+vps-1c-1g$`, 'm'),
    );
    assert.equal(table.includes('\u001b['), false, 'no colour when stdout is not a terminal');

    const list = JSON.parse(ok(await hostplane(dir, ['instances', 'list', '-o', 'json'])).stdout);
    const mine = list.find((i: { id: number }) => i.id === id);
    assert.equal(mine.label, 'cli-web1');
    assert.equal(mine.status, 'active');
    // Every type's list (GET /api/v1/instances): a KVM instance is a vps there.
    assert.equal(mine.type, 'vps');

    const shown = JSON.parse(ok(await hostplane(dir, ['instances', 'show', String(id), '-o', 'json'])).stdout);
    assert.equal(shown.id, id);
    assert.equal(typeof shown.credentials.password, 'string');
    const showTable = ok(await hostplane(dir, ['instances', 'show', String(id)])).stdout;
    assert.equal(showTable.includes(shown.credentials.password), false, 'the password only with --show-password');
    assert.ok(
      ok(await hostplane(dir, ['instances', 'show', String(id), '--show-password'])).stdout.includes(
        shown.credentials.password,
      ),
    );
  });

  test('create -o json prints the instance, order and finished job', async () => {
    const r = ok(
      await hostplane(dir, ['instances', 'create', '--plan', 'vps-1c-1g', '--hostname', 'cli-web2', '-o', 'json']),
    );
    const out = JSON.parse(r.stdout);
    assert.equal(out.instance.status, 'active');
    assert.equal(out.job.status, 'succeeded');
    assert.equal(out.order.status, 'paid');
    // Deleted without a question.
    const del = ok(await hostplane(dir, ['instances', 'delete', String(out.instance.id), '--yes', '-o', 'json']));
    assert.equal(JSON.parse(del.stdout).status, 'succeeded');
    const gone = await owner.call('GET', `/cloud/v1/instances/${out.instance.id}`);
    assert.ok(gone.statusCode === 404 || gone.json().instance.status === 'terminated', gone.body);
  });

  test('power: reboot and shutdown followed to the end; start again', async () => {
    const reboot = ok(await hostplane(dir, ['instances', 'power', String(id), 'reboot']));
    assert.match(reboot.stdout, new RegExp(`Instance ${id}: reboot done`));
    const shutdown = JSON.parse(
      ok(await hostplane(dir, ['instances', 'power', String(id), 'shutdown', '-o', 'json'])).stdout,
    );
    assert.equal(shutdown.status, 'succeeded');
    await waitFor('stopped', async () => {
      const i = JSON.parse(ok(await hostplane(dir, ['instances', 'show', String(id), '-o', 'json'])).stdout);
      return i.power === 'stopped';
    });
    ok(await hostplane(dir, ['instances', 'power', String(id), 'start']));
  });

  test('snapshots: create, list, delete', async () => {
    ok(await hostplane(dir, ['snapshots', 'create', String(id), 'before_upgrade']));
    const list = JSON.parse(ok(await hostplane(dir, ['snapshots', 'list', String(id), '-o', 'json'])).stdout);
    assert.deepEqual(
      list.snapshots.map((s: { id: string }) => s.id),
      ['before_upgrade'],
    );
    assert.equal(typeof list.limit, 'number');
    ok(await hostplane(dir, ['snapshots', 'delete', String(id), 'before_upgrade']));
  });

  test('ssh-keys: add reads ~/.ssh/id_ed25519.pub by default; list; delete', async () => {
    mkdirSync(join(dir, '.ssh'));
    const line = ed25519('asha@laptop');
    writeFileSync(join(dir, '.ssh/id_ed25519.pub'), `${line}\n`);
    const added = JSON.parse(ok(await hostplane(dir, ['ssh-keys', 'add', '-o', 'json'])).stdout);
    assert.equal(added.name, 'asha@laptop');
    const table = ok(await hostplane(dir, ['ssh-keys', 'list'])).stdout;
    assert.match(table, new RegExp(`^${added.id}\\s+asha@laptop\\s+ssh-ed25519\\s+SHA256:`, 'm'));
    ok(await hostplane(dir, ['ssh-keys', 'delete', String(added.id)]));
    assert.deepEqual(JSON.parse(ok(await hostplane(dir, ['ssh-keys', 'list', '-o', 'json'])).stdout), []);
    const missing = await hostplane(dir, ['ssh-keys', 'add', join(dir, 'nope.pub')]);
    assert.equal(missing.code, 2);
  });

  test('billing and invoices', async () => {
    const billing = JSON.parse(ok(await hostplane(dir, ['billing', '-o', 'json'])).stdout);
    assert.equal(billing.wallet.currency, 'INR');
    assert.match(ok(await hostplane(dir, ['billing'])).stdout, /^balance\s+₹\d+\.\d\d$/m);
    const invoices = JSON.parse(ok(await hostplane(dir, ['invoices', '-o', 'json'])).stdout);
    assert.ok(invoices.length >= 2);
  });

  test('an API error: exit 1 with the code and request id; -o json puts the envelope on stderr', async () => {
    const r = await hostplane(dir, ['instances', 'show', '987654']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\(not_owner, HTTP 404, request id \S+\)/);
    const j = await hostplane(dir, ['instances', 'show', '987654', '-o', 'json']);
    assert.equal(j.code, 1);
    assert.equal(j.stdout, '');
    const e = JSON.parse(j.stderr).error;
    assert.equal(e.code, 'not_owner');
    assert.equal(e.status, 404);
    assert.equal(typeof e.request_id, 'string');
  });

  test('delete asks for the label: a wrong answer deletes nothing (exit 1), the label deletes', async () => {
    const wrong = await hostplane(dir, ['instances', 'delete', String(id)], { input: 'cli-web\n' });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /Type its label \(cli-web1\) to confirm/);
    assert.match(wrong.stderr, /the label does not match: nothing was deleted/);
    assert.equal((await owner.call('GET', `/cloud/v1/instances/${id}`)).json().instance.status, 'active');

    const closed = await hostplane(dir, ['instances', 'delete', String(id)]);
    assert.equal(closed.code, 1, 'no answer (standard input closed) deletes nothing');

    const right = ok(await hostplane(dir, ['instances', 'delete', String(id)], { input: 'cli-web1\n' }));
    assert.match(right.stdout, new RegExp(`Instance ${id} \\(cli-web1\\) deleted`));
  });
});

describe('hostplane against a server that rate-limits', () => {
  let stub: Server;
  let stubUrl: string;
  let limited = 0;

  before(async () => {
    // In front of the real server: the first list is answered 429 with Retry-After: 1.
    stub = createServer((req, res) => {
      if (req.url?.startsWith('/api/v1/instances') && limited === 0) {
        limited++;
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1', 'x-request-id': 'stub-1' });
        res.end(
          JSON.stringify({
            ok: false,
            error: 'rate_limited',
            status: 429,
            message: 'Slow down.',
            request_id: 'stub-1',
          }),
        );
        return;
      }
      const target = new URL(req.url ?? '/', url);
      const proxied = forward(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(proxied);
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const address = stub.address();
    stubUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  after(() => new Promise<void>((resolve) => stub.close(() => resolve())));

  test('a 429 is retried after its Retry-After, and the command succeeds', async () => {
    const dir = home();
    const r = ok(
      await hostplane(dir, ['instances', 'list', '-o', 'json', '--url', stubUrl], {
        env: { HOSTPLANE_TOKEN: owner.secret },
      }),
    );
    assert.equal(limited, 1);
    assert.match(r.stderr, /server answered 429; retrying in 1 s \(retry 1\)/);
    assert.ok(Array.isArray(JSON.parse(r.stdout)));
  });
});
