// A rolling upgrade without downtime (issue 39; docs/ARCHITECTURE.md "Upgrades without downtime").
//
// Release N is this checkout; release N+1 is a copy of it in a temporary directory with one more,
// backwards-compatible migration (a nullable column and a new table). Two API processes and a
// worker of release N run behind Caddy with deploy/Caddyfile (plain HTTP on a loopback port, both
// processes as upstreams, its health checks and retries as written) while clients send requests
// without pause: the health route, a token read (GET /api/v1/plans) and a session mutation (POST
// /api/v1/client/notifications/). Then, as docs/DEPLOYMENT.md says to upgrade:
//   1. `npm run migrate` of N+1, while N serves;
//   2. API process 2 restarted on N (what systemd does to a process that crashes mid-upgrade, or a
//      rollback): release N starts on the newer schema and serves;
//   3. API process 1, then API process 2, restarted on N+1 (SIGTERM, wait for the exit, start, wait
//      until it is ready and the proxy sends it requests again); then the worker.
// No request may fail: no 5xx, no connection error, nothing but 200, over the whole sequence.
// That runs on PostgreSQL only (TEST_DATABASE_URL): the API role is a process of its own, which the
// embedded database cannot be shared with. Step 2's rule (migrateToLatest accepts a newer release's
// migrations) is also checked directly, on both engines.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { closeDeps, createDeps } from '../src/core/deps.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrator.ts';
import { createTestDatabase, onPostgres, redisUrl } from './support/harness.ts';
import { freePortInRange, type Running, waitForJson } from './support/process.ts';
import { ROOT } from './support/template.ts';

const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';
/** Ports this file may listen on (the machine's plan gives this work 18450-18499). */
const PORT_RANGE = [18450, 18499] as const;
/** Release N+1's one migration: after every name a real migration will ever have. */
const TEST_MIGRATION = '9999_rolling_upgrade_test';
/** Clients sending requests at once, each pausing this long between two (the test is CPU-lean). */
const CLIENTS = 3;
const PAUSE_MS = 30;
/** Tokens the clients take turns with: far below token_requests (600 a minute) each. */
const TOKENS = 6;

function missingCaddy(): string | false {
  if (existsSync(CADDY)) return false;
  const reason = `${CADDY} is missing (apt-get install caddy)`;
  if (process.env.CI) throw new Error(reason);
  return reason;
}
const skip = !onPostgres
  ? 'needs TEST_DATABASE_URL: the API role runs in a process of its own, which needs PostgreSQL (PGlite belongs to one process)'
  : missingCaddy();

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Release N+1: this checkout's server/src copied, plus one migration at the end of its list; the
 * rest (node_modules, the fonts, the panel's build, the demo's emulators) linked. The checkout itself is not touched.
 */
function makeNextRelease(dir: string): string {
  const next = join(dir, 'release-n+1');
  mkdirSync(join(next, 'server'), { recursive: true });
  cpSync(join(ROOT, 'server/src'), join(next, 'server/src'), { recursive: true });
  for (const file of ['package.json', 'server/package.json']) cpSync(join(ROOT, file), join(next, file));
  for (const linked of ['node_modules', 'server/node_modules', 'server/assets', 'web/dist', 'emulators']) {
    if (!existsSync(join(ROOT, linked))) continue;
    mkdirSync(join(next, linked, '..'), { recursive: true });
    symlinkSync(join(ROOT, linked), join(next, linked));
  }
  const migrations = join(next, 'server/src/db/migrations');
  // Expand only: a nullable column on a table release N reads and writes, and a table it does not know.
  writeFileSync(
    join(migrations, `${TEST_MIGRATION}.ts`),
    [
      "import { type Kysely, sql } from 'kysely';",
      '',
      'export async function up(db: Kysely<unknown>): Promise<void> {',
      '  await sql`alter table accounts add column rolling_upgrade_note text`.execute(db);',
      '  await sql`create table rolling_upgrade_probe (id bigint generated always as identity primary key, note text not null)`.execute(db);',
      '}',
      '',
    ].join('\n'),
  );
  const index = join(migrations, 'index.ts');
  const text = readFileSync(index, 'utf8');
  const end = '\n};\n';
  assert.ok(text.endsWith(end), 'migrations/index.ts ends with the list');
  writeFileSync(
    index,
    `import * as rollingUpgradeTest from './${TEST_MIGRATION}.ts';\n${text.slice(0, -end.length)}\n  '${TEST_MIGRATION}': rollingUpgradeTest,${end}`,
  );
  return next;
}

