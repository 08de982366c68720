// Razorpay's two signatures (razorpay.com/docs: payment verification, webhook validation): what
// checkout hands back is hex HMAC-SHA256 of `order_id|payment_id` under the key secret; a webhook
// carries hex HMAC-SHA256 of its raw body under the webhook secret. Compared in constant time so
// a forger learns nothing from how long a refusal takes.

import { createHmac, timingSafeEqual } from 'node:crypto';

function hmacHex(secret: string, data: string | Buffer): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

/** Equal hex strings, in time independent of where they differ (a wrong length is simply false). */
function sameHex(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || !/^[0-9a-f]+$/i.test(given)) return false;
  const a = Buffer.from(expected, 'hex');
  const b = Buffer.from(given.toLowerCase(), 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function checkoutSignature(orderId: string, paymentId: string, keySecret: string): string {
  return hmacHex(keySecret, `${orderId}|${paymentId}`);
}

/** Whether checkout's `razorpay_signature` is the one Razorpay makes for this order and payment. */
export function verifyCheckoutSignature(orderId: string, paymentId: string, signature: unknown, keySecret: string) {
  return sameHex(checkoutSignature(orderId, paymentId, keySecret), signature);
}

/** Whether `X-Razorpay-Signature` signs exactly these bytes (the body as received, never re-serialised). */
export function verifyWebhookSignature(rawBody: Buffer | string, signature: unknown, webhookSecret: string) {
  return sameHex(hmacHex(webhookSecret, rawBody), signature);
}
