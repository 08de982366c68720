// A full disk, wherever the app writes a file (issue 39, the disk-full drill: server/test/disk-full.test.ts).
// An upload that meets it is 507 insufficient_storage and leaves nothing; a file the staff CLI
// writes is written whole or not at all (a temporary file beside it, then renamed or linked into
// place), so a full disk never leaves half an invoice, export or backup under the name asked for.

import { randomBytes } from 'node:crypto';
import { link, lstat, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AppError } from './errors.ts';

/** Whether `error` is the disk (or the user's quota on it) being full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** What a client is told when an upload met a full disk (507; the partial file is already removed). */
export function uploadDiskFull(cause: unknown): AppError {
  return new AppError('insufficient_storage', {
    message: 'The server ran out of disk space while receiving the file; nothing was kept. Try again later.',
    retryAfter: 60,
    cause,
  });
}

/** Why a file could not be written, for a person: a full disk said so in words. */
export function writeFailure(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (isDiskFull(error)) return `cannot write ${path}: no space left on the disk (${code}); nothing was written`;
  return `cannot write ${path}: ${code ?? (error as Error).message}`;
}

/** A new name in the directory of `target`, for what will become it. */
export function partialPathOf(target: string): string {
  return join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.partial`);
}

/**
 * Put a complete file `partial` (in the directory of `target`) in place as `target`: linked when
 * `exclusive` (EEXIST when there is one already), else renamed over it. `partial` is gone after.
 */
export async function installPartial(partial: string, target: string, exclusive: boolean): Promise<void> {
  try {
    if (exclusive) await link(partial, target);
    else await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
}

/**
 * Write `data` to `target`, whole or not at all: through a temporary file in the same directory,
 * removed when anything fails (a full disk included). `exclusive` refuses an existing `target`
 * (EEXIST), as the flag `wx` would, and never replaces it.
 */
export async function writeFileWhole(
  target: string,
  data: Buffer | string,
  options: { mode?: number; exclusive?: boolean } = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  if (options.exclusive !== true) {
    // Something that is not a plain file (/dev/stdout, a pipe, a link) is written into, never replaced.
    const existing = await lstat(target).catch(() => null);
    if (existing !== null && !existing.isFile()) return writeFile(target, data, { mode });
  }
  const partial = partialPathOf(target);
  try {
    await writeFile(partial, data, { mode, flag: 'wx' });
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  await installPartial(partial, target, options.exclusive === true);
}
