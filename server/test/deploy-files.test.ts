// ci: one engine (the files of deploy/, checked by systemd's and Caddy's own tools; the install runs on an embedded database of its own)
//
// Every file docs/DEPLOYMENT.md shows lives in deploy/ and is exercised here:
// - the systemd units: `systemd-analyze verify` (no warning allowed) and `systemd-analyze security --offline`
//   on copies whose node binary and checkout directory are this machine's (verify refuses a unit whose
//   ExecStart binary does not exist, and /usr/local/bin/node and /opt/hostplane are not here). Only those
//   two paths are substituted; every other line is verified as written. The units are not started: this
//   machine's PID 1 is not systemd, so the sandbox options are checked by systemd's parser, not run;
// - the environment example: every name a variable of config.ts, read alike by sh (deploy/hostplane-admin)
//   and the EnvironmentFile parser, its placeholders refused by loadConfig, everything else accepted;
// - the Caddyfile: `caddy validate`, `caddy fmt` (unchanged), its body limits against the app's;
// - the documented install (the env file, the proxy with a local CA on a loopback port): the panel, the
//   session API and the token API answer through Caddy over TLS, the console WebSocket path reaches the
//   app, /metrics is not served through the proxy, and the client's address arrives through
//   X-Forwarded-For from Caddy only.
// A missing tool (systemd-analyze, caddy) skips its tests with the reason outside CI and fails them in CI.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, VARIABLES } from '../src/config.ts';
import { MAX_UPLOAD_BYTES } from '../src/core/deposits/uploads.ts';
import { MAX_ANY_FILE_BYTES } from '../src/http/plugins/session-auth.ts';
import { BODY_LIMIT } from '../src/http/server.ts';
import { freePortInRange, runNode, tempDirs, waitForJson } from './support/process.ts';
import { ROOT } from './support/template.ts';

const DEPLOY = join(ROOT, 'deploy');
const UNITS = [
  'hostplane-api.service',
  'hostplane-api@.service',
  'hostplane-worker.service',
  'hostplane-migrate.service',
];
/** The paths the units name on an installed host (docs/DEPLOYMENT.md). */
const INSTALLED_NODE = '/usr/local/bin/node';
const INSTALLED_DIR = '/opt/hostplane';
const SYSTEMD_ANALYZE = process.env.SYSTEMD_ANALYZE_PATH ?? '/usr/bin/systemd-analyze';
const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';
/** Ports this file may listen on (the machine's plan gives this work 18400-18449). */
const PORT_RANGE = [18400, 18449] as const;

const freshDir = tempDirs('hostplane-deploy-');

/** Why a tool's tests cannot run here, or false. In CI a missing tool fails instead (`.ci/run` installs them). */
function missing(path: string, install: string): string | false {
  if (existsSync(path)) return false;
  const reason = `${path} is missing (${install})`;
  if (process.env.CI) throw new Error(reason);
  return reason;
}
const noSystemd = missing(SYSTEMD_ANALYZE, 'apt-get install systemd');
const noCaddy = missing(CADDY, 'apt-get install caddy');

const read = (name: string) => readFileSync(join(DEPLOY, name), 'utf8');

/** The units with this machine's node and checkout in place of the installed paths, in a directory of their own. */
function unitsForThisMachine(): string {
  const dir = freshDir();
  for (const name of UNITS) {
    const text = read(name);
    assert.ok(
      text.includes(INSTALLED_NODE) && text.includes(INSTALLED_DIR),
      `${name} names ${INSTALLED_NODE} and ${INSTALLED_DIR}`,
    );
    writeFileSync(join(dir, name), text.replaceAll(INSTALLED_NODE, process.execPath).replaceAll(INSTALLED_DIR, ROOT));
  }
  // An instance of the template, as `systemctl start hostplane-api@8081` makes it.
  symlinkSync('hostplane-api@.service', join(dir, 'hostplane-api@8081.service'));
  return dir;
}

const INSTANCES = [
  'hostplane-api.service',
  'hostplane-api@8081.service',
  'hostplane-worker.service',
  'hostplane-migrate.service',
];

