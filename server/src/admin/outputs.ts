// Files a staff command produces (an invoice's PDF), written by the CLI process: the command
// returns their bytes with its result (CommandOutput.files, base64 in AdminResult.files), so a
// command that ran inside the server through the admin socket writes to the staff member's
// working directory too, with the staff member's permissions, never the server's.

import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { jsonSafe, terminalSafe } from './command.ts';
import type { AdminResult } from './run.ts';

/**
 * Write the files of `result` (relative paths against `cwd`), private to the user (0600: an
 * invoice names a customer); return the result without them. A file that cannot be written
 * turns the result into a failure (exit 1) naming it, and the command's output is dropped, so
 * it never claims a file that is not there.
 */
export async function writeOutputFiles(result: AdminResult, json: boolean, cwd = process.cwd()): Promise<AdminResult> {
  const { files, ...rest } = result;
  if (!files || files.length === 0 || result.exitCode !== 0) return rest;
  for (const file of files) {
    try {
      await writeFile(resolve(cwd, file.path), Buffer.from(file.base64, 'base64'), { mode: 0o600 });
    } catch (error) {
      const message = `cannot write ${file.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      return {
        exitCode: 1,
        stdout: json ? jsonSafe(`${JSON.stringify({ ok: false, error: 'write_failed', message }, null, 2)}\n`) : '',
        stderr: terminalSafe(`error: ${message}\n`),
      };
    }
  }
  return rest;
}
