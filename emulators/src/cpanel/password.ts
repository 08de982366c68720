// Passwords as the emulated server treats them: a 0–100 strength score in the spirit of
// cPanel's (entropy over the character classes used, repeated and sequential characters
// count for little, dictionary words and very short passwords score 1), the texts cPanel
// answers for weak passwords, and salted hashes so the state file keeps no clear passwords.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Entropy (bits) at which a password scores 100. */
const FULL_MARKS_BITS = 70;

/** Words that make a password worthless on their own (a tiny stand-in for cracklib's dictionary). */
const COMMON = [
  'password',
  'passw0rd',
  'letmein',
  'welcome',
  'qwerty',
  'qwertyuiop',
  'admin',
  'administrator',
  'iloveyou',
  'monkey',
  'dragon',
  'master',
  'sunshine',
  'princess',
  'football',
  'baseball',
  'abc123',
  '123456',
  '12345678',
  '123456789',
  'secret',
  'changeme',
  'trustno1',
  'hostplane',
  'cpanel',
];

function classSize(password: string): number {
  let size = 0;
  if (/[0-9]/.test(password)) size += 10;
  if (/[a-z]/.test(password)) size += 26;
  if (/[A-Z]/.test(password)) size += 26;
  if (/[!$%&()*+,\-./:<=>?`{|}~@^_[\]\\]/.test(password)) size += 22;
  if (/["#';]/.test(password)) size += 4;
  if (/ /.test(password)) size += 1;
  // Anything else (non-ASCII) widens the alphabet a lot.
  if (/[^\x20-\x7e]/.test(password)) size += 100;
  return size;
}

/** cPanel-style strength, 0–100. */
export function passwordStrength(password: string): number {
  if (password.length === 0) return 0;
  if (password.length < 4) return 1;
  const lower = password.toLowerCase();
  if (COMMON.includes(lower)) return 1;
  // A dictionary word with a digit or two stuck on is still a dictionary word.
  const stripped = lower.replace(/^[0-9!@#$%]+|[0-9!@#$%]+$/g, '');
  if (stripped.length >= 4 && COMMON.includes(stripped)) return 1;
  const bitsPerChar = Math.log2(Math.max(2, classSize(password)));
  let fresh = 0;
  let pattern = 0;
  let last = -1;
  for (const ch of password) {
    const code = ch.codePointAt(0) ?? 0;
    // Same as, or next to, the previous character: a pattern worth one of three choices.
    if (last >= 0 && Math.abs(code - last) <= 1) pattern++;
    else fresh++;
    last = code;
  }
  let bits = fresh * bitsPerChar + pattern * Math.log2(3);
  // A common word inside a longer password counts as one character.
  for (const word of COMMON) {
    if (word.length >= 5 && lower.includes(word)) bits -= (word.length - 1) * bitsPerChar;
  }
  if (bits >= FULL_MARKS_BITS) return 100;
  return Math.max(1, Math.floor((100 * bits) / FULL_MARKS_BITS));
}

/** DB users (`Cpanel::Exception::PasswordIsTooWeak`). */
export function tooWeakText(required: number): string {
  return `The given password is too weak. Please enter a password with a strength rating of ${required} or higher.`;
}

/** Account passwords (createacct, passwd, Passwd::change_password) and mailboxes. */
export function tooWeakSorryText(required: number): string {
  return `Sorry, the password you selected cannot be used because it is too weak and would be too easy to guess. Please select a password with strength rating of ${required} or higher.`;
}

export interface PasswordHash {
  salt: string;
  hash: string;
}

export function hashPassword(password: string): PasswordHash {
  const salt = randomBytes(12).toString('base64');
  return { salt, hash: createHash('sha256').update(`${salt}:${password}`).digest('base64') };
}

export function verifyPassword(stored: PasswordHash | undefined, password: string): boolean {
  if (!stored) return false;
  const given = createHash('sha256').update(`${stored.salt}:${password}`).digest();
  const expected = Buffer.from(stored.hash, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const GENERATED = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!@%^*-_';

/** A strong random password (createacct without one). */
export function generatePassword(): string {
  for (;;) {
    const bytes = randomBytes(16);
    let out = '';
    for (const b of bytes) out += GENERATED[b % GENERATED.length];
    if (passwordStrength(out) === 100) return out;
  }
}
