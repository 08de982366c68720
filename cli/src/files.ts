// Files the CLI writes (an invoice's PDF): whole or not at all. The bytes go to a temporary file
// beside the target, which is then renamed over it (--force) or linked into place (never over an
// existing file); a failure, a full disk included, removes it, so no half file is ever left under
// the name asked for.

import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CliError } from './errors.ts';
import { msg } from './output.ts';

/** Why `path` could not be written, for a person. */
function failure(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EEXIST') {
    return new CliError(
      msg`${path} exists: nothing was written (--force overwrites it, --out names another file)`.text,
    );
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new CliError(msg`cannot write ${path}: no space left on the disk (${code}); nothing was written`.text);
  }
  return new CliError(msg`cannot write ${path}: ${code ?? (error as Error).message}; nothing was written`.text);
}

/** Whether `path` is something other than a regular file (`/dev/stdout`, a pipe, a symbolic link). */
function special(path: string): boolean {
  try {
    return !lstatSync(path).isFile();
  } catch {
    return false; // not there yet
  }
}

/**
 * Write `data` to `path` whole: over an existing file only with `overwrite`. What is not a
 * regular file (a device, a pipe, a symbolic link) is written into as it is, never replaced.
 */
export function writeWhole(path: string, data: Uint8Array, overwrite: boolean): void {
  if (overwrite && special(path)) {
    try {
      writeFileSync(path, data);
    } catch (error) {
      throw failure(path, error);
    }
    return;
  }
  const partial = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    writeFileSync(partial, data, { flag: 'wx' });
    if (overwrite) renameSync(partial, path);
    else linkSync(partial, path);
  } catch (error) {
    throw failure(path, error);
  } finally {
    rmSync(partial, { force: true });
  }
}
