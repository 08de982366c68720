// Razorpay on loopback, for the demo and the tests: the `/v1` Orders, Payments and Refunds API
// under HTTP Basic `key_id:key_secret` (./api.ts), a checkout page per order standing in for
// Razorpay Checkout (./checkout.ts), signed webhooks to a configured URL (./webhooks.ts), and the
// fault knobs (./faults.ts) for a slow or failing API and duplicated, reordered, late or lost
// webhooks. `/__emulator/faults|state|reset` need no key; neither does the checkout page (the
// customer's browser opens it). Facts of the API: ./README.md.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { checkAuth, route, routeKey } from './api.ts';
import { type CallbackMethod, checkoutAction, checkoutPage, embeddedCheckout } from './checkout.ts';
import { noFaults, parseFaults, type RazorpayFaultKnobs, takeCount, takeError, takeLoss } from './faults.ts';
import { cancel, type FailOptions, type FlowCtx, fail, pay, paymentSignature } from './flows.ts';
import { noRoute, parseBody, RazorpayError, readText, sendError, sendJson, serverError } from './http.ts';
import { newId, type PaymentMethod, RazorpayState } from './state.ts';
import { DEFAULT_EVENTS, type WebhookDelivery, type WebhookEvent, WebhookSender } from './webhooks.ts';

export type { RazorpayFaultKnobs } from './faults.ts';
export type { CheckoutFailure, CheckoutSuccess } from './flows.ts';
export { paymentSignature } from './flows.ts';
export type { Order, Payment, PaymentMethod, PaymentStatus, Refund } from './state.ts';
export { RazorpayState } from './state.ts';
export type { WebhookDelivery, WebhookEvent } from './webhooks.ts';
export { signBody as webhookSignature } from './webhooks.ts';

export interface RazorpayEmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** The API key pair (default a random `rzp_test_…` id and secret). */
  keyId?: string;
  keySecret?: string;
  /** Where webhooks go (default none: nothing is sent); change it later with setWebhook. */
  webhookUrl?: string | null;
  /** The webhook secret (default random). */
  webhookSecret?: string;
  /** The events the webhook is subscribed to (default payment.captured, payment.failed, order.paid, refund.processed). */
  webhookEvents?: WebhookEvent[];
  /** Retries of a webhook the receiver refuses or does not answer (default 3), the first after retryDelayMs (default 200, doubling). */
  webhookRetries?: number;
  webhookRetryDelayMs?: number;
  /** Capture payments as soon as they are authorized (default true, Razorpay's default); false: POST /capture. */
  autoCapture?: boolean;
  /** How checkout returns to the callback: a POSTed form as Razorpay does (default) or a 303 with the fields in the query. */
  callbackMethod?: CallbackMethod;
  /** The merchant account id the webhook events carry (default a random `acc_…`). */
  accountId?: string;
}

export interface RazorpayEmulator {
  url: string;
  port: number;
  keyId: string;
  keySecret: string;
  webhookSecret: string;
  accountId: string;
  /** Orders, payments and refunds as the account holds them. */
  state: RazorpayState;
  /** Every webhook event raised, in sending order, with its raw body, signature and fate. */
  webhooks: WebhookDelivery[];
  /** API calls by route key (`POST /v1/orders`, `GET /v1/payments/:`), counted as they arrive, before any knob. */
  calls: Map<string, number>;
  faults: RazorpayFaultKnobs;
  setFaults(change: Partial<RazorpayFaultKnobs>): Promise<void>;
  setWebhook(url: string | null, secret?: string): void;
  /** The page a customer pays the order on. */
  checkoutUrl(orderId: string, callback?: string): string;
  /** What the Pay button does: returns what checkout hands the callback (and the payment). */
  pay(orderId: string, options?: { method?: PaymentMethod }): ReturnType<typeof pay>;
  /** What the Fail button does. */
  fail(orderId: string, options?: FailOptions): ReturnType<typeof fail>;
  /** What the Cancel button does (nothing is created). */
  cancel(orderId: string): ReturnType<typeof cancel>;
  /** The signature checkout returns for this order and payment (for tests that forge or check one). */
  signature(orderId: string, paymentId: string): string;
  /** Resolves when every webhook raised so far has been delivered, dropped or given up on. */
  webhooksIdle(): Promise<void>;
  /** Clear knobs and counters; with `data`, every order, payment, refund and webhook record too. */
  reset(options?: { data?: boolean }): void;
  stop(): Promise<void>;
  /** The same as stop (the name other harnesses use). */
  close(): Promise<void>;
}

const random = (bytes: number): string => randomBytes(bytes).toString('base64url');