/** `node --import <root>/server/src/boot.ts <root>/server/src/main.ts …` from `root`, as the units run it. */
function startRelease(root: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(
    process.execPath,
    ['--import', join(root, 'server/src/boot.ts'), join(root, 'server/src/main.ts'), ...args],
    { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  const keep = (chunk: Buffer) => {
    text += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  return { child, output: () => text, exited };
}

/** `npm run migrate` in `root`, to its end. */
async function npmMigrate(root: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('npm', ['run', '-s', 'migrate'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: root, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(guard);
  return { code, output };
}

/** Caddy with deploy/Caddyfile, adapted to plain HTTP on a loopback port with the two API ports as upstreams. */
async function startCaddy(dir: string, port: number, upstreams: number[]): Promise<Running> {
  const replaceOnce = (text: string, from: string, to: string) => {
    assert.equal(text.split(from).length, 2, `deploy/Caddyfile has ${JSON.stringify(from)} once`);
    return text.replace(from, to);
  };
  let caddyfile = readFileSync(join(ROOT, 'deploy/Caddyfile'), 'utf8');
  caddyfile = replaceOnce(caddyfile, '\temail ops@example.com\n', '\tadmin off\n\tauto_https off\n');
  caddyfile = replaceOnce(caddyfile, 'panel.example.com {\n', `http://127.0.0.1:${port} {\n\tbind 127.0.0.1\n`);
  caddyfile = replaceOnce(
    caddyfile,
    '\t\tto 127.0.0.1:8080\n',
    `\t\tto ${upstreams.map((p) => `127.0.0.1:${p}`).join(' ')}\n`,
  );
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, caddyfile);
  const child = spawn(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      XDG_DATA_HOME: join(dir, 'caddy-data'),
      XDG_CONFIG_HOME: join(dir, 'caddy-config'),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(() => void (child.exitCode === null && child.kill('SIGKILL')));
  const running = { child, output: () => text, exited };
  await waitForJson(`http://127.0.0.1:${port}/livez`, running);
  return running;
}

interface Outcome {
  kind: string;
  phase: string;
  /** The HTTP status, or 0 when no answer came (connection refused or reset, timeout). */
  status: number;
  detail: string;
}

/** Clients sending requests through the proxy until stopped, every outcome kept. */
class Traffic {
  readonly outcomes: Outcome[] = [];
  phase = 'N';
  #running = true;
  #loops: Promise<void>[] = [];
  readonly #base: string;
  readonly #auth: { tokens: string[]; cookie: string; csrf: string };

  constructor(base: string, auth: { tokens: string[]; cookie: string; csrf: string }, withPanel: boolean) {
    this.#base = base;
    this.#auth = auth;
    const kinds = ['health', 'token read', 'session mutation', ...(withPanel ? ['panel'] : [])];
    for (let c = 0; c < CLIENTS; c++) this.#loops.push(this.#loop(kinds, c));
  }

  async #loop(kinds: string[], client: number): Promise<void> {
    for (let i = client; this.#running; i++) {
      await this.#one(kinds[i % kinds.length] as string, i);
      await sleep(PAUSE_MS);
    }
  }

  async #one(kind: string, i: number): Promise<void> {
    const phase = this.phase;
    const { tokens, cookie, csrf } = this.#auth;
    const signal = AbortSignal.timeout(60_000); // a hang guard only
    try {
      let res: Response;
      if (kind === 'health') res = await fetch(`${this.#base}/api/v1/health/`, { signal });
      else if (kind === 'token read') {
        const token = tokens[i % tokens.length] as string;
        res = await fetch(`${this.#base}/api/v1/plans`, { headers: { authorization: `Bearer ${token}` }, signal });
      } else if (kind === 'session mutation') {
        res = await fetch(`${this.#base}/api/v1/client/notifications/`, {
          method: 'POST',
          headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'read_all' }),
          signal,
        });
      } else res = await fetch(`${this.#base}/`, { signal });
      const body = await res.text();
      this.outcomes.push({ kind, phase, status: res.status, detail: res.status === 200 ? '' : body.slice(0, 300) });
    } catch (error) {
      const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
      this.outcomes.push({ kind, phase, status: 0, detail: `${(error as Error).message} ${cause?.code ?? ''}` });
    }
  }

  count(): number {
    return this.outcomes.length;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}

/** The requests for GET /api/v1/plans this process has answered (its own /metrics, METRICS_TOKEN on its port). */
async function plansServed(port: number, metricsToken: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  let sum = 0;
  for (const m of text.matchAll(/^hostplane_http_requests_total\{[^}]*route="\/api\/v1\/plans"[^}]*\} (\d+)$/gm)) {
    sum += Number(m[1]);
  }
  return sum;
}

