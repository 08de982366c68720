// Shared pieces of the benchmarks: start Hostplane or a raw node:http baseline as separate
// processes, drive them with autocannon, and report ratios measured in the same run.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BenchOptions {
  engine: 'pglite' | 'postgresql';
  /** Admin URL of a PostgreSQL server; a throwaway database is created on it. */
  pgUrl: string;
  duration: number;
  connections: number;
  rounds: number;
}

export interface Measured {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

export interface Started {
  url: string;
  /** The process answering, where the bench spawned it. */
  pid?: number;
  stop(): Promise<void>;
}

async function waitUntilUp(url: string, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error(`server did not come up:\n${output()}`);
}

function spawnNode(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
  nodeFlags: string[] = [],
): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    [...nodeFlags, '--import', join(ROOT, 'server/src/boot.ts'), join(ROOT, script), ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let text = '';
  child.stderr?.on('data', (c: Buffer) => {
    text = (text + c.toString()).slice(-20_000);
  });
  return { child, output: () => text };
}

async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * The server (`server/src/main.ts`, as `npm start` runs it) in a child process with exactly this
 * environment, once its health route answers; for benches that set up the data directory or
 * database themselves. `child.pid` is the process that listens.
 */
export async function startServerProcess(
  env: Record<string, string>,
  options: { nodeFlags?: string[]; upTimeoutMs?: number } = {},
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const { child, output } = spawnNode('server/src/main.ts', env, [], options.nodeFlags);
  const url = `http://127.0.0.1:${env.PORT}`;
  const stop = () => stopChild(child, 30_000);
  try {
    await waitUntilUp(`${url}/api/v1/health/`, child, output, options.upTimeoutMs);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, child, stop };
}

/** Hostplane as `npm start` runs it, on a throwaway data directory or PostgreSQL database. */
export async function startHostplane(
  options: BenchOptions,
  extraEnv: Record<string, string> = {},
  args: string[] = [],
): Promise<Started & { env: Record<string, string> }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-bench-'));
  const env: Record<string, string> = {
    PORT: String(port),
    DATA_DIR: dataDir,
    DEMO: '0',
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  let dropDb: (() => Promise<void>) | null = null;
  if (options.engine === 'postgresql') {
    const scratch = await scratchDatabase(options.pgUrl, `hostplane_bench_${process.pid}`);
    env.DATABASE_URL = scratch.url;
    env.SECRET_KEY ??= randomBytes(32).toString('base64');
    dropDb = scratch.drop;
  }
  const { child, output } = spawnNode('server/src/main.ts', env, args);
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${base}/api/v1/health/`, child, output);
  return {
    url: base,
    env,
    async stop() {
      await stopChild(child);
      await dropDb?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The baseline: bench/raw-server.ts answering fixed bytes per path on plain node:http. */
export async function startRaw(
  responses: Record<string, { status: number; body: string; type?: string }>,
): Promise<Started> {
  const port = await freePort();
  const { child, output } = spawnNode('bench/raw-server.ts', {
    PORT: String(port),
    RESPONSES: JSON.stringify(responses),
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${base}/__up`, child, output);
  return { url: base, pid: child.pid, stop: () => stopChild(child) };
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms, from /proc; null where
 * there is no /proc. Divided by the requests of a run it gives CPU per request, which moves far
 * less than req/s when the machine is shared (the client, the database and Redis share the cores).
 */
export function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}
/** User + system time (ms) of a /proc stat line (a process's or one thread's). */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
/**
 * CPU time (ms) of a process's threads, summed by thread name (/proc/PID/task): which thread
 * a request's time goes to — node's main thread, a worker thread (PGlite's), libuv's pool, V8's GC.
 */