describe('systemd units', { skip: noSystemd }, () => {
  test('systemd-analyze verify accepts every unit (and the template as an instance) without a warning', () => {
    const dir = unitsForThisMachine();
    const run = spawnSync(SYSTEMD_ANALYZE, ['verify', ...INSTANCES.map((u) => `./${u}`)], {
      cwd: dir,
      encoding: 'utf8',
    });
    // verify exits 0 on an unknown key or a bad value and only warns: any output is a failure.
    assert.equal(`${run.stdout}${run.stderr}`.trim(), '');
    assert.equal(run.status, 0);
  });

  test('systemd-analyze security rates every unit at most 2.0 ("OK"; 10 would be unprotected)', () => {
    const dir = unitsForThisMachine();
    for (const unit of INSTANCES) {
      const run = spawnSync(SYSTEMD_ANALYZE, ['security', '--offline=yes', '--threshold=20', `./${unit}`], {
        cwd: dir,
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, `${unit}:\n${run.stdout.split('\n').slice(-2).join('\n')}${run.stderr}`);
    }
  });

  test('the API template is the single API unit but for the port, and every unit waits out the app’s shutdown', () => {
    const single = read('hostplane-api.service').split('\n');
    const template = read('hostplane-api@.service').split('\n');
    assert.equal(single.length, template.length);
    const differing = single.flatMap((line, i) => (line === template[i] || line.startsWith('#') ? [] : [line]));
    assert.deepEqual(differing, [
      'Description=Hostplane API (port 8080)',
      'Environment=PORT=8080',
      'SyslogIdentifier=hostplane-api',
    ]);
    assert.ok(template.includes('Environment=PORT=%i'));

    // main.ts: SIGTERM drains within SHUTDOWN_GRACE_MS, then up to LOG_FLUSH_MS for the log, then exits.
    const main = readFileSync(join(ROOT, 'server/src/main.ts'), 'utf8');
    const ms = (name: string) => Number(new RegExp(`const ${name} = ([\\d_]+);`).exec(main)?.[1]?.replaceAll('_', ''));
    const appStop = ms('SHUTDOWN_GRACE_MS') + ms('LOG_FLUSH_MS');
    assert.ok(appStop > 0);
    for (const unit of ['hostplane-api.service', 'hostplane-api@.service', 'hostplane-worker.service']) {
      const text = read(unit);
      const timeout = Number(/^TimeoutStopSec=(\d+)s$/m.exec(text)?.[1]) * 1000;
      assert.ok(timeout > appStop, `${unit}: TimeoutStopSec ${timeout} ms must exceed the app's ${appStop} ms`);
      assert.match(text, /^KillMode=mixed$/m);
      assert.match(text, /^Restart=on-failure$/m);
      // main.ts exits 2 on a ConfigError (no retry mends it) and 1 when the database does not answer yet.
      assert.match(text, /^RestartPreventExitStatus=2$/m);
      // boot.ts's caches in a directory systemd makes writable under ProtectSystem=strict.
      assert.match(text, /^ExecStart=\/usr\/local\/bin\/node --import \/opt\/hostplane\/server\/src\/boot\.ts /m);
      assert.match(text, /^CacheDirectory=hostplane$/m);
      assert.match(text, /^Environment=NODE_COMPILE_CACHE=\/var\/cache\/hostplane$/m);
      assert.match(text, /^StartLimitIntervalSec=0$/m);
      assert.match(text, /^ReadWritePaths=\/var\/lib\/hostplane$/m);
      // The migrations first, but their failure does not keep the process down (it migrates at start itself).
      assert.match(text, /^Wants=hostplane-migrate\.service$/m);
      assert.match(text, /^After=hostplane-migrate\.service$/m);
    }
  });
});

/** NAME=value lines as systemd's EnvironmentFile= reads the subset the example allows; `commented` also takes `# NAME=value`. */
function parseEnvFile(text: string, commented = false): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = commented ? raw.replace(/^# (?=[A-Z][A-Z0-9_]*=)/, '') : raw;
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    const value = m[2] as string;
    env[m[1] as string] = /^".*"$/.test(value) ? value.slice(1, -1) : value;
  }
  return env;
}

