// Files a staff command produces (an invoice's PDF, a backup), written by the CLI process: the
// command returns their bytes with its result (CommandOutput.files, base64 in AdminResult.files),
// or, for a file too large to travel so (a backup), the path of a temporary file it wrote in
// DATA_DIR/backup-tmp, which the CLI moves. Either way a command that ran inside the server through
// the admin socket writes to the staff member's working directory too, with the staff member's
// permissions, never the server's. A file is written whole or not at all (core/disk.ts): a full
// disk leaves nothing under the name asked for.

import { constants } from 'node:fs';
import { chmod, copyFile, link, rename, rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { installPartial, isDiskFull, partialPathOf, writeFailure, writeFileWhole } from '../core/disk.ts';
import { jsonSafe, terminalSafe } from './command.ts';
import type { AdminResult, ResultFile } from './run.ts';

/** Move a temporary file to `target` (refusing to replace one when `exclusive`), private (0600). */
async function moveTemp(tempPath: string, target: string, exclusive: boolean): Promise<void> {
  try {
    if (exclusive) {
      // link fails on an existing target, which rename would replace.
      await link(tempPath, target);
    } else {
      await rename(tempPath, target);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Another disk: copied beside the target first, so a copy cut short is never the target.
    const partial = partialPathOf(target);
    try {
      await copyFile(tempPath, partial, constants.COPYFILE_EXCL);
    } catch (copyError) {
      await rm(partial, { force: true });
      throw copyError;
    }
    await installPartial(partial, target, exclusive);
  }
  await chmod(target, 0o600);
}

async function writeOne(file: ResultFile, cwd: string, tempDir: string | null): Promise<void> {
  const target = resolve(cwd, file.path);
  if ('base64' in file) {
    await writeFileWhole(target, Buffer.from(file.base64, 'base64'), { exclusive: file.exclusive === true });
    return;
  }
  // Only a file of the directory the CLI expects it in, named as a backup's temporaries are.
  const temp = resolve(file.tempPath);
  if (tempDir === null || dirname(temp) !== resolve(tempDir) || !/^[0-9a-f]{16}\.tar\.gz$/.test(basename(temp))) {
    throw Object.assign(new Error('not a temporary file of this DATA_DIR'), { code: 'EINVAL' });
  }
  try {
    await moveTemp(temp, target, file.exclusive === true);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Write the files of `result` (relative paths against `cwd`), private to the user (0600: an
 * invoice names a customer, a backup holds everything); return the result without them. A file
 * that cannot be written turns the result into a failure (exit 1) naming it, and the command's
 * output is dropped, so it never claims a file that is not there. `tempDir`: where temporary files
 * may be moved from (DATA_DIR/backup-tmp); null refuses them.
 */
export async function writeOutputFiles(
  result: AdminResult,
  json: boolean,
  cwd = process.cwd(),
  tempDir: string | null = null,
): Promise<AdminResult> {
  const { files, ...rest } = result;
  if (!files || files.length === 0) return rest;
  let failed: { path: string; error: unknown } | null = null;
  for (const file of files) {
    if (failed !== null || result.exitCode !== 0) {
      if ('tempPath' in file && tempDir !== null && dirname(resolve(file.tempPath)) === resolve(tempDir))
        await rm(resolve(file.tempPath), { force: true });
      continue;
    }
    try {
      await writeOne(file, cwd, tempDir);
    } catch (error) {
      failed = { path: file.path, error };
    }
  }
  if (failed === null) return rest;
  const code = (failed.error as NodeJS.ErrnoException).code;
  const message =
    code === 'EEXIST'
      ? `${failed.path} exists already; choose another file name`
      : writeFailure(failed.path, failed.error);
  const error = code === 'EEXIST' ? 'file_exists' : isDiskFull(failed.error) ? 'insufficient_storage' : 'write_failed';
  return {
    exitCode: 1,
    stdout: json ? jsonSafe(`${JSON.stringify({ ok: false, error, message }, null, 2)}\n`) : '',
    stderr: terminalSafe(`error: ${message}\n`),
  };
}
