// Files of any type a route takes as a multipart part (a game server's file_upload): streamed to
// a private temporary file with the size limit enforced on the bytes received, so a large
// upload never sits in memory. The caller streams it on and the session plugin removes it when
// the request ends, whatever the outcome.
//
// Before any file reaches that directory, the upload gate (T3-M4): at most UPLOADS_PER_ACCOUNT
// uploads of one account in flight (429), and the directory's disk keeps a free-space floor
// (UPLOAD_FREE_SPACE_FLOOR_MB; 507 insufficient_storage): it is the embedded database's disk.
// A disk that fills all the same while a file is written (ENOSPC) is 507 too, the part removed.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isDiskFull, uploadDiskFull } from '../core/disk.ts';
import { AppError } from '../core/errors.ts';

export interface ReceivedFile {
  tmpPath: string;
  bytes: number;
  /** The name the client gave the part (unchecked: the route decides what it may be). */
  filename: string;
}

export async function receiveFile(
  source: NodeJS.ReadableStream,
  tmpDir: string,
  maxBytes: number,
  filename: string,
): Promise<ReceivedFile> {
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const tmpPath = join(tmpDir, `${randomBytes(16).toString('hex')}.part`);
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        return done(
          new AppError('file_too_large', {
            message: `The file is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB.`,
            details: { limit_bytes: maxBytes },
          }),
        );
      }
      done(null, chunk);
    },
  });
  // Opened (created) before anything is streamed, so a refusal in the first bytes removes a
  // file that exists, never one still being opened.
  const sink = (await open(tmpPath, 'wx', 0o600)).createWriteStream();
  try {
    await pipeline(source, count, sink);
    return { tmpPath, bytes, filename };
  } catch (error) {
    await rm(tmpPath, { force: true });
    // The disk filled while the file was written (past the gate's floor: another writer): 507.
    throw isDiskFull(error) ? uploadDiskFull(error) : error;
  }
}

/** Uploads one account may have in flight at once (streaming in, or on to the panel). */
export const UPLOADS_PER_ACCOUNT = 2;
/** What a refused third upload tells the client to wait before trying again. */
const BUSY_RETRY_SECONDS = 5;

export interface UploadGate {
  /**
   * Take one of the account's upload slots and reserve `bytes` of the temporary directory's disk,
   * before anything of the file is read: 429 rate_limited when the account has its uploads in
   * flight, 507 insufficient_storage when the disk would go below the floor. Gives the release
   * (safe to call more than once).
   */
  admit(accountId: number, bytes: number): Promise<() => void>;
}

/** Bytes free for this process's user on the disk holding `dir`. */
async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return stats.bavail * stats.bsize;
}

/**
 * The gate of one server's uploads (counted in this process: the temporary directory is this
 * machine's disk). What an admitted upload may still write counts against the floor until it
 * ends, so uploads started together cannot each see the same free space.
 */
export function createUploadGate(options: {
  tmpDir: string;
  floorBytes: number;
  perAccount?: number;
  /** The free space of the directory's disk (tests and platforms without statfs). */
  free?: (dir: string) => Promise<number>;
}): UploadGate {
  const perAccount = options.perAccount ?? UPLOADS_PER_ACCOUNT;
  const free = options.free ?? freeBytes;
  const inFlight = new Map<number, number>();
  let reserved = 0;
  return {
    async admit(accountId, bytes) {
      // Counted before the first await, so uploads arriving together cannot all pass the check.
      const running = inFlight.get(accountId) ?? 0;
      if (running >= perAccount) {
        throw new AppError('rate_limited', {
          message: `You have ${running} uploads in progress; wait for one to finish.`,
          retryAfter: BUSY_RETRY_SECONDS,
          details: { uploads_in_flight: running, limit: perAccount },
        });
      }
      inFlight.set(accountId, running + 1);
      reserved += bytes;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        reserved -= bytes;
        const left = (inFlight.get(accountId) ?? 1) - 1;
        if (left > 0) inFlight.set(accountId, left);
        else inFlight.delete(accountId);
      };
      try {
        await mkdir(options.tmpDir, { recursive: true, mode: 0o700 });
        if ((await free(options.tmpDir)) - reserved < options.floorBytes) {
          throw new AppError('insufficient_storage', {
            message: 'The server is short of disk space for uploads; try again later.',
            retryAfter: 60,
          });
        }
      } catch (error) {
        release();
        throw error;
      }
      return release;
    },
  };
}
