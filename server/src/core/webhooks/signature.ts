// Webhook signing secrets and signatures, as the Standard Webhooks specification defines them:
// a secret is `whsec_` + base64 of random bytes (we use 32), and a signature is
// `v1,` + base64(HMAC-SHA256(secret bytes, "<webhook-id>.<webhook-timestamp>.<body>")), where the
// secret bytes are the base64-decoded part after `whsec_` and the timestamp is in whole seconds.
// While a rotated-out secret is still valid, both signatures go in the header, space-separated.

import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The key an HMAC is made with: the bytes the secret's base64 part stands for. */
export function secretBytes(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** `v1,<base64 signature>` of one message under one secret. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret still valid, newest first. */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(' ');
}

/** What the panel shows of a secret after creation: enough to tell two apart. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, SECRET_PREFIX.length + 4)}…`;
}

/** The associated data a secret is sealed with under SECRET_KEY (it names the account that owns it). */
export const secretAad = (accountId: number) => `webhook-secret:${accountId}`;
