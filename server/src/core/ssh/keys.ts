// OpenSSH public keys as customers paste them (the one line of an `id_*.pub` file): checked
// before they are stored or injected into a VM, so a key we accept is one sshd will accept.
// sshpk (Joyent) parses the key; node:crypto imports it once more, which also checks that an
// ECDSA point lies on its curve (sshpk does not). What is refused, and why:
// - anything but ssh-ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa of 2048 to 16384 bits;
//   ssh-dss: OpenSSH disabled DSA in 7.0 and removed it in 9.8; security-key (FIDO) keys
//   (sk-…@openssh.com): sshpk cannot check them, and guests older than OpenSSH 8.2 (still
//   common in images) ignore them, locking the customer out; certificates (…-cert-v01):
//   they are signed for a CA's trust, not a plain authorized key;
// - more than one line, control or invisible formatting characters, more than 16 KiB;
// - authorized_keys options before the key, other formats (RFC 4716, PEM), private keys;
// - key data that is not canonical base64, is truncated, carries extra bytes, holds another
//   type than the line names, or encodes its numbers in a way OpenSSH refuses.

import { createHash, createPublicKey } from 'node:crypto';
import type sshpk from 'sshpk';
import { AppError } from '../errors.ts';
import { onFirstUse } from '../on-first-use.ts';

/** sshpk, loaded at the first key parsed (core/on-first-use.ts). */
const sshpkLib = onFirstUse<typeof sshpk>('sshpk');

export type SshKeyType =
  | 'ssh-ed25519'
  | 'ecdsa-sha2-nistp256'
  | 'ecdsa-sha2-nistp384'
  | 'ecdsa-sha2-nistp521'
  | 'ssh-rsa';

export interface PublicKey {
  type: SshKeyType;
  /** RSA: the modulus size; ECDSA: the curve's (256, 384, 521); Ed25519: 256. As `ssh-keygen -l` prints it. */
  bits: number;
  /** `SHA256:` and the unpadded base64 of the key blob's SHA-256, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** The text after the key data, whitespace collapsed; null when there is none. */
  comment: string | null;
  /** `type base64` and the comment, one space apart: what is stored and handed to cloud-init. */
  normalized: string;
}

export const MAX_KEY_TEXT_BYTES = 16 * 1024;
export const MIN_RSA_BITS = 2048;
/** OpenSSH refuses larger RSA moduli (SSH_RSA_MAXIMUM_MODULUS_SIZE). */
export const MAX_RSA_BITS = 16384;

const SUPPORTED: readonly SshKeyType[] = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
];
const ACCEPTED = 'ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa (2048 bits or more)';
/** Uncompressed point sizes (0x04 ‖ X ‖ Y) of the ECDSA curves. */
const EC_POINT_BYTES: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 };

const PRIVATE =
  /-----BEGIN (?:OPENSSH |RSA |EC |DSA |ENCRYPTED |SSH2 ENCRYPTED )?PRIVATE KEY-----|PuTTY-User-Key-File-/;
/** C0 and C1 controls but tab and line breaks (those have their own message), and invisible format characters (bidi overrides, zero-width). */
const CONTROL = /(?!\t)[\p{Cc}\p{Cf}]/u;

function refuse(reason: string): never {
  throw AppError.fields({ public_key: reason });
}

/** Why a known key type is not accepted, or null when it is. */
function unsupported(type: string): string | null {
  if ((SUPPORTED as readonly string[]).includes(type)) return null;
  if (type === 'ssh-dss')
    return 'DSA keys (ssh-dss) are not accepted: OpenSSH no longer supports them; use ssh-ed25519';
  if (type.endsWith('-cert-v01@openssh.com')) return 'SSH certificates are not accepted; paste the plain public key';
  if (type.startsWith('sk-')) {
    return 'security-key (FIDO) keys are not accepted: many server images cannot use them; use ssh-ed25519';
  }
  if (type.startsWith('ecdsa-sha2-')) return `the curve of '${type}' is not supported; use ${ACCEPTED}`;
  return `'${type}' is not a supported key type; use ${ACCEPTED}`;
}

const KNOWN_TYPE = /^(ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-[a-z0-9]+|sk-[a-z0-9@.-]+|[a-z0-9-]+-cert-v01@openssh\.com)$/;

/** The SSH wire format (RFC 4251 §5): a run of uint32-length-prefixed strings; null when it does not add up. */
function wireStrings(blob: Buffer): Buffer[] | null {
  const out: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return null;
    const length = blob.readUInt32BE(at);
    at += 4;
    if (length > blob.length - at) return null;
    out.push(blob.subarray(at, at + length));
    at += length;
  }
  return out;
}

/** The parts each type has after its name, and their checks; a reason when they are wrong. */
function shapeProblem(type: SshKeyType, parts: Buffer[]): string | null {
  const damaged = 'the key data is truncated or damaged';
  if (type === 'ssh-ed25519') return parts.length === 2 && parts[1]?.length === 32 ? null : damaged;
  if (type === 'ssh-rsa') return parts.length === 3 && (parts[2]?.length ?? 0) > 0 ? null : damaged;
  const curve = type.slice('ecdsa-sha2-'.length);
  if (parts.length !== 3) return damaged;
  if (parts[1]?.toString('latin1') !== curve) return `the key data names another curve than ${type}`;
  const point = parts[2];
  return point !== undefined && point.length === EC_POINT_BYTES[curve] && point[0] === 0x04 ? null : damaged;
}

