// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// Security review 3, L3 and L4: the `hostplane` CLI (the real binary, as cli.test.ts runs it).
// L3: a string from the server (a name, a snapshot description, an error message) never reaches
//     the terminal as control or bidi characters: a hostile or intercepted server cannot write the
//     clipboard (OSC 52), erase or forge lines; `-o json` keeps the exact values, escaped.
// L4: `ssh-keys add` refuses a private key or anything that is not one public-key line before
//     any request; `login --token` warns that argv is readable; plain http:// is refused for any
//     host but this machine unless --insecure is given.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sshpk from 'sshpk';
import { ROOT } from './support/template.ts';

const BIN = join(ROOT, 'cli/bin/hostplane.js');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const homes: string[] = [];
function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-cli3-'));
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
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), ...options.env },
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

/** The review's probe: an OSC 52 clipboard write, a carriage return and line erase, a forged row. */
const PROBE = 'snap\x1b]52;c;Y3VybCBldmlsfHNo\x07\r\x1b[2K\n99  forged  row';
const NAME = 'Eve\u202eoxe.exe\u009b2J';
const SECRET = 'svc_hostile_server_token';

/** No byte a terminal acts on: C0 but the line feed, DEL, C1, bidi overrides and isolates. */
function assertInert(output: string, what: string) {
  const bad = output.match(/(?!\n)[\p{Cc}\u202a-\u202e\u2066-\u2069]/u);
  assert.equal(bad, null, `${what} holds U+${bad?.[0]?.codePointAt(0)?.toString(16).padStart(4, '0')}:\n${output}`);
}

/** A server that answers like Hostplane with hostile strings, and records every request. */
let hostile: Server;
let hostileUrl: string;
const seen: { method: string; url: string; body: string }[] = [];

function answer(req: IncomingMessage): [number, unknown] {
  const path = (req.url ?? '').split('?')[0];
  if (path === '/api/v1/me') {
    return [
      200,
      {
        ok: true,
        account: { id: 1, name: NAME, email: 'eve@example.in\r\x1b[2K', username: 'eve\x1b[8m' },
        wallet: { balance: '10.00\x1b]0;owned\x07', currency: 'INR' },
        token: { id: 1, name: `t${PROBE}`, scopes: ['*\x1b[5m'], expires_at: null },
      },
    ];
  }
  if (path === '/cloud/v1/instances/10/snapshots') {
    return [
      200,
      {
        ok: true,
        snapshots: [
          { id: 's1', name: 's1', description: PROBE, created_at: '2026-01-01T00:00:00.000+00:00', parent: null },
        ],
        limit: '3\x1b[2J',
      },
    ];
  }
  if (path === '/cloud/v1/ssh-keys' && req.method === 'POST') {
    return [201, { ok: true, ssh_key: { id: 7, name: NAME, type: 'ssh-ed25519', fingerprint: `SHA256:${PROBE}` } }];
  }
  return [
    404,
    {
      ok: false,
      error: 'not_owner\x1b]0;x\x07',
      status: 404,
      message: `gone${PROBE}\nerror: this line is forged`,
      request_id: 'req\x1b[1m',
    },
  ];
}

before(async () => {
  hostile = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      const [status, payload] = answer(req);
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'hostile' });
      res.end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  const address = hostile.address();
  hostileUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

after(async () => {
  await new Promise<void>((resolve) => hostile.close(() => resolve()));
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ HOSTPLANE_TOKEN: SECRET, HOSTPLANE_URL: hostileUrl });

