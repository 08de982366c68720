// GST arithmetic and identifiers for tax invoices (issue 35, CONTRACT §12, reference gst.md):
// the state codes, GSTIN validation, the tax split of a price, the amount in words (Indian
// numbering), the financial year and the invoice number. Pure functions, no database: the
// invoice code and the billing profile both build on them, and tests can check every rule alone.
//
// Money is integer paise in bigint throughout, so no rounding ever happens by accident; where a
// division must round, it rounds half up (away from zero for the non-negative amounts accepted).

/** GST state codes (the first two GSTIN digits) and their names, as gst.md lists them. */
export const GST_STATES: Readonly<Record<string, string>> = Object.freeze({
  '01': 'Jammu and Kashmir',
  '02': 'Himachal Pradesh',
  '03': 'Punjab',
  '04': 'Chandigarh',
  '05': 'Uttarakhand',
  '06': 'Haryana',
  '07': 'Delhi',
  '08': 'Rajasthan',
  '09': 'Uttar Pradesh',
  '10': 'Bihar',
  '11': 'Sikkim',
  '12': 'Arunachal Pradesh',
  '13': 'Nagaland',
  '14': 'Manipur',
  '15': 'Mizoram',
  '16': 'Tripura',
  '17': 'Meghalaya',
  '18': 'Assam',
  '19': 'West Bengal',
  '20': 'Jharkhand',
  '21': 'Odisha',
  '22': 'Chhattisgarh',
  '23': 'Madhya Pradesh',
  '24': 'Gujarat',
  '26': 'Dadra and Nagar Haveli and Daman and Diu',
  '27': 'Maharashtra',
  '29': 'Karnataka',
  '30': 'Goa',
  '31': 'Lakshadweep',
  '32': 'Kerala',
  '33': 'Tamil Nadu',
  '34': 'Puducherry',
  '35': 'Andaman and Nicobar Islands',
  '36': 'Telangana',
  '37': 'Andhra Pradesh',
  '38': 'Ladakh',
  '97': 'Other Territory',
});

/** Every state code, in order. */
export const GST_STATE_CODES: readonly string[] = Object.freeze(Object.keys(GST_STATES).sort());

export function isStateCode(code: unknown): code is string {
  return typeof code === 'string' && Object.hasOwn(GST_STATES, code);
}

/** The state's name, or null for a code that is not on the list. */
export function stateName(code: string): string | null {
  return isStateCode(code) ? (GST_STATES[code] as string) : null;
}

// --- GSTIN ---

const GSTIN_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** State code, PAN (5 letters, 4 digits, a letter), entity number, `Z`, check character. */
const GSTIN_SHAPE = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/;

/** The check character of the first 14 characters of a GSTIN (gst.md: weights 1, 2, 1, 2, … mod 36). */
export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    const value = GSTIN_ALPHABET.indexOf(first14[i] ?? '');
    if (value < 0) throw new RangeError('a GSTIN has only digits and capital letters');
    const product = value * (i % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return GSTIN_ALPHABET[(36 - (sum % 36)) % 36] as string;
}

/** What a person types, as a GSTIN is stored and checked: spaces trimmed, letters in capitals. */
export function normalizeGstin(raw: string): string {
  return raw.trim().toUpperCase();
}

/**
 * Why `gstin` is not a valid GSTIN (of `stateCode` when given), in words; null when it is.
 * Strict: lower-case letters are refused here, so callers that accept what a person types
 * normalise first (normalizeGstin), and what is stored is always the canonical upper-case form.
 */
export function validateGstin(gstin: string, stateCode?: string): string | null {
  if (gstin.length !== 15) return 'must be 15 characters';
  if (/[a-z]/.test(gstin)) return 'must be in capital letters';
  if (!GSTIN_SHAPE.test(gstin)) {
    return 'must be a 2-digit state code, a 10-character PAN, an entity number, Z and a check character';
  }
  const prefix = gstin.slice(0, 2);
  if (!isStateCode(prefix)) return `starts with ${prefix}, which is not a GST state code`;
  if (stateCode !== undefined && prefix !== stateCode) {
    return `starts with state code ${prefix}, but the state is ${stateCode}`;
  }
  if (gstinCheckCharacter(gstin.slice(0, 14)) !== gstin[14]) return 'has a wrong check character (a typing mistake?)';
  return null;
}

// --- tax split ---

