// Running the `hostplane` CLI as a person does: the real binary (cli/bin/hostplane.js) as a child
// process with a HOME and XDG_CONFIG_HOME of its own and only the variables given (plus PATH).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './template.ts';

const BIN = join(ROOT, 'cli/bin/hostplane.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Standard output as bytes (a PDF written to `--out -`). */
  bytes: Buffer;
}

/** Homes for the CLI (one per simulated person) and the binary run in one; `cleanup` removes the homes. */
export function cliRunner(prefix: string) {
  const homes: string[] = [];
  return {
    home(): string {
      const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
      homes.push(dir);
      return dir;
    },

    /** Run the binary in `dir` to its end, standard input `input`. */
    run(
      dir: string,
      args: string[],
      options: { input?: string; env?: Record<string, string> } = {},
    ): Promise<CliResult> {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdin.end(options.input ?? '');
      // A guard against a hang, not a measure.
      const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
      return new Promise((resolve) =>
        child.on('close', (code) => {
          clearTimeout(guard);
          const bytes = Buffer.concat(out);
          resolve({ code, stdout: bytes.toString(), stderr, bytes });
        }),
      );
    },

    cleanup(): void {
      for (const dir of homes) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The run succeeded (exit 0), or the assertion shows what it printed. */
export function ok(r: CliResult): CliResult {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
