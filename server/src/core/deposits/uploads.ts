// Payment-proof uploads: accepted by what the bytes are (PNG, JPEG, WebP, PDF magic numbers),
// never by the name or the declared type; written to a temporary file while streaming, with the
// size limit enforced on the bytes actually received; stored under a random name.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UploadType } from '../../db/tables.ts';
import { isDiskFull, uploadDiskFull } from '../disk.ts';
import { AppError } from '../errors.ts';

export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

export interface ReceivedUpload {
  tmpPath: string;
  type: UploadType;
  bytes: number;
}

/**
 * Uploads this process received itself. keepUpload takes nothing else, so an object that merely
 * looks like an upload (say, from a JSON body) can never name a file to move.
 */
const received = new WeakSet<ReceivedUpload>();

export function sniff(head: Buffer): UploadType | null {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
    return 'webp';
  if (head.length >= 5 && head.toString('latin1', 0, 5) === '%PDF-') return 'pdf';
  return null;
}

export function uploadDirs(dataDir: string) {
  return { tmp: join(dataDir, 'uploads', 'tmp'), deposits: join(dataDir, 'uploads', 'deposits') };
}

/**
 * Stream `source` to a temporary file. Throws 413 file_too_large past `maxBytes` (counted, not
 * trusted from headers), 415 unsupported_media_type when the first bytes are not an accepted
 * type, and 507 insufficient_storage when the disk fills meanwhile; each time the partial file is removed.
 */
export async function receiveUpload(
  source: NodeJS.ReadableStream,
  tmpDir: string,
  maxBytes = MAX_UPLOAD_BYTES,
): Promise<ReceivedUpload> {
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const tmpPath = join(tmpDir, `${randomBytes(16).toString('hex')}.part`);
  let bytes = 0;
  let head = Buffer.alloc(0);
  let type: UploadType | null = null;
  const inspect = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        return done(
          new AppError('file_too_large', { message: `The file is larger than ${maxBytes / 1024 / 1024} MiB.` }),
        );
      if (type === null) {
        head = Buffer.concat([head, chunk]).subarray(0, 16);
        if (head.length >= 12 || bytes >= 12) {
          type = sniff(head);
          if (type === null)
            return done(
              new AppError('unsupported_media_type', {
                message: 'The screenshot must be a PNG, JPEG, WebP or PDF file.',
              }),
            );
        }
      }
      done(null, chunk);
    },
  });
  // Opened (created) before anything is streamed, so a refusal in the first bytes removes a
  // file that exists, never one still being opened.
  const sink = (await open(tmpPath, 'wx', 0o600)).createWriteStream();
  try {
    await pipeline(source, inspect, sink);
    type ??= sniff(head);
    if (type === null)
      throw new AppError('unsupported_media_type', {
        message: 'The screenshot must be a PNG, JPEG, WebP or PDF file.',
      });
    const upload: ReceivedUpload = { tmpPath, type, bytes };
    received.add(upload);
    return upload;
  } catch (error) {
    await rm(tmpPath, { force: true });
    // A disk that filled while the file was written: 507 insufficient_storage, nothing kept.
    throw isDiskFull(error) ? uploadDiskFull(error) : error;
  }
}

/** Move a received upload to its final random name; returns that name (not a path). */
export async function keepUpload(upload: ReceivedUpload, dir: string): Promise<string> {
  if (!received.has(upload) || !(upload.type in CONTENT_TYPES)) throw new Error('not an upload this process received');
  const name = `${randomBytes(16).toString('hex')}.${upload.type === 'jpeg' ? 'jpg' : upload.type}`;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await rename(upload.tmpPath, join(dir, name));
  } catch (error) {
    throw isDiskFull(error) ? uploadDiskFull(error) : error;
  }
  return name;
}

export const CONTENT_TYPES: Record<UploadType, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
};