describe('rolling upgrade behind Caddy', { skip }, () => {
  test('migrate, then restart the API processes one at a time and the worker: no request fails', {
    timeout: 600_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hostplane-rolling-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const testDb = await createTestDatabase();
    await testDb.database.close();
    cleanups.push(() => testDb.drop());
    const next = makeNextRelease(dir);

    const apiPorts: number[] = [];
    for (let i = 0; i < 2; i++) apiPorts.push(await freePortInRange(PORT_RANGE, apiPorts));
    const proxyPort = await freePortInRange(PORT_RANGE, apiPorts);
    const base = `http://127.0.0.1:${proxyPort}`;
    const metricsToken = randomBytes(24).toString('hex');
    const env: Record<string, string> = {
      DATABASE_URL: testDb.url as string,
      ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: `hp-rolling-${randomBytes(4).toString('hex')}` } : {}),
      SECRET_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: join(dir, 'data'),
      PUBLIC_URL: base,
      TRUST_PROXY: '127.0.0.1/32',
      METRICS_TOKEN: metricsToken,
      DEMO: '0',
      LOG_LEVEL: 'warn',
    };
    mkdirSync(env.DATA_DIR as string, { mode: 0o700 });

    // An account with tokens to read with, made through the core services.
    const tokens: string[] = [];
    const password = 'rolling-upgrade-1';
    {
      const database = await openDatabase({ engine: 'postgresql', url: env.DATABASE_URL as string });
      const deps = await createDeps(loadConfig(env), database, pino({ level: 'silent' }));
      try {
        const account = await deps.accounts.register({
          name: 'Rolling Upgrade',
          email: 'rolling@example.in',
          username: 'rolling',
          password,
        });
        await deps.accounts.markVerified(account.id);
        for (let i = 0; i < TOKENS; i++) {
          tokens.push((await deps.tokens.create(account.id, { name: `reader ${i}`, scopes: ['read'] })).secret);
        }
      } finally {
        await closeDeps(deps);
        await database.close();
      }
    }

    // Release N: two API processes and a worker, behind Caddy.
    const api = apiPorts.map((port) => ({ port, running: null as Running | null }));
    const startApi = async (slot: (typeof api)[number], root: string) => {
      slot.running = startRelease(root, ['--role=api'], { ...env, PORT: String(slot.port) });
      await waitForJson(`http://127.0.0.1:${slot.port}/readyz`, slot.running);
    };
    for (const slot of api) await startApi(slot, ROOT);
    let worker = startRelease(ROOT, ['--role=worker'], { ...env, LOG_LEVEL: 'info' });
    const workerUp = async (running: Running) => {
      const deadline = Date.now() + 120_000; // a hang guard only
      while (!running.output().includes('Hostplane worker running')) {
        if (running.child.exitCode !== null || Date.now() > deadline)
          assert.fail(`the worker did not start:\n${running.output()}`);
        await sleep(100);
      }
    };
    await workerUp(worker);
    const caddy = await startCaddy(dir, proxyPort, apiPorts);

    // A session, signed in through the proxy.
    const csrfAnswer = await fetch(`${base}/api/v1/client/auth/csrf/`);
    assert.equal(csrfAnswer.status, 200);
    const cookieOf = (res: Response) => {
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('SVCSESSID='));
      assert.ok(cookie, 'a session cookie');
      return cookie.split(';')[0] as string;
    };
    const login = await fetch(`${base}/api/v1/client/auth/login/`, {
      method: 'POST',
      headers: { cookie: cookieOf(csrfAnswer), 'content-type': 'application/json' },
      body: JSON.stringify({
        identifier: 'rolling',
        password,
        csrf_token: ((await csrfAnswer.json()) as { csrf_token: string }).csrf_token,
      }),
    });
    assert.equal(login.status, 200, await login.clone().text());
    const cookie = cookieOf(login);
    const account = await fetch(`${base}/api/v1/client/account/`, { headers: { cookie } });
    assert.equal(account.status, 200);
    const csrf = ((await account.json()) as { csrf_token: string }).csrf_token;

    const traffic = new Traffic(base, { tokens, cookie, csrf }, existsSync(join(ROOT, 'web/dist/index.html')));
    cleanups.push(() => traffic.stop());
    /** Requests made while each step ran: from its first action until the proxy sends to the new process. */
    const steps: { phase: string; requests: number; ms: number }[] = [];
    const step = async (phase: string, run: () => Promise<void>) => {
      traffic.phase = phase;
      const before = traffic.count();
      const started = performance.now();
      await run();
      steps.push({ phase, requests: traffic.count() - before, ms: Math.round(performance.now() - started) });
    };
    /** Until the clients have made `n` more requests (steady traffic between the steps). */
    const steady = async (phase: string, n: number) => {
      await step(phase, async () => {
        const until = traffic.count() + n;
        while (traffic.count() < until) await sleep(50);
      });
    };
    /** SIGTERM, a clean exit, the same port on `root`, ready, and served requests through the proxy again. */
    const restart = async (slot: (typeof api)[number], root: string) => {
      const running = slot.running as Running;
      running.child.kill('SIGTERM');
      assert.equal(await running.exited, 0, running.output());
      await startApi(slot, root);
      // The proxy sends it requests again (its health check saw /readyz 200): only then is the next
      // process restarted, or both would be out of the pool at once.
      const deadline = Date.now() + 120_000; // a hang guard only
      while ((await plansServed(slot.port, metricsToken)) < 3) {
        assert.ok(Date.now() < deadline, 'the proxy sends no requests to the restarted process');
        await sleep(100);
      }
    };

    await steady('N', 60);
    await step('npm run migrate (N+1)', async () => {
      const migrated = await npmMigrate(next, env);
      assert.equal(migrated.code, 0, migrated.output);
      assert.match(migrated.output, new RegExp(`applied ${TEST_MIGRATION}`));
    });
    await steady('N on the N+1 schema', 30);
    // Release N restarted on the newer schema: a crash restart mid-upgrade, or a rollback.
    await step('API 2 restarted on N', () => restart(api[1] as (typeof api)[number], ROOT));
    const newer = 'the database has migrations of a newer release';
    assert.ok(api[1]?.running?.output().includes(newer), 'release N says it runs on a newer schema');
    await step('API 1 upgraded to N+1', () => restart(api[0] as (typeof api)[number], next));
    await step('API 2 upgraded to N+1', () => restart(api[1] as (typeof api)[number], next));
    await step('worker upgraded to N+1', async () => {
      worker.child.kill('SIGTERM');
      assert.equal(await worker.exited, 0, worker.output());
      worker = startRelease(next, ['--role=worker'], { ...env, LOG_LEVEL: 'info' });
      await workerUp(worker);
    });
    await steady('N+1', 60);
    await traffic.stop();

    const failed = traffic.outcomes.filter((o) => o.status !== 200);
    const byPhase = steps.map((s) => `${s.phase}: ${s.requests} in ${s.ms} ms`).join('; ');
    const proxyErrors = caddy
      .output()
      .split('\n')
      .filter((line) => line.includes('"level":"error"'));
    assert.deepEqual(
      failed,
      [],
      `${failed.length} of ${traffic.count()} requests failed (${byPhase}); Caddy:\n${proxyErrors.slice(-10).join('\n')}`,
    );
    for (const s of steps) assert.ok(s.requests >= 5, `only ${s.requests} requests during "${s.phase}"`);
    for (const kind of new Set(traffic.outcomes.map((o) => o.kind))) {
      assert.ok(traffic.outcomes.filter((o) => o.kind === kind && o.phase === 'N+1').length > 0, kind);
    }
    process.stdout.write(`# rolling upgrade: ${traffic.count()} requests, none failed (${byPhase})\n`);

    // Release N+1 serves: both API processes answered proxied requests since their restart (restart()
    // waited for it), and its migration's column and table are there.
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const column = await client.query(
        "select is_nullable from information_schema.columns where table_name = 'accounts' and column_name = 'rolling_upgrade_note'",
      );
      assert.deepEqual(column.rows, [{ is_nullable: 'YES' }]);
      await client.query("insert into rolling_upgrade_probe (note) values ('written after the upgrade')");
      const applied = await client.query('select name from kysely_migration order by name desc limit 1');
      assert.equal(applied.rows[0]?.name, TEST_MIGRATION);
    } finally {
      await client.end();
    }

    const last = [...api.map((s) => s.running as Running), worker];
    for (const running of last) {
      assert.ok(!running.output().includes(newer), 'release N+1 knows its own migration');
      running.child.kill('SIGTERM');
    }
    for (const running of last) assert.equal(await running.exited, 0, running.output());
  });
});

describe('release N on the schema of release N+1', () => {
  test('migrations of a newer release, after all of this one’s, count as done; an unknown one among them is refused', async () => {
    const testDb = await createTestDatabase();
    try {
      const db = testDb.database.db;
      const record = (name: string) =>
        sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(db);
      await record(TEST_MIGRATION);
      let newer: string[] = [];
      const ran = await migrateToLatest(db, {
        onNewer: (names) => {
          newer = names;
        },
      });
      assert.deepEqual(ran, []);
      assert.deepEqual(newer, [TEST_MIGRATION]);
      // A name this release does not have, before its last one: not a newer release's; Kysely refuses it.
      await record('0002a_unknown');
      await assert.rejects(migrateToLatest(db), /previously executed migration 0002a_unknown is missing/);
    } finally {
      await testDb.drop();
    }
  });
});
