// Money is integer paise (bigint) everywhere inside; it leaves as a decimal string with two
// places beside `"currency": "INR"` (CONTRACT §3). Inputs accept a number or a decimal string
// with at most two places; anything else is a field error, never a rounding.

export const CURRENCY = 'INR';

const DECIMAL = /^(0|[1-9]\d{0,11})(\.\d{1,2})?$/;

/** Parse a rupee amount into paise, or return why not. Negative, exponent and NaN forms are refused. */
export function parsePaise(input: unknown): { ok: true; paise: bigint } | { ok: false; reason: string } {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return { ok: false, reason: 'must be a finite amount' };
    text = String(input);
  } else if (typeof input === 'string') {
    text = input;
  } else {
    return { ok: false, reason: 'must be a number or a decimal string such as "499.00"' };
  }
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, reason: 'must be a positive amount in rupees with at most two decimal places' };
  const rupees = BigInt(match[1] as string);
  const fraction = (match[2] ?? '.').slice(1).padEnd(2, '0');
  return { ok: true, paise: rupees * 100n + BigInt(fraction) };
}

/** `49950n` → `"499.50"`; negative amounts keep their sign. */
export function formatPaise(paise: bigint | string | number): string {
  const value = BigInt(paise);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** `{amount, currency}` as the API shows money. */
export function money(paise: bigint | string | number): { amount: string; currency: string } {
  return { amount: formatPaise(paise), currency: CURRENCY };
}

/**
 * Rupees with Indian digit grouping, as an invoice prints them: the last three digits, then
 * pairs (lakh, crore): `12345678901n` → `"12,34,56,789.01"`, `79900n` → `"799.00"`.
 */
export function formatPaiseIndian(paise: bigint | string | number): string {
  const plain = formatPaise(paise);
  const negative = plain.startsWith('-');
  const [whole = '0', fraction = '00'] = (negative ? plain.slice(1) : plain).split('.');
  const head = whole.slice(0, -3);
  const grouped = head === '' ? whole : `${head.replace(/\B(?=(\d{2})+$)/g, ',')},${whole.slice(-3)}`;
  return `${negative ? '-' : ''}${grouped}.${fraction}`;
}
