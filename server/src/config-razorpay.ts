// RAZORPAY_* (issue 35, CONTRACT §12): the merchant account online deposits are paid through.
// All three secrets-or-ids together or none; the secrets are never echoed in a problem.

export interface RazorpaySettings {
  keyId: string;
  keySecret: string;
  webhookSecret: string;
  apiUrl: string;
}

export const RAZORPAY_VARIABLES = [
  {
    name: 'RAZORPAY_KEY_ID',
    description: 'Razorpay API key id (rzp_live_… / rzp_test_…) for online deposits',
    default: 'unset (no online payments; demo mode: the Razorpay emulator)',
  },
  { name: 'RAZORPAY_KEY_SECRET', description: 'the secret of RAZORPAY_KEY_ID', default: 'unset' },
  {
    name: 'RAZORPAY_WEBHOOK_SECRET',
    description: 'the secret Razorpay signs webhooks to $PUBLIC_URL/api/v1/webhooks/razorpay with',
    default: 'unset',
  },
  { name: 'RAZORPAY_API_URL', description: 'the Razorpay API base URL', default: 'https://api.razorpay.com' },
] as const;

interface Reader {
  get(name: string): string | undefined;
  fail(name: string, value: string, why: string): void;
  problem(text: string): void;
}

export function readRazorpay(r: Reader): { razorpay: RazorpaySettings | null } {
  const keyId = r.get('RAZORPAY_KEY_ID');
  const keySecret = r.get('RAZORPAY_KEY_SECRET');
  const webhookSecret = r.get('RAZORPAY_WEBHOOK_SECRET');
  const apiUrl = (r.get('RAZORPAY_API_URL') ?? 'https://api.razorpay.com').replace(/\/+$/, '');
  try {
    const url = new URL(apiUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') r.fail('RAZORPAY_API_URL', apiUrl, 'must be http(s)://');
    if (url.username || url.password) r.fail('RAZORPAY_API_URL', '<hidden>', 'must not carry credentials');
  } catch {
    r.fail('RAZORPAY_API_URL', apiUrl, 'not a URL');
  }
  const given = [keyId, keySecret, webhookSecret].filter((v) => v !== undefined).length;
  if (given === 0) return { razorpay: null };
  if (given < 3) {
    r.problem('RAZORPAY_KEY_ID, RAZORPAY_KEY_SECRET and RAZORPAY_WEBHOOK_SECRET are set together or not at all');
    return { razorpay: null };
  }
  if (!/^rzp_(live|test)_[A-Za-z0-9]{6,40}$/.test(keyId as string)) {
    r.fail('RAZORPAY_KEY_ID', keyId as string, 'not a Razorpay key id such as rzp_live_…');
  }
  return {
    razorpay: {
      keyId: keyId as string,
      keySecret: keySecret as string,
      webhookSecret: webhookSecret as string,
      apiUrl,
    },
  };
}
