// `npm run bench -- token [--engine postgresql]`: GET /api/v1/plans and the instance lists of the
// three surfaces — GET /api/v1/instances, GET /api/v1/client/services/ (session cookie) and GET
// {ALT_BASE_PATH}/v1/instances — (20 instances, live power from the Proxmox emulator answering
// with 5 ms latency) with real tokens and sessions, each against bench/raw-server.ts answering
// the same JSON, 50 connections, interleaved. Tokens are limited to 600 requests a minute each, so the
// load is spread over many tokens: /instances over the 400 of 20 accounts with 20 instances each,
// the second surface's list over the 400 of 20 more such accounts, /plans over 1200 more for
// each run (see PLAN_ACCOUNTS). The setup runs through the core before the server starts; the
// Proxmox emulator answering power probes runs in this process.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { startProxmoxEmulator } from '../emulators/src/proxmox/index.ts';
import { loadConfig } from '../server/src/config.ts';
import { createSession } from '../server/src/core/auth/sessions.ts';
import { seedDemoCatalog } from '../server/src/core/catalog/demo-seed.ts';
import { addRange, allocateAddress } from '../server/src/core/catalog/ipv4.ts';
import { closeDeps, createDeps } from '../server/src/core/deps.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrator.ts';
import {
  type BenchOptions,
  cpuMs,
  freePort,
  type Measured,
  machineCpu,
  machineShares,
  ROOT,
  scratchDatabase,
  startRaw,
  summarize,
  table,
  threadCpuMs,
} from './support.ts';

/**
 * Accounts with 20 instances each: the first 20 for /api/v1/instances (and the session list), the
 * next 20 for the second surface's list: the two runs of a round on the same 400 tokens can pass
 * the 600-a-minute limit within one window.
 */
const ACCOUNTS = 40;
const SESSION_ACCOUNTS = 20;
/**
 * Accounts whose tokens only read /plans, per 10 s of a run (the warm-up and each round have their
 * own). A token may make 600 requests a minute, and /plans runs far faster than 400 tokens allow:
 * the 400 tokens of the instance accounts would run dry and the later runs measure 429s. 60
 * accounts (1200 tokens) keep 10 s under the limit, and within its first half: past 300 in a
 * minute a token is counted in Redis request by request (no leases, see core/ratelimit/leases.ts),
 * and when the warm-up and the rounds shared one set, each round met that slower path more than
 * the last.
 */
const PLAN_ACCOUNTS = 60;
const INSTANCES = 20;