/** 18 %, in basis points: the rate of SAC 998315 (hosting). */
export const GST_RATE_BPS = 1800;
const BPS = 10_000n;

/** a ÷ b rounded half up, for a ≥ 0 and b > 0. */
function divideHalfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

function toPaise(amount: bigint | number, what: string): bigint {
  if (typeof amount === 'number' && !Number.isSafeInteger(amount)) throw new RangeError(`${what} must be whole paise`);
  const paise = BigInt(amount);
  if (paise < 0n) throw new RangeError(`${what} must not be negative`);
  return paise;
}

/**
 * Where a service is supplied (IGST Act s.12(2), gst.md): the customer's state when known (a
 * registered customer's is their GSTIN's, which the billing profile keeps equal to its state),
 * else the seller's.
 */
export function placeOfSupply(customerState: string | null, sellerState: string): string {
  return customerState ?? sellerState;
}

export interface TaxSplitInput {
  /** The price in paise: with GST when pricesIncludeGst, before GST otherwise. */
  amountPaise: bigint | number;
  pricesIncludeGst: boolean;
  sellerState: string;
  placeOfSupply: string;
  rateBps?: number;
}

export interface TaxSplit {
  taxablePaise: bigint;
  cgstPaise: bigint;
  sgstPaise: bigint;
  igstPaise: bigint;
  totalPaise: bigint;
  rateBps: number;
  /** CGST + SGST (the place of supply is the seller's state) rather than IGST. */
  intraState: boolean;
}

/**
 * The tax heads of one price. Inclusive: taxable = price × 10000 ÷ (10000 + rate), rounded half
 * up, and the tax is what is left, so the total is the price exactly. Exclusive: tax = amount ×
 * rate ÷ 10000, rounded half up, added to the amount. Within the state the tax is halved into
 * CGST and SGST; an odd paisa goes to SGST (CGST = floor(tax ÷ 2)). Always: taxable + cgst + sgst
 * + igst = total, and the tax is within a paisa of the rate applied to the taxable value.
 */
export function taxSplit(input: TaxSplitInput): TaxSplit {
  const rateBps = input.rateBps ?? GST_RATE_BPS;
  if (!Number.isSafeInteger(rateBps) || rateBps < 0) throw new RangeError('rateBps must be a whole number ≥ 0');
  const rate = BigInt(rateBps);
  const amount = toPaise(input.amountPaise, 'amountPaise');
  let taxable: bigint;
  let total: bigint;
  if (input.pricesIncludeGst) {
    total = amount;
    taxable = divideHalfUp(amount * BPS, BPS + rate);
  } else {
    taxable = amount;
    total = amount + divideHalfUp(amount * rate, BPS);
  }
  const tax = total - taxable;
  const intraState = input.placeOfSupply === input.sellerState;
  const cgst = intraState ? tax / 2n : 0n;
  return {
    taxablePaise: taxable,
    cgstPaise: cgst,
    sgstPaise: intraState ? tax - cgst : 0n,
    igstPaise: intraState ? 0n : tax,
    totalPaise: total,
    rateBps,
    intraState,
  };
}

// --- amount in words ---

const ONES = [
  'Zero',
  'One',
  'Two',
  'Three',
  'Four',
  'Five',
  'Six',
  'Seven',
  'Eight',
  'Nine',
  'Ten',
  'Eleven',
  'Twelve',
  'Thirteen',
  'Fourteen',
  'Fifteen',
  'Sixteen',
  'Seventeen',
  'Eighteen',
  'Nineteen',
];
const TENS = ['', '', 'Twenty', 'Thirty', 'Forty', 'Fifty', 'Sixty', 'Seventy', 'Eighty', 'Ninety'];

/** 1–99: "Seven", "Nineteen", "Forty", "Thirty-Four". */
function belowHundred(n: number): string {
  if (n < 20) return ONES[n] as string;
  const unit = n % 10;
  return `${TENS[Math.floor(n / 10)]}${unit === 0 ? '' : `-${ONES[unit]}`}`;
}

/** 1–999. */
function belowThousand(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const parts = hundreds > 0 ? [`${ONES[hundreds]} Hundred`] : [];
  if (rest > 0) parts.push(belowHundred(rest));
  return parts.join(' ');
}