describe('the environment file example', () => {
  const text = read('hostplane.env.example');
  const known = new Set(VARIABLES.map((v) => v.name));

  test('names only variables of config.ts, mentions every one, and leaves the units’ own to the units', () => {
    const assigned = Object.keys(parseEnvFile(text, true));
    assert.deepEqual(
      assigned.filter((name) => !known.has(name)),
      [],
    );
    assert.deepEqual(
      [...known].filter((name) => !new RegExp(`\\b${name}\\b`).test(text)),
      [],
    );
    for (const own of ['PORT', 'METRICS_PORT', 'METRICS_HOST'])
      assert.ok(!assigned.includes(own), `${own} is set by the units`);
    // The subset both readers agree on: no expansion, no escapes.
    for (const line of text.split('\n').filter((l) => !l.startsWith('#') && l.trim() !== '')) {
      assert.match(line, /^[A-Z][A-Z0-9_]*=("[^"$`\\]*"|[^\s"'$`\\<>;&|]*)$/, line);
    }
  });

  test('sh (deploy/hostplane-admin) reads the same values', () => {
    const file = join(freshDir(), 'hostplane.env');
    writeFileSync(file, text);
    const run = spawnSync('sh', ['-c', 'set -a; . "$0"; set +a; env -0', file], { env: {}, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const seen = Object.fromEntries(
      run.stdout
        .split('\0')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    for (const [name, value] of Object.entries(parseEnvFile(text))) assert.equal(seen[name], value, name);
  });

  test('its placeholders for secrets are refused at start; everything else, commented defaults too, is accepted', () => {
    assert.throws(
      () => loadConfig(parseEnvFile(text)),
      (error: Error) =>
        /SECRET_KEY=/.test(error.message) &&
        /METRICS_TOKEN=/.test(error.message) &&
        error.message.split('\n  - ').length === 3,
    );
    const filled = {
      ...parseEnvFile(text, true),
      SECRET_KEY: randomBytes(32).toString('base64'),
      METRICS_TOKEN: randomBytes(24).toString('hex'),
    };
    const config = loadConfig(filled);
    assert.equal(config.engine, 'postgresql');
    assert.equal(config.demo, false);
    assert.deepEqual(config.trustProxy, ['127.0.0.1/32', '::1/128']);
  });
});

describe('docs/DEPLOYMENT.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/DEPLOYMENT.md'), 'utf8');

  test('shows the files of deploy/ and no other, and names only variables config.ts reads', () => {
    const shown = new Set(doc.match(/deploy\/[\w.@-]+/g));
    assert.deepEqual(
      [...shown].sort(),
      readdirSync(DEPLOY)
        .map((name) => `deploy/${name}`)
        .sort(),
    );
    const known = new Set(VARIABLES.map((v) => v.name));
    // deploy/hostplane-admin's own two, and the shell variables of the commands shown.
    // node's own NODE_COMPILE_CACHE (where boot.ts keeps its caches), set by the units.
    const others = new Set(['HOSTPLANE_ENV_FILE', 'HOSTPLANE_NODE', 'CA', 'NAME', 'V', 'NODE_COMPILE_CACHE']);
    const admin = read('hostplane-admin');
    for (const name of ['HOSTPLANE_ENV_FILE', 'HOSTPLANE_NODE']) assert.ok(admin.includes(name), name);
    const named = new Set([
      ...(doc.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? []),
      ...[...doc.matchAll(/\b([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1] as string),
    ]);
    assert.deepEqual(
      [...named].filter((name) => !known.has(name) && !others.has(name)),
      [],
    );
  });
});

/** Caddy's environment: its data (the local CA) and config under `dir`, never the user's. */
const caddyEnv = (dir: string) => ({
  PATH: process.env.PATH ?? '',
  HOME: dir,
  XDG_DATA_HOME: join(dir, 'data'),
  XDG_CONFIG_HOME: join(dir, 'config'),
});

describe('the Caddyfile', { skip: noCaddy }, () => {
  test('caddy validate accepts it, caddy fmt leaves it as it is, and its body limits cover the app’s', () => {
    const dir = freshDir();
    const file = join(DEPLOY, 'Caddyfile');
    const validate = spawnSync(CADDY, ['validate', '--config', file, '--adapter', 'caddyfile'], {
      env: caddyEnv(dir),
      encoding: 'utf8',
    });
    assert.equal(validate.status, 0, validate.stderr);
    assert.match(validate.stdout, /Valid configuration/);
    const fmt = spawnSync(CADDY, ['fmt', file], { encoding: 'utf8' });
    assert.equal(fmt.stdout, read('Caddyfile'));

    const adapt = spawnSync(CADDY, ['adapt', '--config', file, '--adapter', 'caddyfile'], {
      env: caddyEnv(dir),
      encoding: 'utf8',
    });
    assert.equal(adapt.status, 0, adapt.stderr);
    const handlers: {
      handler: string;
      max_size?: number;
      health_checks?: { active?: { uri?: string; interval?: number } };
    }[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof (node as { handler?: unknown }).handler === 'string')
          handlers.push(node as (typeof handlers)[number]);
        Object.values(node).forEach(walk);
      }
    };
    walk(JSON.parse(adapt.stdout));
    const sizes = handlers.filter((h) => h.handler === 'request_body').map((h) => h.max_size ?? 0);
    assert.equal(sizes.length, 2);
    const [game, other] = [Math.max(...sizes), Math.min(...sizes)];
    // A game-server upload: the file, plus multipart's 12 parts of at most 4 KiB fields and their headers.
    assert.ok(game >= MAX_ANY_FILE_BYTES + 12 * 8192, `game uploads: ${game}`);
    assert.ok(game <= 2 * MAX_ANY_FILE_BYTES, `game uploads: ${game}`);
    // Elsewhere: a payment proof (multipart), a JSON body, a management action's JSON (8 MiB, panel.routes.ts).
    assert.ok(other >= Math.max(MAX_UPLOAD_BYTES + 12 * 8192, BODY_LIMIT, 8 * 1024 * 1024), `other bodies: ${other}`);
    const proxy = handlers.find((h) => h.handler === 'reverse_proxy');
    assert.equal(proxy?.health_checks?.active?.uri, '/readyz');
    // A stopping API process keeps its port open until this check has seen /readyz 503 (main.ts): at
    // most DRAIN_WAIT_MS for the next probe, then DRAIN_SETTLE_MS, one more interval; all within the grace.
    const main = readFileSync(join(ROOT, 'server/src/main.ts'), 'utf8');
    const ms = (name: string) => Number(new RegExp(`const ${name} = ([\\d_]+);`).exec(main)?.[1]?.replaceAll('_', ''));
    const interval = (proxy?.health_checks?.active?.interval ?? 0) / 1e6; // nanoseconds in Caddy's JSON
    assert.ok(interval > 0 && interval < ms('DRAIN_WAIT_MS'), `health_interval ${interval} ms`);
    assert.ok(interval <= ms('DRAIN_SETTLE_MS'), `health_interval ${interval} ms`);
    assert.ok(ms('DRAIN_WAIT_MS') + ms('DRAIN_SETTLE_MS') < ms('SHUTDOWN_GRACE_MS'));
  });
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTPS request to the proxy, trusting only `ca`, from the loopback address `from`. */
function viaProxy(
  proxy: { port: number; ca: string; host: string },
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; from?: string } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: proxy.port,
        servername: proxy.host,
        ca: proxy.ca,
        method,
        path,
        localAddress: options.from ?? '127.0.0.1',
        agent: false,
        headers: {
          host: `${proxy.host}:${proxy.port}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sessionCookie = (answer: Answer): string => {
  const cookie = ([] as string[]).concat(answer.headers['set-cookie'] ?? []).find((c) => c.startsWith('SVCSESSID='));
  assert.ok(cookie, 'a session cookie');
  assert.match(cookie, /;\s*Secure/i, 'Secure, since PUBLIC_URL is https://');
  return cookie.split(';')[0] as string;
};

/** Caddy running the derived Caddyfile, its local CA's root, and how to stop it. */
async function startCaddy(
  dir: string,
  ports: { https: number; http: number; app: number },
): Promise<{ child: ChildProcess; ca: string; output: () => string }> {
  // deploy/Caddyfile with what a loopback test needs: the local CA instead of Let's Encrypt, loopback
  // ports, no admin endpoint, no change to the system trust store; and this app's port as the upstream.
  const replaceOnce = (text: string, from: string, to: string) => {
    assert.equal(text.split(from).length, 2, `deploy/Caddyfile has ${JSON.stringify(from)} once`);
    return text.replace(from, to);
  };
  let caddyfile = read('Caddyfile');
  caddyfile = replaceOnce(
    caddyfile,
    '\temail ops@example.com\n',
    `\temail ops@example.com\n\tadmin off\n\tskip_install_trust\n\thttp_port ${ports.http}\n\thttps_port ${ports.https}\n\tauto_https disable_redirects\n`,
  );
  caddyfile = replaceOnce(
    caddyfile,
    'panel.example.com {\n',
    'panel.example.com {\n\tbind 127.0.0.1\n\ttls internal\n',
  );
  caddyfile = replaceOnce(caddyfile, '\t\tto 127.0.0.1:8080\n', `\t\tto 127.0.0.1:${ports.app}\n`);
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, caddyfile);
  const child = spawn(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], {
    env: caddyEnv(dir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const root = join(dir, 'data/caddy/pki/authorities/local/root.crt');
  for (let i = 0; i < 600 && !existsSync(root); i++) {
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(existsSync(root), `Caddy made no local CA:\n${text}`);
  return { child, ca: readFileSync(root, 'utf8'), output: () => text };
}

describe('the documented install, through the proxy over TLS', { skip: noCaddy }, () => {
  test('panel, session API, token API and the console WebSocket path answer; X-Forwarded-For is believed from Caddy only', async () => {
    const dir = freshDir();
    const appPort = await freePortInRange(PORT_RANGE, []);
    const httpsPort = await freePortInRange(PORT_RANGE, [appPort]);
    const httpPort = await freePortInRange(PORT_RANGE, [appPort, httpsPort]);
    const host = 'panel.example.com';

    // The environment file as docs/DEPLOYMENT.md installs it, with its REPLACE values filled in; an
    // embedded database (no PostgreSQL, Redis or SMTP here), so one process runs both roles (`npm start`).
    const metricsToken = randomBytes(24).toString('hex');
    let envText = read('hostplane.env.example')
      .replace(/^(DATABASE_URL|REDIS_URL|SMTP_URL)=.*$/gm, '# $1 (not on this machine)')
      .replace(/^SECRET_KEY=.*$/m, `SECRET_KEY=${randomBytes(32).toString('base64')}`)
      .replace(/^METRICS_TOKEN=.*$/m, `METRICS_TOKEN=${metricsToken}`)
      .replace(/^DATA_DIR=.*$/m, `DATA_DIR=${join(dir, 'data-dir')}`)
      .replace(/^PUBLIC_URL=.*$/m, `PUBLIC_URL=https://${host}:${httpsPort}`);
    envText += 'LOG_LEVEL=warn\n';
    const envFile = join(dir, 'hostplane.env');
    writeFileSync(envFile, envText);
    mkdirSync(join(dir, 'data-dir'), { mode: 0o700 });

    // As hostplane-api.service runs it: the env file, and the port the unit sets.
    const env = { ...parseEnvFile(envText), PORT: String(appPort) };
    const app = runNode('server/src/main.ts', [], env);
    let caddy: ChildProcess | null = null;
    try {
      await waitForJson(`http://127.0.0.1:${appPort}/readyz`, app);
      const started = await startCaddy(dir, { https: httpsPort, http: httpPort, app: appPort });
      caddy = started.child;
      const proxy = { port: httpsPort, ca: started.ca, host };
      await checkThroughProxy(proxy, { envFile, appPort, metricsToken });
    } finally {
      caddy?.kill('SIGTERM');
      app.child.kill('SIGTERM');
      assert.equal(await app.exited, 0, app.output());
    }
  });
});

