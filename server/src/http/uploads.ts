// Files of any type a route takes as a multipart part (a game server's file_upload): streamed to
// a private temporary file with the size limit enforced on the bytes received, so a large
// upload never sits in memory. The caller streams it on and the session plugin removes it when
// the request ends, whatever the outcome.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
    throw error;
  }
}
