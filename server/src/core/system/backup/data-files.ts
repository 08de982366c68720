// The files of DATA_DIR a backup keeps besides the database: the payment proofs customers
// uploaded, the generated key that seals secrets at rest (when SECRET_KEY is not set), and the
// demo's emulated panels' state (demo mode: the restored copy's servers are still there). Invoice
// PDFs are not files: each is drawn from its immutable invoice row, to the same bytes every time.
// Not kept: the database's own directory (dumped instead), upload temporaries, the lock, sockets.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SECRET_KEY_FILE } from '../../crypto/secret-key.ts';

/** Directories under DATA_DIR kept whole (the emulators' files are rewritten as their state changes). */
export const KEPT_DIRS = ['uploads/deposits', 'emulators'] as const;
/** Where a backup is assembled before the CLI moves it to its file (under DATA_DIR, private). */
export const BACKUP_TEMP_DIR = 'backup-tmp';

export interface DataFile {
  /** Relative to DATA_DIR, with `/`. */
  path: string;
  absolute: string;
  /**
   * A small file that may be rewritten at any time (the emulators' state, the key): read whole
   * once, so the backup holds one version of it. Uploads are never rewritten: they are streamed.
   */
  mutable: boolean;
}

async function walk(root: string, relative: string, mutable: boolean, out: DataFile[]): Promise<void> {
  let names: string[];
  try {
    names = (await readdir(join(root, relative))).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) {
    const path = `${relative}/${name}`;
    const absolute = join(root, path);
    const stat = await lstat(absolute).catch(() => null); // removed meanwhile (an erased proof)
    if (stat?.isDirectory()) await walk(root, path, mutable, out);
    else if (stat?.isFile()) out.push({ path, absolute, mutable });
  }
}

/** The files of `dataDir` a backup keeps; `withKey`: the generated secret key is in use. */
export async function keptFiles(dataDir: string, withKey: boolean): Promise<DataFile[]> {
  const out: DataFile[] = [];
  if (withKey) {
    const absolute = join(dataDir, SECRET_KEY_FILE);
    if ((await lstat(absolute).catch(() => null))?.isFile())
      out.push({ path: SECRET_KEY_FILE, absolute, mutable: true });
  }
  for (const dir of KEPT_DIRS) await walk(dataDir, dir, dir === 'emulators', out);
  return out;
}

/** Size and SHA-256 of a file, read once. */
export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