async function checkThroughProxy(
  proxy: { port: number; ca: string; host: string },
  install: { envFile: string; appPort: number; metricsToken: string },
): Promise<void> {
  // The panel, the probes and the token surface's health.
  const panel = await viaProxy(proxy, 'GET', '/');
  assert.equal(panel.status, 200);
  assert.match(String(panel.headers['content-type']), /^text\/html/);
  assert.equal(panel.headers['strict-transport-security'], 'max-age=31536000');
  assert.equal((await viaProxy(proxy, 'GET', '/readyz')).status, 200);
  const health = await viaProxy(proxy, 'GET', '/api/v1/health/');
  assert.equal(health.status, 200);
  assert.equal(JSON.parse(health.body).data.status, 'healthy');

  // The session surface: register, verified by staff with deploy/hostplane-admin (the same env file), sign in.
  const C = '/api/v1/client';
  const password = 's3cret-deploy-pass';
  const user = { name: 'Deploy Check', email: 'deploy@example.in', username: 'deploycheck', password };
  assert.equal((await viaProxy(proxy, 'POST', `${C}/auth/register/`, { body: user })).status, 201);
  const admin = spawnSync(join(DEPLOY, 'hostplane-admin'), ['accounts', 'verify', user.username], {
    env: { PATH: process.env.PATH ?? '', HOSTPLANE_ENV_FILE: install.envFile, HOSTPLANE_NODE: process.execPath },
    encoding: 'utf8',
  });
  assert.equal(admin.status, 0, admin.stderr);
  assert.match(admin.stdout, /verified deploy@example\.in/);
  const csrf = await viaProxy(proxy, 'GET', `${C}/auth/csrf/`);
  assert.equal(csrf.status, 200);
  const login = await viaProxy(proxy, 'POST', `${C}/auth/login/`, {
    headers: { cookie: sessionCookie(csrf) },
    body: { identifier: user.username, password, csrf_token: JSON.parse(csrf.body).csrf_token },
  });
  assert.equal(login.status, 200, login.body);
  const cookie = sessionCookie(login);
  const account = await viaProxy(proxy, 'GET', `${C}/account/`, { headers: { cookie } });
  assert.equal(account.status, 200);

  // The token surface, with a token only 127.0.0.2 may use: the app sees the client's address, which
  // reaches it in Caddy's X-Forwarded-For (TRUST_PROXY), and a client's own X-Forwarded-For is replaced.
  const made = await viaProxy(proxy, 'POST', `${C}/tokens/`, {
    headers: { cookie, 'x-csrf-token': JSON.parse(account.body).csrf_token },
    body: { name: 'deploy check', scopes: ['read'], allowed_cidrs: ['127.0.0.2/32'] },
  });
  assert.equal(made.status, 201, made.body);
  const bearer = { authorization: `Bearer ${JSON.parse(made.body).secret}` };
  const me = await viaProxy(proxy, 'GET', '/api/v1/me', { headers: bearer, from: '127.0.0.2' });
  assert.equal(me.status, 200, me.body);
  const spoofed = await viaProxy(proxy, 'GET', '/api/v1/me', {
    headers: { ...bearer, 'x-forwarded-for': '127.0.0.2' },
    from: '127.0.0.3',
  });
  assert.equal(spoofed.status, 403);
  assert.equal(JSON.parse(spoofed.body).error, 'ip_not_allowed');

  // The console WebSocket: the upgrade reaches the console route, which refuses an unknown ticket.
  const upgrade = await viaProxy(proxy, 'GET', '/ws/console/?t=not-a-ticket', {
    headers: {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
    },
  });
  assert.equal(upgrade.status, 401, upgrade.body);

  // Metrics: not through the proxy; from each process's own port with the token.
  assert.equal(
    (await viaProxy(proxy, 'GET', '/metrics', { headers: { authorization: `Bearer ${install.metricsToken}` } })).status,
    404,
  );
  const scrape = await fetch(`http://127.0.0.1:${install.appPort}/metrics`, {
    headers: { authorization: `Bearer ${install.metricsToken}` },
  });
  assert.equal(scrape.status, 200);
  assert.match(
    await scrape.text(),
    /hostplane_http_requests_total\{method="GET",route="\/api\/v1\/me",status="200"\} 1/,
  );
}