export async function startRazorpayEmulator(options: RazorpayEmulatorOptions = {}): Promise<RazorpayEmulator> {
  const keyId = options.keyId ?? `rzp_test_${random(10).replace(/[-_]/g, 'x').slice(0, 14)}`;
  const keySecret = options.keySecret ?? random(18);
  const faults = noFaults();
  const state = new RazorpayState();
  const webhooks = new WebhookSender(
    {
      url: options.webhookUrl ?? null,
      secret: options.webhookSecret ?? random(18),
      accountId: options.accountId ?? newId('acc'),
      events: new Set(options.webhookEvents ?? DEFAULT_EVENTS),
      retries: options.webhookRetries ?? 3,
      retryDelayMs: options.webhookRetryDelayMs ?? 200,
    },
    faults,
  );
  const ctx: FlowCtx = { state, keySecret, autoCapture: options.autoCapture ?? true, webhooks };
  const callbackMethod = options.callbackMethod ?? 'post';
  const calls = new Map<string, number>();
  const sockets = new Set<Socket>();

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '');
    const key = routeKey(method, path);
    calls.set(key, (calls.get(key) ?? 0) + 1);
    if (faults.down) return void req.socket.resetAndDestroy();
    const text = await readText(req).catch((error: unknown) => error);
    if (faults.hang) return;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (takeCount(faults, 'slowNext')) await new Promise((r) => setTimeout(r, faults.slowMs));
    if (faults.down) return void req.socket.resetAndDestroy();
    if (takeCount(faults, 'errorNext')) return sendError(res, serverError(faults.errorStatus));
    if (takeError(faults)) return sendError(res, serverError());
    let answer: { status: number; body: unknown };
    try {
      checkAuth(req.headers.authorization, keyId, keySecret);
      if (text instanceof RazorpayError) throw text;
      if (text instanceof Error) throw text;
      const body = parseBody(text as string, req.headers['content-type']);
      answer = route(ctx, method, path, url.searchParams, body);
    } catch (error) {
      if (error instanceof RazorpayError) return sendError(res, error);
      throw error;
    }
    // The work is done; the answer never arrives.
    if (takeLoss(faults, key)) return void req.socket.destroy();
    sendJson(res, answer.status, answer.body);
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    let body: unknown;
    try {
      const text = await readText(req);
      body = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      return sendJson(res, 400, { error: 'the body is not JSON' });
    }
    if (path === '/__emulator/faults' && req.method === 'POST') {
      try {
        applyFaults(parseFaults(body), req.socket);
      } catch (error) {
        return sendJson(res, 400, { error: (error as Error).message });
      }
      return sendJson(res, 200, { faults });
    }
    if (path === '/__emulator/faults') return sendJson(res, 200, { faults });
    if (path === '/__emulator/state') {
      return sendJson(res, 200, {
        orders: [...state.orders.values()],
        payments: [...state.payments.values()],
        refunds: [...state.refunds.values()],
        webhooks: webhooks.log.map(({ body: _body, ...rest }) => rest),
        calls: Object.fromEntries(calls),
        faults,
      });
    }
    if (path === '/__emulator/reset' && req.method === 'POST') {
      emulator.reset({ data: (body as { data?: unknown }).data === true });
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: 'unknown control path' });
  }

  function applyFaults(change: Partial<RazorpayFaultKnobs>, keep?: Socket): void {
    Object.assign(faults, change);
    if (change.down) for (const socket of sockets) if (socket !== keep) socket.resetAndDestroy();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://razorpay');
    const path = url.pathname;
    if (path.startsWith('/__emulator/')) return control(req, res, path);
    const checkout = /^\/checkout\/([^/]+)\/?$/.exec(path);
    if (checkout) {
      const orderId = decodeURIComponent(checkout[1]!);
      if (req.method === 'POST') return checkoutAction(ctx, req, res, orderId, callbackMethod);
      return checkoutPage(ctx, res, orderId, url.searchParams);
    }
    // Hosted Checkout: the customer's browser posts the merchant's form here (no HTTP Basic).
    if (path.replace(/\/+$/, '') === '/v1/checkout/embedded') return embeddedCheckout(ctx, req, res, keyId);
    if (path === '/v1' || path.startsWith('/v1/')) return api(req, res, url);
    sendError(res, noRoute());
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('razorpay emulator: request failed', error);
      if (!res.headersSent) sendError(res, serverError());
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | null = null;

  const emulator: RazorpayEmulator = {
    url,
    port,
    keyId,
    keySecret,
    get webhookSecret() {
      return webhooks.settings.secret;
    },
    accountId: webhooks.settings.accountId,
    state,
    webhooks: webhooks.log,
    calls,
    faults,
    async setFaults(change) {
      applyFaults(parseFaults(change));
    },
    setWebhook(target, secret) {
      webhooks.settings.url = target;
      if (secret !== undefined) webhooks.settings.secret = secret;
    },
    checkoutUrl(orderId, callback) {
      const page = new URL(`/checkout/${encodeURIComponent(orderId)}`, url);
      if (callback) page.searchParams.set('callback', callback);
      return page.href;
    },
    pay: (orderId, opts = {}) => pay(ctx, orderId, opts.method),
    fail: (orderId, opts = {}) => fail(ctx, orderId, opts),
    cancel: (orderId) => cancel(ctx, orderId),
    signature: (orderId, paymentId) => paymentSignature(orderId, paymentId, keySecret),
    webhooksIdle: () => webhooks.idle(),
    reset({ data = false } = {}) {
      Object.assign(faults, noFaults());
      calls.clear();
      if (!data) return;
      state.clear();
      webhooks.log.length = 0;
    },
    stop() {
      stopped ??= (async () => {
        webhooks.stop();
        await webhooks.idle();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return stopped;
    },
    close: () => emulator.stop(),
  };
  return emulator;
}
