// Public identifiers (CONTRACT §3): `order_<base32>` for orders, `pay_<base32>` for wallet
// transactions and deposits, `msg_<base32>` for webhook events (their `webhook-id`). 80 random
// bits in Crockford base32 (lower case, no i l o u).

import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type PublicIdPrefix = 'order' | 'pay' | 'msg';

export function publicId(prefix: PublicIdPrefix): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${out}`;
}

export const PUBLIC_ID = /^(order|pay)_[0-9abcdefghjkmnpqrstvwxyz]{16}$/;
