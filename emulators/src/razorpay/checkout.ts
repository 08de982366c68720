// The customer's side: a checkout page per order (`GET /checkout/{order_id}?callback=URL`, or
// Hosted Checkout's form POSTed to `/v1/checkout/embedded`; plain HTML, nothing fetched from
// elsewhere) with Pay, Fail and Cancel, standing in for Razorpay's Checkout. Its answer goes back to the merchant's callback as Razorpay's `callback_url` does: a
// POSTed form with razorpay_payment_id, razorpay_order_id and razorpay_signature on success, or
// error[code], error[description], error[source], error[step], error[reason], error[metadata] on a
// failure or cancel (`callbackMethod: 'get'` redirects with the same fields in the query instead).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CheckoutFailure, cancel, type FlowCtx, fail, pay } from './flows.ts';
import { RazorpayError, readText, sendHtml } from './http.ts';
import type { PaymentMethod } from './state.ts';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const rupees = (paise: number): string => `₹${(paise / 100).toFixed(2)}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1b2733}
h1{font-size:1.2rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}dt{color:#607080}
button{font-size:1rem;padding:.5rem 1.2rem;margin:.3rem .3rem 0 0;border-radius:.3rem;border:1px solid #8897a6;cursor:pointer}
button[value=pay]{background:#2b6cb0;color:#fff;border-color:#2b6cb0}.note{color:#607080;font-size:.85rem}</style>
</head><body>${body}</body></html>`;
}

