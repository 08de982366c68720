// An export archive at rest: the JSON gzip'd, then sealed with SECRET_KEY (AES-256-GCM) with the
// export's id as associated data, so the stored bytes say nothing without the key and one export's
// bytes cannot be passed off as another's. Layout: version (1 byte) · IV (12) · tag (16) · ciphertext.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const associated = (exportId: number) => Buffer.from(`account-export:${exportId}`, 'utf8');

export function sealArchive(key: Buffer, exportId: number, json: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associated(exportId));
  const ciphertext = Buffer.concat([cipher.update(gzipSync(Buffer.from(json, 'utf8'))), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

/** The archive's JSON bytes; throws when the bytes were altered, belong to another export or another key. */
export function openArchive(key: Buffer, exportId: number, sealed: Buffer): Buffer {
  if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new Error('not a sealed archive');
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(associated(exportId));
  decipher.setAuthTag(tag);
  const zipped = Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
  return gunzipSync(zipped);
}