/** A positive whole number in Indian numbering: crore, lakh, thousand, hundred (crores of crores recurse). */
function indianWords(n: bigint): string {
  const parts: string[] = [];
  const crores = n / 10_000_000n;
  if (crores > 0n) parts.push(`${indianWords(crores)} Crore`);
  let rest = Number(n % 10_000_000n);
  const lakhs = Math.floor(rest / 100_000);
  rest %= 100_000;
  const thousands = Math.floor(rest / 1000);
  rest %= 1000;
  if (lakhs > 0) parts.push(`${belowHundred(lakhs)} Lakh`);
  if (thousands > 0) parts.push(`${belowHundred(thousands)} Thousand`);
  if (rest > 0) parts.push(belowThousand(rest));
  return parts.join(' ');
}

/**
 * An amount as an invoice writes it: "Rupees Twelve Lakh Thirty-Four Thousand Five Hundred
 * Sixty-Seven and Eighty-Nine Paise Only". Title case; tens and units joined by a hyphen; no
 * "and" inside a number (only between rupees and paise); "Rupees Zero Only" for nothing,
 * "Rupees Five Hundred Only" for whole rupees, "Fifty Paise Only" under a rupee.
 */
export function amountInWords(paise: bigint | number): string {
  const amount = toPaise(paise, 'paise');
  const rupees = amount / 100n;
  const cents = Number(amount % 100n);
  if (rupees === 0n && cents === 0) return 'Rupees Zero Only';
  if (rupees === 0n) return `${belowHundred(cents)} Paise Only`;
  const whole = `Rupees ${indianWords(rupees)}`;
  return cents === 0 ? `${whole} Only` : `${whole} and ${belowHundred(cents)} Paise Only`;
}

// --- financial year and invoice numbers ---

/** India Standard Time, UTC+05:30 (no daylight saving): the clock an invoice date is read on. */
const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;

/**
 * The financial year (1 April – 31 March) of an instant, read in India Standard Time, as the
 * two-digit years it spans: '2627' for 2026-04-01 00:00 IST to 2027-03-31 23:59:59.999 IST.
 */
export function financialYear(date: Date): string {
  const ist = new Date(date.getTime() + IST_OFFSET_MS);
  if (Number.isNaN(ist.getTime())) throw new RangeError('financialYear needs a valid date');
  const year = ist.getUTCFullYear();
  const start = ist.getUTCMonth() >= 3 ? year : year - 1;
  const two = (y: number) => String(((y % 100) + 100) % 100).padStart(2, '0');
  return `${two(start)}${two(start + 1)}`;
}

/** Rule 46: at most 16 characters of capital letters, digits, `/` and `-`. */
const INVOICE_NUMBER = /^[A-Z0-9/-]{1,16}$/;

/**
 * `<prefix>/<fy>/<serial>`, the serial zero-padded to 6 digits: `HP/2627/000042`. Throws when the
 * result would break rule 46 (over 16 characters, or a character outside A–Z 0–9 / -): that is a
 * configuration mistake (INVOICE_PREFIX) or an exhausted series, never something to shorten quietly.
 */
export function invoiceNumber(prefix: string, fy: string, serial: number | bigint): string {
  if (!/^\d{4}$/.test(fy)) throw new RangeError(`financial year ${JSON.stringify(fy)} is not four digits`);
  const n = BigInt(serial);
  if (n < 1n) throw new RangeError('an invoice serial starts at 1');
  const number = `${prefix}/${fy}/${String(n).padStart(6, '0')}`;
  if (!INVOICE_NUMBER.test(number)) {
    throw new RangeError(
      `invoice number ${JSON.stringify(number)} breaks rule 46 (at most 16 characters of A-Z, 0-9, / and -)`,
    );
  }
  return number;
}

/** The calendar day of an instant in India Standard Time, `2026-06-15`: the date an invoice shows. */
export function istDay(date: Date): string {
  return new Date(date.getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/**
 * A month (`YYYY-MM`) as the instants it spans in India Standard Time: [from, to), from 00:00 IST
 * on the 1st to 00:00 IST on the 1st of the next month. Null for anything else.
 */
export function istMonth(month: string): { from: Date; to: Date } | null {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!match) return null;
  const year = Number(match[1]);
  const index = Number(match[2]) - 1;
  return {
    from: new Date(Date.UTC(year, index, 1) - IST_OFFSET_MS),
    to: new Date(Date.UTC(year, index + 1, 1) - IST_OFFSET_MS),
  };
}
