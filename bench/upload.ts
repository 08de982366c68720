// `npm run bench -- upload [--engine postgresql] [--rounds N]`: the server's memory while a client
// uploads a 100 MiB file to a game server (issue 12: "a 100 MiB upload raises the server's RSS
// by less than 50 MB"). The setup runs through the core before the server starts (demo catalog,
// a Pterodactyl node per region, a verified and funded account); the Pterodactyl emulator runs in
// this process (it keeps what it receives in memory, which must not count against the server).
// Over real HTTP: sign in, order mc-java-2g, wait until it is active, warm up with small uploads,
// then per round a 1 MiB upload (the same-run baseline) and a 100 MiB one, each body generated as
// a stream (never whole in this process either). The peak is the server's VmHWM, reset to its
// current RSS just before each upload (/proc/<pid>/clear_refs) and read at the answer; a worker
// thread also samples VmRSS every 50 ms (off this process's event loop) as a cross-check. Each
// answer (201, path, size) and the bytes the emulated node holds (SHA-256) are checked.
// BENCH_NODE_ARGS adds node flags to the server (experiments: V8 sizes, heap snapshots).

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { type PterodactylEmulator, startPterodactylEmulator } from '../emulators/src/pterodactyl/index.ts';
import { loadConfig } from '../server/src/config.ts';
import { seedDemoCatalog } from '../server/src/core/catalog/demo-seed.ts';
import { closeDeps, createDeps } from '../server/src/core/deps.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrator.ts';
import { type BenchOptions, freePort, scratchDatabase, startServerProcess } from './support.ts';

const MIB = 1024 * 1024;
const BIG = 100 * MIB;
const SMALL = MIB;
const CHUNK = 64 * 1024;
const SAMPLE_MS = 50;
const DIRECTORY = '/bench';
const USERNAME = 'benchupload';
const PASSWORD = 'bench-pass-1';
/** The bound on the increase, in MB (10^6 bytes). */
const TARGET_MB = 50;

/** Megabytes (10^6 bytes) from /proc's kB (which are KiB). */
const mb = (kib: number) => (kib * 1024) / 1e6;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

// ---------------------------------------------------------------------------------------------
// Setup through the core, before the server runs (PGlite allows one process on a data dir).

async function setup(env: Record<string, string>, ptero: PterodactylEmulator): Promise<{ planId: number }> {
  const config = loadConfig(env);
  const database = await openDatabase(
    config.databaseUrl
      ? { engine: 'postgresql', url: config.databaseUrl }
      : { engine: 'pglite', dataDir: config.dataDir, role: 'bench setup' },
  );
  await migrateToLatest(database.db);
  const deps = await createDeps(config, database, pino({ level: 'silent' }));
  try {
    await seedDemoCatalog(database.db);
    for (const code of ['mum1', 'blr1', 'del1']) {
      await deps.nodes.add({
        name: `ptero-${code}`,
        kind: 'pterodactyl',
        locationCode: code,
        endpoint: ptero.url,
        credentials: { app_key: ptero.appKey, client_key: ptero.clientKey },
        settings: { panel_node: ptero.panelNodeId },
        capacity: 100,
      });
    }
    const account = await deps.accounts.register({
      name: 'Bench Upload',
      email: 'bench-upload@example.in',
      username: USERNAME,
      password: PASSWORD,
    });
    await deps.accounts.markVerified(account.id);
    await deps.wallet.credit(account.id, '5000', 'bench float');
    const plan = await database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'mc-java-2g')
      .executeTakeFirstOrThrow();
    return { planId: plan.id };
  } finally {
    await closeDeps(deps);
    await database.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The server as `npm start` runs it: node itself (no npm wrapper), so the child's pid is the
// process that listens and whose memory is measured.

interface Server {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  // BENCH_NODE_ARGS="--flag …" adds node flags to the server (e.g. --heapsnapshot-signal=SIGUSR2, V8 sizes).
  const nodeFlags = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((f) => f !== '');
  const server = await startServerProcess(env, { nodeFlags, upTimeoutMs: 120_000 });
  const pid = server.child.pid as number;
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  if (!cmdline.includes('server/src/main.ts')) throw new Error(`pid ${pid} is not the server: ${cmdline}`);
  return { base: server.url, pid, stop: server.stop };
}

// ---------------------------------------------------------------------------------------------
// A browser's session over real HTTP: cookie jar, CSRF token.

class Session {
  readonly cookies = new Map<string, string>();
  csrf = '';
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const headers: Record<string, string> = { cookie: this.cookieHeader };
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      headers['x-csrf-token'] = this.csrf;
    }
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const json = (await res.json()) as Json;
    if (typeof json.csrf_token === 'string') this.csrf = json.csrf_token;
    return { status: res.status, json };
  }
}

