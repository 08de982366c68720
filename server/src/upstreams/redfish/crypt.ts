// SHA-512 crypt (`$6$salt$hash`, Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512"), the
// password hash installers and cloud-init take (`passwd:` of a user, kickstart `rootpw --iscrypted`,
// preseed `root-password-crypted`), so the root password goes to the BMC and the image hashed,
// never in clear. Written from the specification with node:crypto's SHA-512; checked against
// the specification's test vectors and `openssl passwd -6` in the tests.

import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const DEFAULT_ROUNDS = 5000;
const MIN_ROUNDS = 1000;
const MAX_ROUNDS = 999_999_999;
const MAX_SALT = 16;

const sha512 = (...parts: Buffer[]): Buffer => {
  const hash = createHash('sha512');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** `length` bytes of `digest` repeated (the P and S sequences of the algorithm). */
function repeatTo(digest: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += digest.length) digest.copy(out, i, 0, Math.min(digest.length, length - i));
  return out;
}

/** Three bytes as four characters of crypt's base64 (least significant six bits first). */
function encode24(b2: number, b1: number, b0: number, chars: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let i = 0; i < chars; i++) {
    out += ALPHABET[w & 0x3f];
    w >>>= 6;
  }
  return out;
}

/** A random salt of 16 characters from crypt's alphabet. */
export function randomSalt(): string {
  return [...randomBytes(MAX_SALT)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

/**
 * `$6$[rounds=N$]salt$hash` of `password`. `setting` is a salt, or a whole `$6$…` hash whose
 * salt and rounds are reused (to check a password against it); a random salt when absent.
 */
export function sha512Crypt(password: string, setting?: string): string {
  let salt = setting ?? randomSalt();
  let rounds = DEFAULT_ROUNDS;
  let explicitRounds = false;
  if (salt.startsWith('$6$')) salt = salt.slice(3);
  const roundsMatch = /^rounds=(\d+)\$/.exec(salt);
  if (roundsMatch) {
    rounds = Math.min(MAX_ROUNDS, Math.max(MIN_ROUNDS, Number(roundsMatch[1])));
    explicitRounds = true;
    salt = salt.slice(roundsMatch[0].length);
  }
  salt = salt.split('$')[0]?.slice(0, MAX_SALT) ?? '';
  const p = Buffer.from(password, 'utf8');
  const s = Buffer.from(salt, 'utf8');

  const b = sha512(p, s, p);
  const a = createHash('sha512');
  a.update(p);
  a.update(s);
  a.update(repeatTo(b, p.length));
  for (let n = p.length; n > 0; n >>= 1) a.update(n & 1 ? b : p);
  const digestA = a.digest();

  const dp = createHash('sha512');
  for (let i = 0; i < p.length; i++) dp.update(p);
  const pSeq = repeatTo(dp.digest(), p.length);
  const ds = createHash('sha512');
  for (let i = 0; i < 16 + (digestA[0] ?? 0); i++) ds.update(s);
  const sSeq = repeatTo(ds.digest(), s.length);

  let c = digestA;
  for (let i = 0; i < rounds; i++) {
    const h = createHash('sha512');
    h.update(i & 1 ? pSeq : c);
    if (i % 3 !== 0) h.update(sSeq);
    if (i % 7 !== 0) h.update(pSeq);
    h.update(i & 1 ? c : pSeq);
    c = h.digest();
  }

  let out = '';
  for (let i = 0; i < 21; i++) {
    const x = c[i] ?? 0;
    const y = c[i + 21] ?? 0;
    const z = c[i + 42] ?? 0;
    // The specification's byte order: the triple rotates with i.
    if (i % 3 === 0) out += encode24(x, y, z, 4);
    else if (i % 3 === 1) out += encode24(y, z, x, 4);
    else out += encode24(z, x, y, 4);
  }
  out += encode24(0, 0, c[63] ?? 0, 2);
  return `$6$${explicitRounds ? `rounds=${rounds}$` : ''}${salt}$${out}`;
}
