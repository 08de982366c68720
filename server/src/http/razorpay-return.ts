// Where Razorpay's Hosted Checkout sends the customer back (CONTRACT §12): it POSTs a form to
// the callback URL, PUBLIC_URL/wallet/razorpay-return, from the gateway's page. The panel is a
// page that only loads on GET, and the session cookie (SameSite=Lax) does not come with a
// cross-site POST; so this answers 303 to the same path with the fields the panel needs in the
// query, and the panel (signed in again by the cookie on that GET) sends `razorpay_verify`
// with its CSRF token. Nothing is done here and nothing is trusted: the signature is checked
// by the verify call. Only the known fields pass, each bounded.

import type { FastifyInstance } from 'fastify';
import { RAZORPAY_RETURN_PATH } from '../core/deposits/razorpay.ts';

/** Razorpay's ids and the signature: letters, digits and underscores. */
const ID = /^[A-Za-z0-9_]{1,128}$/;
const TEXT_MAX = 300;

function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  // Control characters are dropped; the panel shows the rest as text, never as markup.
  const clean = value.replace(/\p{Cc}/gu, ' ').trim();
  return clean === '' ? null : clean.slice(0, TEXT_MAX);
}

function orderOfMetadata(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > 2000) return null;
  try {
    const id = (JSON.parse(raw) as { order_id?: unknown }).order_id;
    return typeof id === 'string' && ID.test(id) ? id : null;
  } catch {
    return null;
  }
}

/** The query the panel's return page reads: the signed fields, or the error's words. */
export function returnQuery(form: Record<string, unknown>): URLSearchParams {
  const out = new URLSearchParams();
  const ids = ['razorpay_order_id', 'razorpay_payment_id', 'razorpay_signature'] as const;
  for (const name of ids) {
    const value = form[name];
    if (typeof value === 'string' && ID.test(value)) out.set(name, value);
  }
  const code = text(form['error[code]']);
  if (code !== null) {
    out.set('error_code', code);
    const description = text(form['error[description]']);
    const reason = text(form['error[reason]']);
    if (description !== null) out.set('error_description', description);
    if (reason !== null) out.set('error_reason', reason);
    const order = orderOfMetadata(form['error[metadata]']);
    if (order !== null && !out.has('razorpay_order_id')) out.set('razorpay_order_id', order);
  }
  return out;
}

export async function razorpayReturnRoutes(app: FastifyInstance): Promise<void> {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.post(RAZORPAY_RETURN_PATH, { schema: { hide: true } }, async (request, reply) => {
    const form = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const query = returnQuery(form).toString();
    return reply
      .code(303)
      .header('Location', query === '' ? RAZORPAY_RETURN_PATH : `${RAZORPAY_RETURN_PATH}?${query}`)
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'same-origin')
      .send();
  });
}
