// `npm run bench -- startup [--rounds N]`: time from spawning `node server/src/main.ts`
// (as `npm start` does) to the first 200 from GET /api/v1/health/, on a fresh DATA_DIR (creates
// the embedded cluster from the migrated template, as after `npm ci`, or by initdb and the
// migrations without one) and on an existing one (opens and checks it), against the
// same measurement of bench/raw-server.ts (plain node:http, also through tsx) in the same run.
// Interleaved rounds, medians; the rounds default to 5 here.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTemplate } from '../server/src/db/template-build.ts';
import { type BenchOptions, freePort, ROOT } from './support.ts';

export const engine = 'pglite' as const;

interface Start {
  ms: number;
  child: ChildProcess;
}

async function timeToOk(script: string, path: string, env: Record<string, string>): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', join(ROOT, 'server/src/boot.ts'), join(ROOT, script)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (c: Buffer) => {
    errors += c.toString();
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited:\n${errors}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      if (res.status === 200) return { ms: performance.now() - started, child };
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 120_000) throw new Error(`${script} did not come up:\n${errors}`);
    await sleep(10);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, sleep(30_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

export async function run(options: BenchOptions): Promise<string> {
  const rounds = Math.max(options.rounds, 5);
  const server = { DEMO: '0', LOG_LEVEL: 'info' };
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'hostplane-bench-startup-'));
    dirs.push(dir);
    return dir;
  };
  const existing = join(tempDir(), 'data');
  // As after `npm ci`, whose postinstall builds it: the template a fresh DATA_DIR starts from.
  await ensureTemplate();
  const samples: Record<string, number[]> = { baseline: [], fresh: [], existing: [] };
  try {
    // Create the existing data directory once (and warm the file cache for every kind).
    await stop((await timeToOk('server/src/main.ts', '/api/v1/health/', { ...server, DATA_DIR: existing })).child);
    await stop((await timeToOk('bench/raw-server.ts', '/__up', {})).child);
    for (let round = 0; round < rounds; round++) {
      for (const kind of ['baseline', 'fresh', 'existing'] as const) {
        const started =
          kind === 'baseline'
            ? await timeToOk('bench/raw-server.ts', '/__up', {})
            : await timeToOk('server/src/main.ts', '/api/v1/health/', {
                ...server,
                DATA_DIR: kind === 'fresh' ? join(tempDir(), 'data') : existing,
              });
        samples[kind]?.push(started.ms);
        await stop(started.child);
      }
    }
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const base = median(samples.baseline ?? []);
  const row = (label: string, xs: number[]) =>
    `| ${label} | ${Math.round(median(xs))} | ${xs.map((x) => Math.round(x)).join(', ')} | ${(median(xs) / base).toFixed(1)} |`;
  return [
    `${rounds} interleaved starts of each; time from spawn to the first 200.`,
    '',
    '| start | median ms | all runs ms | ratio to baseline |',
    '|---|---:|---|---:|',
    row('baseline: raw node:http via tsx', samples.baseline ?? []),
    row('hostplane, fresh DATA_DIR (pglite)', samples.fresh ?? []),
    row('hostplane, existing DATA_DIR (pglite)', samples.existing ?? []),
  ].join('\n');
}