/** A callback the page may send the customer to: an absolute http(s) URL. */
function callbackOf(raw: string | null): string | null {
  if (!raw) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function errorFields(error: CheckoutFailure): Record<string, string> {
  return {
    'error[code]': error.code,
    'error[description]': error.description,
    'error[source]': error.source,
    'error[step]': error.step,
    'error[reason]': error.reason,
    'error[metadata]': JSON.stringify(error.metadata),
  };
}

export type CallbackMethod = 'post' | 'get';

/** Send the customer back: a self-submitting POST form (with a button when scripts are off), or a 303. */
function handBack(res: ServerResponse, callback: string | null, fields: Record<string, string>, how: CallbackMethod) {
  if (callback && how === 'get') {
    const url = new URL(callback);
    for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
    res.writeHead(303, { location: url.href, 'content-length': 0 });
    return void res.end();
  }
  const inputs = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  if (!callback) {
    const rows = Object.entries(fields)
      .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
      .join('');
    return sendHtml(res, 200, page('Payment result', `<h1>Payment result</h1><dl>${rows}</dl>`));
  }
  sendHtml(
    res,
    200,
    page(
      'Returning to the merchant',
      `<form method="post" action="${escapeHtml(callback)}">${inputs}<p>Returning to the merchant…</p>
<noscript><button type="submit">Continue</button></noscript></form><script>document.forms[0].submit()</script>`,
    ),
  );
}

export function checkoutPage(ctx: FlowCtx, res: ServerResponse, orderId: string, query: URLSearchParams): void {
  const callback = callbackOf(query.get('callback'));
  if (query.get('callback') && !callback) {
    return void sendHtml(res, 400, page('Bad callback', '<h1>The callback must be an http(s) URL</h1>'));
  }
  renderCheckout(ctx, res, orderId, callback, null);
}

/**
 * Hosted Checkout: the merchant's page POSTs a form (key_id, order_id, callback_url, cancel_url,
 * name, prefill[…], …) to `/v1/checkout/embedded`, which shows the same page; Cancel then sends the
 * customer to cancel_url (GET) when there is one.
 */
export async function embeddedCheckout(
  ctx: FlowCtx,
  req: IncomingMessage,
  res: ServerResponse,
  keyId: string,
): Promise<void> {
  if (req.method !== 'POST') return sendHtml(res, 405, page('Not allowed', '<h1>Hosted checkout is a POST</h1>'));
  const form = new URLSearchParams(await readText(req));
  if (form.get('key_id') !== keyId) {
    return sendHtml(res, 401, page('Unknown key', '<h1>The key_id is not this account&#39;s</h1>'));
  }
  const orderId = form.get('order_id') ?? '';
  const callback = callbackOf(form.get('callback_url'));
  const cancelUrl = callbackOf(form.get('cancel_url'));
  if (!callback || (form.get('cancel_url') && !cancelUrl)) {
    return sendHtml(res, 400, page('Bad callback', '<h1>callback_url and cancel_url must be http(s) URLs</h1>'));
  }
  const amount = form.get('amount');
  const order = ctx.state.orders.get(orderId);
  if (order && amount !== null && Number(amount) !== order.amount_due) {
    return sendHtml(res, 400, page('Wrong amount', '<h1>The amount is not the order&#39;s</h1>'));
  }
  renderCheckout(ctx, res, orderId, callback, cancelUrl);
}

function renderCheckout(
  ctx: FlowCtx,
  res: ServerResponse,
  orderId: string,
  callback: string | null,
  cancelUrl: string | null,
): void {
  const order = ctx.state.orders.get(orderId);
  if (!order) return void sendHtml(res, 404, page('No such order', '<h1>No such order</h1>'));
  if (order.status === 'paid') {
    return void sendHtml(res, 409, page('Already paid', `<h1>Order ${escapeHtml(order.id)} is already paid</h1>`));
  }
  sendHtml(
    res,
    200,
    page(
      `Pay ${rupees(order.amount_due)}`,
      `<h1>Razorpay Checkout (emulated)</h1>
<dl><dt>Order</dt><dd>${escapeHtml(order.id)}</dd><dt>Amount</dt><dd>${rupees(order.amount_due)}</dd>
<dt>Receipt</dt><dd>${escapeHtml(order.receipt ?? '—')}</dd></dl>
<form method="post" action="/checkout/${escapeHtml(order.id)}">
<input type="hidden" name="callback" value="${escapeHtml(callback ?? '')}">
<input type="hidden" name="cancel_url" value="${escapeHtml(cancelUrl ?? '')}">
<p><label><input type="radio" name="method" value="upi" checked> UPI</label>
<label><input type="radio" name="method" value="card"> Card</label></p>
<button name="action" value="pay">Pay</button><button name="action" value="fail">Fail</button><button name="action" value="cancel">Cancel</button>
</form><p class="note">Pay succeeds, Fail is declined by the bank, Cancel closes checkout.</p>`,
    ),
  );
}

/** The page's buttons: run the flow, then hand the customer back to the callback. */
export async function checkoutAction(
  ctx: FlowCtx,
  req: IncomingMessage,
  res: ServerResponse,
  orderId: string,
  how: CallbackMethod,
): Promise<void> {
  const form = new URLSearchParams(await readText(req));
  if (!ctx.state.orders.has(orderId)) return sendHtml(res, 404, page('No such order', '<h1>No such order</h1>'));
  const callback = callbackOf(form.get('callback'));
  const method: PaymentMethod = form.get('method') === 'card' ? 'card' : 'upi';
  try {
    const action = form.get('action');
    if (action === 'pay') {
      const done = pay(ctx, orderId, method);
      return handBack(
        res,
        callback,
        {
          razorpay_payment_id: done.razorpay_payment_id,
          razorpay_order_id: done.razorpay_order_id,
          razorpay_signature: done.razorpay_signature,
        },
        how,
      );
    }
    if (action === 'fail') return handBack(res, callback, errorFields(fail(ctx, orderId, { method }).error), how);
    if (action === 'cancel') {
      const cancelled = cancel(ctx, orderId);
      const cancelUrl = callbackOf(form.get('cancel_url'));
      if (cancelUrl) {
        res.writeHead(303, { location: cancelUrl, 'content-length': 0 });
        return void res.end();
      }
      return handBack(res, callback, errorFields(cancelled.error), how);
    }
    sendHtml(res, 400, page('Unknown action', '<h1>Unknown action</h1>'));
  } catch (error) {
    if (!(error instanceof RazorpayError)) throw error;
    sendHtml(res, error.status === 400 ? 409 : error.status, page('Refused', `<h1>${escapeHtml(error.message)}</h1>`));
  }
}