/** Split a line into type, base64 data and comment, refusing what is not one plain OpenSSH key. */
function fields(line: string): { type: string; data: string; comment: string | null } {
  const words = line.split(/[ \t]+/);
  const first = words[0] ?? '';
  // `no-pty,from="…" ssh-ed25519 AAAA…`: an authorized_keys line with options.
  if (!KNOWN_TYPE.test(first) && words.slice(1).some((word) => KNOWN_TYPE.test(word))) {
    refuse('the line starts with authorized_keys options; paste only the key (type, data, comment)');
  }
  const match = /^(\S+)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
  if (!match || !/^[a-z0-9][a-z0-9@._-]*$/i.test(first)) {
    if (!match && KNOWN_TYPE.test(first)) refuse(`the key data after '${first}' is missing`);
    refuse("not an OpenSSH public key: expected one line such as 'ssh-ed25519 AAAAC3Nza… you@laptop'");
  }
  const [, type = '', data = '', rest] = match;
  // Every key blob starts with a 4-byte length below 2^24, in base64 `AAAA`: else this is prose.
  if (!KNOWN_TYPE.test(type) && !data.startsWith('AAAA')) {
    refuse("not an OpenSSH public key: expected one line such as 'ssh-ed25519 AAAAC3Nza… you@laptop'");
  }
  const comment = (rest ?? '').trim().replace(/[ \t]+/g, ' ');
  return { type, data, comment: comment === '' ? null : comment };
}

/** Parse and check an OpenSSH public key; throws `validation_failed` on the field `public_key`. */
export function parsePublicKey(text: string): PublicKey {
  if (typeof text !== 'string') refuse('must be text');
  if (Buffer.byteLength(text, 'utf8') > MAX_KEY_TEXT_BYTES) refuse('is too long (16 KiB at most)');
  // trim() also drops a byte-order mark and the line break a .pub file ends with.
  const line = text.trim();
  if (line === '') refuse('is empty');
  if (PRIVATE.test(line)) {
    refuse(
      'this is a PRIVATE key: never share it; paste the public key instead (the .pub file, e.g. ~/.ssh/id_ed25519.pub)',
    );
  }
  if (/---- BEGIN SSH2 PUBLIC KEY ----/.test(line)) {
    refuse('this is an RFC 4716 (SSH2) key; convert it with `ssh-keygen -i -f key.pub` and paste that line');
  }
  if (/-----BEGIN [A-Z0-9 ]+-----/.test(line)) {
    refuse('this is a PEM file, not an OpenSSH public key; convert it with `ssh-keygen -i -m PKCS8 -f key.pem`');
  }
  if (/[\r\n]/.test(line)) refuse('must be a single line holding one key');
  if (CONTROL.test(line)) refuse('contains control or invisible formatting characters');

  const { type, data, comment } = fields(line);
  const notAccepted = unsupported(type);
  if (notAccepted) refuse(notAccepted);
  const keyType = type as SshKeyType;

  const blob = Buffer.from(data, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0 || blob.toString('base64') !== data) {
    refuse('the key data is not valid base64 (was the line cut or changed?)');
  }
  const parts = wireStrings(blob);
  if (!parts || parts.length === 0) refuse('the key data is truncated or damaged');
  const embedded = parts[0]?.toString('latin1') ?? '';
  if (embedded !== type) {
    refuse(
      /^[\x21-\x7e]{1,64}$/.test(embedded)
        ? `the key data is a ${embedded} key but the line says ${type}`
        : 'the key data does not start with a key type: it is damaged',
    );
  }
  const shape = shapeProblem(keyType, parts);
  if (shape) refuse(shape);

  let key: sshpk.Key;
  try {
    key = sshpkLib().parseKey(blob, 'rfc4253');
  } catch {
    refuse('the key data is truncated or damaged');
  }
  if (key instanceof sshpkLib().PrivateKey) {
    refuse('this is a PRIVATE key: never share it; paste the public key instead (the .pub file)');
  }
  // OpenSSH refuses numbers with needless leading zeros or a sign bit; sshpk would quietly fix them.
  if (!key.toBuffer('rfc4253').equals(blob)) refuse('the key data is not in the canonical form OpenSSH accepts');
  const bits = key.size;
  if (keyType === 'ssh-rsa' && bits < MIN_RSA_BITS) {
    refuse(`RSA keys must have ${MIN_RSA_BITS} bits at least; this one has ${bits}`);
  }
  if (keyType === 'ssh-rsa' && bits > MAX_RSA_BITS) {
    refuse(`RSA keys may have ${MAX_RSA_BITS} bits at most; this one has ${bits}`);
  }
  try {
    createPublicKey(key.toString('pkcs8'));
  } catch {
    refuse('the key data is not a valid key (e.g. a point that is not on its curve)');
  }

  const fingerprint = key.fingerprint('sha256').toString('base64');
  // The same digest straight from the bytes given: the stored fingerprint identifies exactly them.
  const direct = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  if (fingerprint !== direct) refuse('the key data is not in the canonical form OpenSSH accepts');
  return {
    type: keyType,
    bits,
    fingerprint,
    comment,
    normalized: `${type} ${data}${comment === null ? '' : ` ${comment}`}`,
  };
}

/** The parsed key, or why `text` is not one we accept (for lists of keys, which name the entry). */
export function tryParsePublicKey(text: unknown): PublicKey | { problem: string } {
  try {
    return parsePublicKey(text as string);
  } catch (error) {
    if (error instanceof AppError && error.fields?.public_key) return { problem: error.fields.public_key };
    throw error;
  }
}
