// Secrets at rest (CONTRACT §3): AES-256-GCM under SECRET_KEY, and the hashes and random
// values that credentials are made of. Tokens, session ids and one-time codes are stored only
// as hashes; things the system must read back (upstream keys, service credentials, queued
// mail bodies) are encrypted.

import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. The associated data binds a value to its use. */
export function encryptSecret(key: Buffer, plaintext: string, associatedData = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function decryptSecret(key: Buffer, sealed: string, associatedData = ''): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
    throw new Error('not a sealed secret');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** 32 random bytes, base64url (43 characters): session ids, e-mail link tokens. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  // One-shot `crypto.hash`, cheaper than createHash().update().digest(): every token-surface
  // request hashes its token.
  return hash('sha256', value, 'hex');
}

/** Keyed hash, for values too short to store as a plain sha256 (a 6-digit code has 10^6 values). */
export function hmacHex(key: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', key).update(`${purpose}\0${value}`, 'utf8').digest('hex');
}

export function hmacBase64url(key: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', key).update(`${purpose}\0${value}`, 'utf8').digest('base64url');
}

/** Compare two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