export function threadCpuMs(pid: number | undefined): Map<string, number> {
  const byName = new Map<string, number>();
  if (pid === undefined) return byName;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The main thread is the one whose id is the process's; the others go by their names.
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      byName.set(name, (byName.get(name) ?? 0) + statCpuMs(stat));
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}
/** A reading of the whole machine's CPU: each process's user + system time (ms), and the CPUs' idle time. */
export interface MachineCpu {
  byPid: Map<number, { name: string; ms: number }>;
  idleMs: number;
  allMs: number;
  cpus: number;
}
export function machineCpu(): MachineCpu {
  const byPid = new Map<number, { name: string; ms: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      byPid.set(Number(entry), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ms: statCpuMs(stat) });
    } catch {
      // the process ended meanwhile
    }
  }
  // /proc/stat's first line: user nice system idle iowait irq softirq steal … in ticks, all CPUs.
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const ticks = (lines[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const toMs = (t: number) => (t * 1000) / CLOCK_TICKS;
  return {
    byPid,
    idleMs: toMs((ticks[3] ?? 0) + (ticks[4] ?? 0)),
    allMs: toMs(ticks.reduce((a, b) => a + b, 0)),
    cpus: lines.filter((l) => /^cpu\d+ /.test(l)).length,
  };
}
/**
 * Where the machine's CPU went between two readings, in % of one core: the processes named in
 * `named` (by pid), every other process by its name, summed (postgres drivers, redis-server); and
 * how idle the CPUs were. On a machine of two vCPUs the load generator, the server and its
 * databases share them, and a ratio to the baseline says nothing of that alone.
 */
export function machineShares(
  before: MachineCpu,
  after: MachineCpu,
  named: Record<string, number | undefined>,
): string {
  const wallMs = (after.allMs - before.allMs) / Math.max(1, after.cpus);
  if (wallMs <= 0) return 'no reading';
  const pct = (ms: number) => Math.round((100 * ms) / wallMs);
  const byName = new Map<string, number>();
  const label = new Map(
    Object.entries(named).flatMap(([name, pid]) => (pid === undefined ? [] : [[pid, name] as const])),
  );
  for (const [pid, now] of after.byPid) {
    // A process started during the run (a database connection the pool opened anew after its
    // idle timeout) counts all its time; one that ended during it is not seen.
    const used = now.ms - (before.byPid.get(pid)?.ms ?? 0);
    if (used <= 0) continue;
    const name = label.get(pid) ?? now.name;
    byName.set(name, (byName.get(name) ?? 0) + used);
  }
  const shown = [...byName]
    .filter(([, ms]) => pct(ms) >= 2)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${pct(ms)} %`);
  const idle = (100 * (after.idleMs - before.idleMs)) / Math.max(1, after.allMs - before.allMs);
  return `${shown.join(', ')}; CPUs idle ${Math.round(idle)} % (of ${after.cpus})`;
}
/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)). */
const CLOCK_TICKS = 100;

export async function measure(
  label: string,
  url: string,
  options: BenchOptions,
  headers: Record<string, string> = {},
): Promise<Measured> {
  const result = await autocannon({ url, connections: options.connections, duration: options.duration, headers });
  return {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export function table(rows: Measured[], baseline: (row: Measured) => Measured | undefined): string {
  const lines = [
    '| run | req/s | p50 ms | p99 ms | errors | non-2xx | ratio to baseline |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const base = baseline(row);
    const ratio = base && base !== row ? (row.rps / base.rps).toFixed(2) : base === row ? '1.00 (baseline)' : '-';
    lines.push(`| ${row.label} | ${row.rps} | ${row.p50} | ${row.p99} | ${row.errors} | ${row.non2xx} | ${ratio} |`);
  }
  return lines.join('\n');
}

export function summarize(rows: Measured[], subject: string, baseline: string): string {
  const avg = (label: string) => {
    const of = rows.filter((r) => r.label.startsWith(label));
    return of.reduce((sum, r) => sum + r.rps, 0) / Math.max(1, of.length);
  };
  const a = avg(subject);
  const b = avg(baseline);
  return `${subject}: ${Math.round(a)} req/s vs ${baseline}: ${Math.round(b)} req/s → ratio ${(a / b).toFixed(2)}`;
}

/** A fresh database `name` on the server at `adminUrl` (dropped first if a crashed run left it). */
export async function scratchDatabase(adminUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  const run = async (statement: string) => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await run(`drop database if exists "${name}" with (force)`);
  await run(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists "${name}" with (force)`) };
}