describe('T3-L3: server strings reach the terminal inert', () => {
  test('login and whoami: names, e-mail, token name and scopes as visible escapes; -o json keeps the values', async () => {
    const dir = home();
    const login = await hostplane(dir, ['login', '--url', hostileUrl], { input: `${SECRET}\n` });
    assert.equal(login.code, 0, login.stderr);
    assertInert(login.stdout, 'login');
    assert.match(login.stdout, /as eve@example\.in\\r\\x1b\[2K \(context default; token tsnap\\x1b\]52;c;/);

    const who = await hostplane(dir, ['whoami']);
    assert.equal(who.code, 0, who.stderr);
    assertInert(who.stdout, 'whoami');
    assert.ok(who.stdout.includes('Eve\\u202eoxe.exe\\u009b2J <eve@example.in\\r\\x1b[2K>'), who.stdout);
    assert.ok(who.stdout.includes('\\x07\\r\\x1b[2K\\n99  forged  row (id 1)'), who.stdout);
    assert.equal(who.stdout.trimEnd().split('\n').length, 8, 'one line per field, none forged');

    const json = await hostplane(dir, ['whoami', '-o', 'json']);
    assertInert(json.stdout, 'whoami -o json');
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.account.name, NAME);
    assert.equal(parsed.token.name, `t${PROBE}`);
  });

  test('snapshots list: the description cannot forge a row; the limit note is escaped too', async () => {
    const r = await hostplane(home(), ['snapshots', 'list', '10'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assertInert(r.stdout, 'snapshots list');
    assertInert(r.stderr, 'snapshots list (stderr)');
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, `a header and one row:\n${r.stdout}`);
    assert.ok(!lines.some((l) => /^99\s/.test(l)), 'no forged row');
    assert.ok(r.stdout.includes('snap\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\r\\x1b[2K\\n99  forged  row'), r.stdout);
    assert.match(r.stderr, /1 of 3\\x1b\[2J snapshots/);
  });

  test('an error message: one inert line on stderr; -o json puts the exact envelope there, escaped', async () => {
    const r = await hostplane(home(), ['instances', 'show', '99'], { env: env() });
    assert.equal(r.code, 1);
    assertInert(r.stderr, 'error');
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^error: gone.*\\nerror: this line is forged \(not_owner\\x1b\]0;x\\x07, HTTP 404/);
    const j = await hostplane(home(), ['instances', 'show', '99', '-o', 'json'], { env: env() });
    assertInert(j.stderr, 'error -o json');
    assert.equal(JSON.parse(j.stderr).error.message, `gone${PROBE}\nerror: this line is forged`);
  });

  test('with colour on, only the CLI’s own colour codes are raw', async () => {
    const r = await hostplane(home(), ['snapshots', 'list', '10'], { env: { ...env(), FORCE_COLOR: '1' } });
    assert.equal(r.code, 0, r.stderr);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes are what is looked for
    const own = /\u001b\[[0-9;]*m/g;
    assert.ok(own.test(r.stdout), 'the header is bold');
    assertInert(r.stdout.replace(own, ''), 'snapshots list with colour');
  });
});

function privateKeys(dir: string): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const openssh = sshpk.parsePrivateKey(pem, 'pem').toString('ssh-private');
  const files: Record<string, string> = {
    id_ed25519: openssh,
    'key.pem': pem,
    'hello.pub': 'hello world\n',
    'two.pub': `${ed25519Line('a@x')}\n${ed25519Line('b@x')}\n`,
    'authorized_keys.pub': `# my keys\n${ed25519Line('c@x')}\n`,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
  return files;
}

function ed25519Line(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const key = sshpk.parseKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'pem');
  key.comment = comment;
  return key.toString('ssh');
}

describe('T3-L4: secrets stay on this machine', () => {
  test('ssh-keys add refuses a private key and anything but one public-key line, before any request', async () => {
    const dir = home();
    privateKeys(dir);
    seen.length = 0;
    for (const file of ['id_ed25519', 'key.pem']) {
      const r = await hostplane(dir, ['ssh-keys', 'add', join(dir, file)], { env: env() });
      assert.equal(r.code, 2, `${file}: ${r.stderr}`);
      assert.match(r.stderr, /is a PRIVATE key: it was not sent/);
      assert.ok(r.stderr.includes(`${join(dir, file)}.pub`), r.stderr);
    }
    for (const file of ['hello.pub', 'two.pub', 'authorized_keys.pub']) {
      const r = await hostplane(dir, ['ssh-keys', 'add', join(dir, file)], { env: env() });
      assert.equal(r.code, 2, `${file}: ${r.stderr}`);
      assert.match(r.stderr, /is not an OpenSSH public key: expected one line/);
    }
    assert.deepEqual(seen, [], 'nothing was sent');

    // One public-key line goes out as it is (the comment names it).
    const line = ed25519Line('asha@laptop');
    mkdirSync(join(dir, '.ssh'));
    writeFileSync(join(dir, '.ssh/id_ed25519.pub'), `${line}\n`);
    const added = await hostplane(dir, ['ssh-keys', 'add'], { env: env() });
    assert.equal(added.code, 0, added.stderr);
    assertInert(added.stdout, 'ssh-keys add');
    // (Typed again: the assertion above narrowed `seen` to an empty array.)
    const sent = seen as { method: string; url: string; body: string }[];
    assert.equal(sent.length, 1);
    assert.deepEqual(JSON.parse(sent[0]?.body ?? '{}'), { name: 'asha@laptop', public_key: line });
  });

  test('login --token warns that the command line is readable; the prompt and HOSTPLANE_TOKEN do not', async () => {
    const flag = await hostplane(home(), ['login', '--url', hostileUrl, '--token', SECRET]);
    assert.equal(flag.code, 0, flag.stderr);
    assert.match(flag.stderr, /warning: --token puts the token where other users of this machine can read it/);
    assert.match(flag.stderr, /HOSTPLANE_TOKEN/);
    for (const [input, extra] of [
      [`${SECRET}\n`, {}],
      ['', { HOSTPLANE_TOKEN: SECRET }],
    ] as const) {
      const quiet = await hostplane(home(), ['login', '--url', hostileUrl], { input, env: extra });
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.doesNotMatch(quiet.stderr, /warning/);
    }
  });

  test('http:// to another machine is refused (exit 2, nothing sent) unless --insecure; loopback is fine', async () => {
    const port = new URL(hostileUrl).port;
    // 0.0.0.0 reaches this machine's listeners on Linux, but it is not a loopback address.
    const remote = `http://0.0.0.0:${port}`;
    seen.length = 0;
    for (const [args, extra] of [
      [['whoami', '--url', remote], { HOSTPLANE_TOKEN: SECRET }],
      [['whoami'], { HOSTPLANE_TOKEN: SECRET, HOSTPLANE_URL: 'http://panel.example.in' }],
      [['login', '--url', 'http://192.0.2.10:8080', '--token', SECRET], {}],
    ] as const) {
      const r = await hostplane(home(), [...args], { env: extra });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /is plain http:\/\/ to another machine: the token would cross the network unencrypted/);
      assert.match(r.stderr, /--insecure/);
    }
    // A context saved before this rule (or by hand) is held to it too.
    const dir = home();
    mkdirSync(join(dir, 'config/hostplane'), { recursive: true });
    writeFileSync(
      join(dir, 'config/hostplane/config.json'),
      JSON.stringify({ current: 'old', contexts: { old: { url: remote, token: SECRET } } }),
    );
    assert.equal((await hostplane(dir, ['whoami'])).code, 2);
    assert.deepEqual(seen, [], 'nothing was sent');

    const insecure = await hostplane(dir, ['whoami', '--insecure', '-o', 'json']);
    assert.equal(insecure.code, 0, insecure.stderr);
    assert.equal(seen.length, 1);
    for (const url of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const r = await hostplane(home(), ['whoami', '-o', 'json', '--url', url], { env: { HOSTPLANE_TOKEN: SECRET } });
      assert.equal(r.code, 0, `${url}: ${r.stderr}`);
    }
    // ::1 is accepted too (nothing listens there: the refusal would be exit 2, not "cannot reach").
    const v6 = await hostplane(home(), ['whoami', '--url', `http://[::1]:${port}`], {
      env: { HOSTPLANE_TOKEN: SECRET },
    });
    assert.equal(v6.code, 1, v6.stderr);
    assert.match(v6.stderr, /cannot reach/);
  });
});
