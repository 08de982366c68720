// Time-based one-time passwords (RFC 6238): HMAC-SHA-1, 30-second steps, 6 digits, the step
// before and after the current one accepted (a phone's clock may be off by a few seconds). The
// HOTP arithmetic is the `otpauth` package's; which steps are tried, and which are refused because
// a code of theirs (or a later one) was already accepted, is decided here. The RFC's own test
// vectors (8 digits) go through the same function, `matchTotp`.

import { HOTP, Secret, TOTP } from 'otpauth';
import { safeEqual } from '../crypto/secrets.ts';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of the current one that are still accepted. */
export const TOTP_WINDOW = 1;
/** What the authenticator app shows as the account's issuer. */
export const TOTP_ISSUER = 'Hostplane';

/** A new secret: 20 random bytes (RFC 4226's recommended length), as base32 for the app. */
export function newTotpSecret(): string {
  // otpauth draws the bytes from the platform's CSPRNG (crypto.getRandomValues).
  return new Secret({ size: 20 }).base32;
}

/** The 30-second step a moment falls in. */
export function totpStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/** The `otpauth://totp/…` URI an authenticator app reads (from the QR code or typed). */
export function otpauthUrl(secretBase32: string, label: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  }).toString();
}

/** The code of one step (what an authenticator app shows during that step). */
export function totpCodeAt(key: Uint8Array, step: number, digits = TOTP_DIGITS): string {
  return HOTP.generate({ secret: new Secret({ buffer: copyBuffer(key) }), algorithm: 'SHA1', digits, counter: step });
}

export interface TotpMatch {
  /** The step whose code it is: remembered, so it (and any earlier one) is never accepted again. */
  step: number;
}

/**
 * The step of `code` within the window around `at`, or null. Steps at or before `afterStep` (the
 * last one accepted) are not tried: a code is accepted once, and never one older than the last.
 * Every step of the window is compared, in constant time, whether or not an earlier one matched.
 */
export function matchTotp(
  key: Uint8Array,
  code: string,
  at: Date,
  options: { digits?: number; window?: number; afterStep?: number | null } = {},
): TotpMatch | null {
  const digits = options.digits ?? TOTP_DIGITS;
  const window = options.window ?? TOTP_WINDOW;
  if (code.length !== digits || !/^\d+$/.test(code)) return null;
  const current = totpStep(at);
  let found: number | null = null;
  for (let step = current - window; step <= current + window; step++) {
    const same = safeEqual(totpCodeAt(key, step, digits), code);
    const fresh = options.afterStep === null || options.afterStep === undefined || step > options.afterStep;
    if (same && fresh && found === null) found = step;
  }
  return found === null ? null : { step: found };
}

/** The key bytes of a base32 secret. */
export function totpKey(secretBase32: string): Uint8Array {
  return new Uint8Array(Secret.fromBase32(secretBase32).bytes);
}

function copyBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}
