// Building multipart bodies by hand, so tests control every byte (chunking, lying headers).

import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { type ReceivedUpload, receiveUpload, uploadDirs } from '../../src/core/deposits/uploads.ts';

export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(64)]);
export const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(64)]);
export const WEBP = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([0, 0, 0, 0]),
  Buffer.from('WEBPVP8 '),
  randomBytes(64),
]);

export interface FilePart {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export function multipart(
  fields: Record<string, string>,
  files: FilePart[] = [],
): { body: Buffer; contentType: string } {
  const boundary = `----hostplane${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A proof file received the way the server receives one (tests that call the core directly). */
export function receivedPng(dataDir: string): Promise<ReceivedUpload> {
  return receiveUpload(Readable.from([PNG]), uploadDirs(dataDir).tmp);
}