export async function setup(
  env: Record<string, string>,
  proxmox: Awaited<ReturnType<typeof startProxmoxEmulator>>,
  planSets: number,
  planAccounts: number,
) {
  const config = loadConfig(env);
  const database = await openDatabase(
    config.databaseUrl
      ? { engine: 'postgresql', url: config.databaseUrl }
      : { engine: 'pglite', dataDir: config.dataDir, role: 'bench setup' },
  );
  await migrateToLatest(database.db);
  const deps = await createDeps(config, database, pino({ level: 'silent' }));
  await seedDemoCatalog(database.db);
  const mum1 = await deps.catalog.location('mum1');
  await addRange(database.db, mum1.id, '10.30.0.0/22');
  const node = await deps.nodes.add({
    name: 'pve-bench',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: proxmox.url,
    credentials: { token_id: proxmox.tokenId, token_secret: proxmox.tokenSecret },
    settings: { node: 'pve' },
    capacity: 10_000,
  });
  const plan = await database.db
    .selectFrom('plans')
    .selectAll()
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const tokens: string[][] = [];
  const sessions: string[] = [];
  let vmid = 1000;
  for (let a = 0; a < ACCOUNTS + planAccounts * planSets; a++) {
    const account = await deps.accounts.register({
      name: `Bench ${a}`,
      email: `tb${a}@example.in`,
      username: `tb${a}`,
      password: 'bench-pass-1',
    });
    const mine: string[] = [];
    for (let i = 0; i < 20; i++)
      mine.push((await deps.tokens.create(account.id, { name: `bench ${i}`, scopes: ['read'] })).secret);
    tokens.push(mine);
    if (a < SESSION_ACCOUNTS) {
      await deps.accounts.markVerified(account.id);
      const session = await createSession(database.db, deps.clock, account.id, {
        remember: false,
        ip: null,
        userAgent: 'bench',
      });
      sessions.push(`SVCSESSID=${session.id}`);
    }
    for (let i = 0; i < (a < ACCOUNTS ? INSTANCES : 0); i++) {
      vmid++;
      const name = `hp-bench-${vmid}`;
      proxmox.state.vms.set(vmid, {
        vmid,
        name,
        template: false,
        status: 'running',
        qmpstatus: null,
        lock: null,
        cores: 1,
        memoryMb: 1024,
        diskGb: 25,
        config: { name },
        createdAt: Date.now() - 3_600_000,
        startedAt: Date.now() - 3_600_000,
      });
      await database.db.transaction().execute(async (trx) => {
        const service = await trx
          .insertInto('services')
          .values({
            account_id: account.id,
            plan_id: plan.id,
            type: 'vps',
            label: `srv${i}`,
            status: 'active',
            location_id: mum1.id,
            node_id: node.id,
            price_paise: plan.price_paise,
            config: JSON.stringify({ hostname: `srv${i}.example.in`, os: 'ubuntu-24.04' }),
            external: JSON.stringify({ node: 'pve', vmid, name }),
            period_end: new Date(Date.now() + 30 * 86_400_000),
            activated_at: new Date(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await allocateAddress(trx, mum1.id, service.id);
      });
    }
  }
  await closeDeps(deps);
  await database.close();
  return {
    instanceTokens: tokens.slice(0, ACCOUNTS / 2).flat(),
    cloudTokens: tokens.slice(ACCOUNTS / 2, ACCOUNTS).flat(),
    planTokens: Array.from({ length: planSets }, (_, i) =>
      tokens.slice(ACCOUNTS + planAccounts * i, ACCOUNTS + planAccounts * (i + 1)).flat(),
    ),
    sessions,
  };
}

export async function run(options: BenchOptions): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-bench-token-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DEMO: '0',
    LOG_LEVEL: 'info',
    SECRET_KEY: randomBytes(32).toString('base64'),
    PORT: String(await freePort()),
  };
  let dropDb: (() => Promise<void>) | null = null;
  if (options.engine === 'postgresql') {
    const scratch = await scratchDatabase(options.pgUrl, `hostplane_bench_token_${process.pid}`);
    env.DATABASE_URL = scratch.url;
    env.REDIS_URL = 'redis://127.0.0.1:6379';
    env.REDIS_PREFIX = `hp-bench-${process.pid}`;
    dropDb = scratch.drop;
  }

  const proxmox = await startProxmoxEmulator({ taskDelayMs: 10 });
  // A set of /plans tokens for the warm-up and one for each round, 1200 per 10 s of a run.
  const { instanceTokens, cloudTokens, planTokens, sessions } = await setup(
    env,
    proxmox,
    options.rounds + 1,
    PLAN_ACCOUNTS * Math.max(1, Math.ceil(options.duration / 10)),
  );
  // Every answer of the node takes 5 ms: a list that asked it per request would show it.
  await proxmox.setFaults({ latencyMs: 5 });
  const { spawn } = await import('node:child_process');
  // BENCH_PROFILE=<dir> writes a CPU profile of the server process there.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  // BENCH_NODE_ARGS="--flag …" adds node flags to the server (e.g. --perf-basic-prof for `perf record`).
  const nodeFlags = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((f) => f !== '');
  // BENCH_SERVER_ENV="NAME=value …" adds variables to the server's environment (A/B of a switch).
  const serverEnv = Object.fromEntries(
    (process.env.BENCH_SERVER_ENV ?? '')
      .split(' ')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const server = spawn(
    process.execPath,
    [...profile, ...nodeFlags, '--import', join(ROOT, 'server/src/boot.ts'), join(ROOT, 'server/src/main.ts')],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...serverEnv, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const base = `http://127.0.0.1:${env.PORT}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health/`)).ok) break;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const cookie = (value: string) => ({ cookie: value });
  const body = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(`${base}${path}`, { headers });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.text();
  };
  const SESSION_LIST = '/api/v1/client/services/';
  const CLOUD_LIST = '/cloud/v1/instances';
  const raw = await startRaw({
    '/api/v1/plans': { status: 200, body: await body('/api/v1/plans', auth(planTokens[0]?.[0] as string)) },
    '/api/v1/instances': { status: 200, body: await body('/api/v1/instances', auth(instanceTokens[0] as string)) },
    [SESSION_LIST]: { status: 200, body: await body(SESSION_LIST, cookie(sessions[0] as string)) },
    [CLOUD_LIST]: { status: 200, body: await body(CLOUD_LIST, auth(cloudTokens[0] as string)) },
  });
  let n = 0;
  // Server CPU per request of each run (µs, /proc): steadier than req/s on a shared machine.
  const cpu: string[] = [];
  // The whole machine's CPU over each run, by process (% of one core).
  const machine: string[] = [];
  const hit = async (
    label: string,
    url: string,
    pool: string[] | null,
    headers: (value: string) => Record<string, string> = auth,
  ): Promise<Measured> => {
    const pid = url.startsWith(raw.url) ? raw.pid : server.pid;
    const before = cpuMs(pid);
    const threadsBefore = threadCpuMs(pid);
    const machineBefore = machineCpu();
    const result = await autocannon({
      url,
      connections: options.connections,
      duration: options.duration,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => ({ ...req, headers: pool ? headers(pool[n++ % pool.length] as string) : {} }),
        },
      ],
    });
    const after = cpuMs(pid);
    if (before !== null && after !== null && result.requests.total > 0 && label !== 'warm-up') {
      const perRequest = (ms: number) => Math.round((ms * 1000) / result.requests.total);
      const threads = [...threadCpuMs(pid)]
        .map(([name, ms]) => [name, perRequest(ms - (threadsBefore.get(name) ?? 0))] as const)
        .filter(([, us]) => us > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([name, us]) => `${name} ${us}`);
      cpu.push(`${label}: ${perRequest(after - before)} µs (${threads.join(', ')})`);
      machine.push(
        `${label}: ${machineShares(machineBefore, machineCpu(), { server: pid, 'load generator (the bench)': process.pid })}`,
      );
    }
    return {
      label,
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors,
      non2xx: result.non2xx,
    };
  };
  const rows: Measured[] = [];
  // Live power: how often the node was asked while the lists were polled.
  const probes: string[] = [];
  const nodeCalls = () => [...proxmox.calls.values()].reduce((a, b) => a + b, 0);
  const listRun = async (
    label: string,
    url: string,
    pool: string[],
    headers?: (v: string) => Record<string, string>,
  ) => {
    const before = nodeCalls();
    const started = performance.now();
    const row = await hit(label, url, pool, headers);
    const seconds = (performance.now() - started) / 1000;
    probes.push(
      `${label}: ${row.rps * options.duration} requests, ${nodeCalls() - before} calls to the node in ${seconds.toFixed(1)} s`,
    );
    return row;
  };
  try {
    await hit('warm-up', `${base}/api/v1/plans`, planTokens[0] ?? []);
    for (let round = 1; round <= options.rounds; round++) {
      rows.push(await hit(`raw /plans #${round}`, `${raw.url}/api/v1/plans`, null));
      rows.push(
        await hit(`hostplane /plans (${options.engine}) #${round}`, `${base}/api/v1/plans`, planTokens[round] ?? []),
      );
      // BENCH_TOKEN_ONLY=plans measures /plans alone (for profiles of the token path).
      if (process.env.BENCH_TOKEN_ONLY === 'plans') continue;
      rows.push(await hit(`raw /instances #${round}`, `${raw.url}/api/v1/instances`, null));
      rows.push(
        await listRun(`hostplane /instances (${options.engine}) #${round}`, `${base}/api/v1/instances`, instanceTokens),
      );
      rows.push(await hit(`raw /client-services #${round}`, `${raw.url}${SESSION_LIST}`, null));
      rows.push(
        await listRun(
          `hostplane /client-services (${options.engine}) #${round}`,
          `${base}${SESSION_LIST}`,
          sessions,
          cookie,
        ),
      );
      rows.push(await hit(`raw /cloud-instances #${round}`, `${raw.url}${CLOUD_LIST}`, null));
      rows.push(
        await listRun(`hostplane /cloud-instances (${options.engine}) #${round}`, `${base}${CLOUD_LIST}`, cloudTokens),
      );
    }
  } finally {
    await raw.stop();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    await proxmox.stop();
    await dropDb?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const baseline = (row: Measured) => {
    const [, what, round] = /(\/[\w-]+).*#(\d+)/.exec(row.label) ?? [];
    return rows.find((r) => r.label === `raw ${what} #${round}`);
  };
  const of = (what: string) => rows.filter((r) => r.label.includes(`${what} `));
  return [
    table(rows, baseline),
    '',
    'Calls to the Proxmox node (5 ms each) during the list runs; one probe per node per 3 s is the rule:',
    '',
    ...probes.map((p) => `- ${p}`),
    '',
    'Server CPU per request (user + system time of the answering process, all its threads, over the run; by thread in brackets, threads that ended during the run left out):',
    '',
    ...cpu.map((c) => `- ${c}`),
    '',
    'The machine over each run (user + system time by process in % of one core: the answering server, this process (autocannon), the rest summed by name; and how idle the CPUs were):',
    '',
    ...machine.map((m) => `- ${m}`),
    '',
    ...['/plans', '/instances', '/client-services', '/cloud-instances'].map((what) =>
      summarize(of(what), `hostplane ${what}`, `raw ${what}`),
    ),
  ].join('\n');
}
