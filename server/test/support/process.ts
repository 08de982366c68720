// Running Hostplane as a real process, as `npm start` does, for tests of the entry points.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './template.ts';

export interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Ports handed out by this process, so it never hands one out twice. */
const handedOut = new Set<number>();

/** Whether 127.0.0.1:`port` can be listened on now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port for a server a test starts in a child process. Not one the kernel picks for port 0: those
 * come from the ephemeral range (32768–60999 here), which every outgoing connection also draws
 * its local port from, so a port found free that way could be some client's by the time the child
 * listened (EADDRINUSE in a CI run). A random port below that range is taken instead, once it is
 * seen free; emulators and test apps that listen on port 0 themselves stay in the ephemeral range.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000');
}

/** The first port of `range` (inclusive) free on 127.0.0.1 and not in `taken` (files whose config names ports). */
export async function freePortInRange(range: readonly [number, number], taken: number[]): Promise<number> {
  for (let port = range[0]; port <= range[1]; port++) {
    if (!taken.includes(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port in ${range.join('-')}`);
}

/** Spawn `node --import ./server/src/boot.ts <script> ...args` (as `npm start` does) from the repository root with exactly `env` (plus PATH). */
export function runNode(script: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', join(ROOT, 'server/src/boot.ts'), join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

export async function runToEnd(script: string, args: string[], env: Record<string, string>, timeoutMs = 60_000) {
  const running = runNode(script, args, env);
  const timer = setTimeout(() => running.child.kill('SIGKILL'), timeoutMs);
  const code = await running.exited;
  clearTimeout(timer);
  return { code, output: running.output() };
}

/** Poll GET url until it answers 200 with JSON; `timeoutMs` only guards against a hang. */
export async function waitForJson(
  url: string,
  running: Running,
  timeoutMs = 120_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void running.exited.then((code) => {
    exitCode = code;
  });
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`process exited with ${exitCode}:\n${running.output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return (await res.json()) as Record<string, unknown>;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`no answer from ${url} within ${timeoutMs} ms:\n${running.output()}`);
}

/**
 * Fresh temporary directories for a test file, all removed after it: call once at its top level
 * (`const freshDir = tempDirs('hostplane-proc-')`), then `freshDir()` for each.
 */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}