type Json = Record<string, unknown>;

function field(json: Json, ...path: string[]): unknown {
  let at: unknown = json;
  for (const key of path) at = at !== null && typeof at === 'object' ? (at as Json)[key] : undefined;
  return at;
}

async function signIn(base: string): Promise<Session> {
  const session = new Session(base);
  const csrf = await session.call('GET', '/api/v1/client/auth/csrf/');
  if (csrf.status !== 200) throw new Error(`csrf: ${csrf.status} ${JSON.stringify(csrf.json)}`);
  const login = await session.call('POST', '/api/v1/client/auth/login/', {
    identifier: USERNAME,
    password: PASSWORD,
    csrf_token: session.csrf,
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.json)}`);
  return session;
}

/** Order mc-java-2g in mum1 and wait until the service is active; its id. */
async function orderGame(session: Session, planId: number): Promise<number> {
  const placed = await session.call('POST', '/api/v1/client/orders/', {
    plan_id: planId,
    config: { server_name: 'benchmc', eula: true, region: 'mum1' },
    idempotency_key: `bench-upload-${randomBytes(8).toString('hex')}`,
  });
  if (placed.status !== 201) throw new Error(`order: ${placed.status} ${JSON.stringify(placed.json)}`);
  const serviceId = field(placed.json, 'service', 'id');
  if (typeof serviceId !== 'number') throw new Error(`order: no service id in ${JSON.stringify(placed.json)}`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = await session.call('GET', `/api/v1/client/services/?id=${serviceId}`);
    const status = field(got.json, 'service', 'status');
    if (status === 'active') return serviceId;
    const job = field(got.json, 'service', 'last_job', 'status');
    if (status === 'failed' || job === 'failed') throw new Error(`provisioning failed: ${JSON.stringify(got.json)}`);
    if (Date.now() > deadline) throw new Error(`service ${serviceId} still ${String(status)} after 120 s`);
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------
// Memory of the server process.

interface Status {
  rssKb: number;
  hwmKb: number;
}

function readStatus(pid: number): Status {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
}

interface Sampled {
  peakKb: number;
  samples: number;
  maxGapMs: number;
}

/** Plain JavaScript run in a worker thread: VmRSS every `interval` ms until told to stop. */
const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { pid, interval } = workerData;
let peakKb = 0, samples = 0, maxGapMs = 0, last = 0;
function sample() {
  const now = performance.now();
  if (last) maxGapMs = Math.max(maxGapMs, now - last);
  last = now;
  const m = /^VmRSS:\\s+(\\d+) kB/m.exec(readFileSync('/proc/' + pid + '/status', 'utf8'));
  if (m) { peakKb = Math.max(peakKb, Number(m[1])); samples++; }
}
sample();
const timer = setInterval(sample, interval);
parentPort.postMessage('started');
parentPort.on('message', () => {
  clearInterval(timer);
  sample();
  parentPort.postMessage({ peakKb, samples, maxGapMs });
  parentPort.close();
});
`;

async function startSampler(pid: number): Promise<{ stop(): Promise<Sampled> }> {
  const worker = new Worker(SAMPLER, { eval: true, workerData: { pid, interval: SAMPLE_MS } });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    stop: () =>
      new Promise<Sampled>((resolve, reject) => {
        worker.once('message', (m: Sampled) => {
          void worker.terminate();
          resolve(m);
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A multipart upload streamed by hand: `directory`, then the file part generated chunk by chunk.

/** 1 MiB of random bytes the generated files are cut from (64 KiB chunks at varying offsets). */
const POOL = randomBytes(MIB + CHUNK);

function* fileChunks(size: number): Generator<Buffer> {
  for (let sent = 0, i = 0; sent < size; i++) {
    const n = Math.min(CHUNK, size - sent);
    const offset = (i * 40_503) % MIB;
    yield POOL.subarray(offset, offset + n);
    sent += n;
  }
}

function fileDigest(size: number): string {
  const hash = createHash('sha256');
  for (const chunk of fileChunks(size)) hash.update(chunk);
  return hash.digest('hex');
}

interface Uploaded {
  status: number;
  json: Json;
  ms: number;
}

function upload(session: Session, serviceId: number, name: string, size: number): Promise<Uploaded> {
  const boundary = `----hostplane-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="directory"\r\n\r\n${DIRECTORY}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  function* body(): Generator<Buffer> {
    yield head;
    yield* fileChunks(size);
    yield tail;
  }
  const url = new URL(`${session.base}/api/v1/client/game/?service=${serviceId}&action=file_upload`);
  const started = performance.now();
  return new Promise<Uploaded>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          cookie: session.cookieHeader,
          'x-csrf-token': session.csrf,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + size + tail.length),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(parts).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Json, ms });
          } catch {
            reject(new Error(`upload answered ${res.statusCode}: ${text.slice(0, 500)}`));
          }
        });
      },
    );
    req.on('error', reject);
    pipeline(Readable.from(body()), req).catch(reject);
  });
}

// ---------------------------------------------------------------------------------------------

interface Row {
  label: string;
  size: number;
  baselineKb: number;
  /** VmHWM at the answer, reset to the current RSS just before the upload: the peak (never under a sample). */
  hwmKb: number;
  sampledKb: number;
  afterKb: number;
  ms: number;
  samples: number;
  maxGapMs: number;
}

/**
 * Reset the process's VmHWM to its current RSS (`5` to /proc/<pid>/clear_refs, Linux ≥ 4.0, same
 * user), so VmHWM read later is the peak since now. False when the kernel refuses.
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The emulator's copy of an uploaded file: checked against what was sent, then dropped. */
function checkStored(ptero: PterodactylEmulator, serviceId: number, name: string, size: number): void {
  // The platform names it `hp-<installation>-svc-<id>` (one installation on this emulator).
  const server = [...ptero.state.servers.values()].find((s) => s.externalId?.endsWith(`-svc-${serviceId}`));
  if (!server) throw new Error(`the panel has no server for service ${serviceId}`);
  const tree = ptero.state.files.get(server.id);
  const key = `${DIRECTORY.slice(1)}/${name}`;
  const entry = tree?.get(key);
  if (!entry || entry.dir) throw new Error(`the panel holds no file ${key}`);
  if (entry.content.length !== size)
    throw new Error(`the panel holds ${entry.content.length} bytes at ${key}, not ${size}`);
  const digest = createHash('sha256').update(entry.content).digest('hex');
  if (digest !== fileDigest(size)) throw new Error(`the panel's ${key} differs from what was sent`);
  tree?.delete(key);
}

interface Target {
  session: Session;
  serviceId: number;
  ptero: PterodactylEmulator;
  pid: number;
}

async function measuredUpload(label: string, to: Target, size: number, name: string): Promise<Row> {
  // Let the previous request's garbage and the bench's own work settle before the baseline.
  await sleep(1000);
  const sampler = await startSampler(to.pid);
  if (!resetPeak(to.pid)) throw new Error('cannot reset VmHWM (/proc/<pid>/clear_refs): this bench needs Linux ≥ 4.0');
  const before = readStatus(to.pid);
  const res = await upload(to.session, to.serviceId, name, size);
  const atAnswer = readStatus(to.pid);
  const sampled = await sampler.stop();
  if (res.status !== 201) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.json)}`);
  if (res.json.size !== size || res.json.path !== `${DIRECTORY}/${name}`) {
    throw new Error(`${label}: answered ${JSON.stringify(res.json)}`);
  }
  checkStored(to.ptero, to.serviceId, name, size);
  await sleep(1000);
  const after = readStatus(to.pid);
  return {
    label,
    size,
    baselineKb: before.rssKb,
    // The kernel updates VmHWM lazily (per-thread RSS counters): it can read a few hundred KiB under a sample.
    hwmKb: Math.max(atAnswer.hwmKb, sampled.peakKb, before.rssKb),
    sampledKb: sampled.peakKb,
    afterKb: after.rssKb,
    ms: res.ms,
    samples: sampled.samples,
    maxGapMs: sampled.maxGapMs,
  };
}

function report(rows: Row[], warmKb: number, startHwmKb: number, engine: string): string {
  const lines = [
    '| run | RSS before MB | peak RSS MB (VmHWM) | increase MB | sampled peak MB (samples, max gap ms) | RSS 1 s after MB | time s | MiB/s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.label} | ${fmt(mb(r.baselineKb))} | ${fmt(mb(r.hwmKb))} | ${fmt(mb(r.hwmKb - r.baselineKb))} | ` +
        `${fmt(mb(r.sampledKb))} (${r.samples}, ${Math.round(r.maxGapMs)}) | ${fmt(mb(r.afterKb))} | ` +
        `${fmt(r.ms / 1000, 2)} | ${fmt(r.size / MIB / (r.ms / 1000))} |`,
    );
  }
  const big = rows.filter((r) => r.size === BIG);
  const small = rows.filter((r) => r.size === SMALL);
  const worst = (of: Row[]) => Math.max(...of.map((r) => mb(r.hwmKb - r.baselineKb)));
  const overWarm = Math.max(...big.map((r) => mb(r.hwmKb - warmKb)));
  const verdict = worst(big) < TARGET_MB ? 'met' : 'NOT met';
  return [
    lines.join('\n'),
    '',
    `Server (${engine}): VmHWM from its start to the game server being active ${fmt(mb(startHwmKb))} MB; ` +
      `RSS after the warm-up ${fmt(mb(warmKb))} MB. ` +
      `Largest increase during a 100 MiB upload: ${fmt(worst(big))} MB over the RSS just before it ` +
      `(${fmt(overWarm)} MB over the warm-up RSS); during a 1 MiB upload: ${fmt(worst(small))} MB. ` +
      `Target < ${TARGET_MB} MB: ${verdict}.`,
    '',
    'Peak = VmHWM read when the answer arrived, reset to the current RSS just before the upload ' +
      '(/proc/<pid>/clear_refs), so it is the exact peak; the sampled peak (VmRSS every 50 ms from a worker ' +
      'thread) cross-checks it. MB = 10^6 bytes (/proc reports KiB). Every upload answered 201 with its size, ' +
      'and the emulated node held the same bytes (SHA-256) at the path.',
  ].join('\n');
}

export async function run(options: BenchOptions): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-bench-upload-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DEMO: '0',
    LOG_LEVEL: 'info',
    SECRET_KEY: randomBytes(32).toString('base64'),
    PORT: String(await freePort()),
  };
  let dropDb: (() => Promise<void>) | null = null;
  if (options.engine === 'postgresql') {
    const scratch = await scratchDatabase(options.pgUrl, `hostplane_bench_upload_${process.pid}`);
    env.DATABASE_URL = scratch.url;
    dropDb = scratch.drop;
  }
  const ptero = await startPterodactylEmulator({ installDelayMs: 200, startDelayMs: 50, backupDelayMs: 50 });
  let server: Server | null = null;
  const rows: Row[] = [];
  let warm: Status = { rssKb: 0, hwmKb: 0 };
  let startHwmKb = 0;
  try {
    const { planId } = await setup(env, ptero);
    server = await startServer(env);
    const session = await signIn(server.base);
    const serviceId = await orderGame(session, planId);
    // Warm-up: the upload path's code, buffers and connections, then the baseline.
    const to: Target = { session, serviceId, ptero, pid: server.pid };
    startHwmKb = readStatus(server.pid).hwmKb;
    for (let i = 0; i < 3; i++) await measuredUpload('warm-up', to, 4096, 'w.bin');
    await measuredUpload('warm-up', to, SMALL, 'w1.bin');
    await sleep(1000);
    warm = readStatus(server.pid);
    for (let round = 1; round <= options.rounds; round++) {
      rows.push(await measuredUpload(`1 MiB upload #${round}`, to, SMALL, `small${round}.bin`));
      rows.push(await measuredUpload(`100 MiB upload #${round}`, to, BIG, `big${round}.bin`));
    }
  } finally {
    await server?.stop();
    await ptero.stop();
    await dropDb?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return report(rows, warm.rssKb, startHwmKb, options.engine);
}
