// Small pure helpers of the wallet page: reading an amount the way the API does (rupees, at most
// two decimals, > 0, at most ₹1,00,000.00), the checks the server makes on a deposit before the
// upload is sent, and the UPI payment link.

/** The most one deposit may be (submitDeposit: "at most 100000.00"). */
export const MAX_DEPOSIT = 100_000;
/** The screenshot limit (submitDeposit: "at most 5 MiB"). */
export const MAX_PROOF_BYTES = 5 * 1024 * 1024;
/** What the server accepts by content; the browser's declared type is checked here first. */
export const PROOF_TYPES: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/webp': 'WebP',
  'application/pdf': 'PDF',
};
/** The reference rule of the server (deposit.service.ts TXN_REF). */
export const TXN_REF = /^[A-Za-z0-9][A-Za-z0-9._/-]{3,63}$/;

/** "499", "499.5", "₹1,299.00" → "499.00" / "499.50" / "1299.00"; anything else → null. */
export function normaliseAmount(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const cleaned = raw.replace(/[₹,\s]/g, '');
  if (!/^\d{1,6}(\.\d{1,2})?$/.test(cleaned)) return null;
  const value = Number(cleaned);
  if (!Number.isFinite(value) || value <= 0 || value > MAX_DEPOSIT) return null;
  return value.toFixed(2);
}

/** The local reason an amount would be refused, worded like the server's; null when it is fine. */
export function amountProblem(raw: string): string | null {
  const cleaned = raw.replace(/[₹,\s]/g, '');
  if (cleaned === '') return 'Enter the amount you paid.';
  if (!/^\d+(\.\d+)?$/.test(cleaned)) return 'Enter the amount in rupees, for example 500 or 499.50.';
  if (!/^\d+(\.\d{1,2})?$/.test(cleaned)) return 'Use at most two decimals (paise).';
  const value = Number(cleaned);
  if (value <= 0) return 'The amount must be more than zero.';
  if (value > MAX_DEPOSIT) return 'One deposit can be at most ₹1,00,000.00. Split a larger payment.';
  return null;
}

export function txnRefProblem(raw: string): string | null {
  const value = raw.trim();
  if (value === '') return 'Enter the UTR or transaction reference from your payment app or bank.';
  if (!TXN_REF.test(value))
    return 'Use the 4–64 letters and digits of the reference as your app or bank shows it (., _, / and - are allowed).';
  return null;
}

export function proofProblem(file: File | null): string | null {
  if (!file) return 'Attach a screenshot or PDF of the payment.';
  if (!(file.type in PROOF_TYPES)) return 'The proof must be a PNG, JPEG or WebP image, or a PDF.';
  if (file.size > MAX_PROOF_BYTES) return 'The file is larger than 5 MiB. Crop the screenshot or save it as JPEG.';
  if (file.size === 0) return 'The file is empty.';
  return null;
}

/**
 * What the first bytes of a file are (the server decides by content, not by name): "PNG",
 * "JPEG", "WebP", "PDF", or null for anything else.
 */
export async function sniffProof(file: File): Promise<string | null> {
  const head = new Uint8Array(await file.slice(0, 16).arrayBuffer());
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if (head.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => head[i] === b)) return 'PNG';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'JPEG';
  if (head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'WebP';
  if (head.length >= 5 && ascii(0, 5) === '%PDF-') return 'PDF';
  return null;
}

/** UPI payment details of the operator, when the API gives them. */
export interface UpiDetails {
  vpa: string;
  payeeName: string;
}

const VPA = /^[A-Za-z0-9._-]{2,256}@[A-Za-z][A-Za-z0-9.-]{1,63}$/;

/**
 * The operator's UPI details from the wallet answer. The API does not carry them yet; the shape
 * read here is the one the report asks for (`wallet.upi: {vpa, payee_name} | null`), so the QR
 * code appears as soon as the server sends it, and never from anything that is not a VPA.
 */
export function upiDetailsOf(answer: unknown): UpiDetails | null {
  const wallet = (answer as { wallet?: { upi?: unknown } } | null)?.wallet;
  const upi = wallet?.upi as { vpa?: unknown; payee_name?: unknown } | null | undefined;
  if (!upi || typeof upi.vpa !== 'string' || !VPA.test(upi.vpa)) return null;
  const payeeName = typeof upi.payee_name === 'string' && upi.payee_name.trim() ? upi.payee_name.trim() : upi.vpa;
  return { vpa: upi.vpa, payeeName };
}

/** upi://pay?pa=…&pn=…&am=…&cu=INR&tn=… (NPCI's linking specification). */
export function upiUri(details: UpiDetails, amount: string | null, note: string): string {
  // Percent-encoded values (spaces as %20, not "+"), with the VPA's "@" left as it is: some UPI
  // apps do not decode "%40" in pa.
  const encode = (value: string) => encodeURIComponent(value).replace(/%40/g, '@');
  const params: [string, string][] = [
    ['pa', details.vpa],
    ['pn', details.payeeName],
    ...(amount ? ([['am', amount]] as [string, string][]) : []),
    ['cu', 'INR'],
    ['tn', note.slice(0, 50)],
  ];
  return `upi://pay?${params.map(([key, value]) => `${key}=${encode(value)}`).join('&')}`;
}

/**
 * Where "back" goes after a deposit: only the panel's own order and service pages (the order
 * page's "top up ₹N", a service's renewal), with the words for the link; anything else is null.
 */
export function safeReturn(raw: string | null): { to: string; label: string } | null {
  if (!raw) return null;
  const match = /^\/(order|services)(\/[A-Za-z0-9._~-]*)*\/?(\?[A-Za-z0-9._~%&=+-]*)?$/.exec(raw);
  if (!match) return null;
  const path = raw.split('?')[0] ?? '';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return null;
  if (match[1] === 'services') {
    return path === '/services' || path === '/services/'
      ? { to: raw, label: 'Back to your services' }
      : { to: raw, label: 'Back to your service' };
  }
  return { to: raw, label: 'Back to your order' };
}

/**
 * The gateway's words for a failed payment, for the customer: the deposit's reason is
 * "Razorpay: <description> (<reason code>)" (written for staff too); the description alone,
 * without its closing full stop, or null when there is none.
 */
export function gatewayWords(reason: string | null | undefined): string | null {
  if (!reason) return null;
  const words = reason
    .replace(/^Razorpay:\s*/, '')
    .replace(/\s*\([a-z0-9_]+\)$/, '')
    .replace(/[.\s]+$/, '');
  return words === '' || words === 'the payment failed' ? null : words;
}
