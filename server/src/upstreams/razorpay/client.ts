// The Razorpay API as a merchant's server sees it (razorpay.com/docs/api: orders, payments,
// refunds): HTTP Basic `key_id:key_secret`, JSON bodies, errors as `{error: {code, description,
// field?}}`. Transport (keep-alive, deadlines, size cap) is ../http.ts; every failure is an
// UpstreamError whose message never carries the key secret.

import { UpstreamError } from '../errors.ts';
import { createHttpClient, type HttpClient } from '../http.ts';

export interface RazorpayConfig {
  keyId: string;
  keySecret: string;
  /** https://api.razorpay.com, or an emulator. */
  apiUrl: string;
  timeoutMs?: number;
}

export interface RazorpayOrder {
  id: string;
  amount: number;
  currency: string;
  receipt: string | null;
  status: string;
}

export interface RazorpayPayment {
  id: string;
  order_id: string | null;
  amount: number;
  currency: string;
  status: 'created' | 'authorized' | 'captured' | 'failed' | 'refunded';
  captured: boolean;
  method: string | null;
  error_code: string | null;
  error_description: string | null;
  error_reason: string | null;
}

export interface RazorpayRefund {
  id: string;
  payment_id: string;
  amount: number;
  /** pending, processed or failed. */
  status: string;
  /** Our reference, as sent. */
  receipt: string | null;
}

interface ErrorBody {
  error?: { code?: unknown; description?: unknown; field?: unknown };
}

export class RazorpayClient {
  readonly keyId: string;
  readonly #secret: string;
  readonly #base: string;
  readonly #http: HttpClient;
  readonly label = 'Razorpay';

  constructor(config: RazorpayConfig) {
    this.keyId = config.keyId;
    this.#secret = config.keySecret;
    this.#base = config.apiUrl.replace(/\/+$/, '');
    this.#http = createHttpClient({ label: this.label, timeoutMs: config.timeoutMs ?? 15_000, maxBytes: 1 << 20 });
  }

  /** An order for `amountPaise` (INR); `receipt` is our reference (at most 40 characters). */
  createOrder(input: { amountPaise: number; receipt: string; notes?: Record<string, string> }): Promise<RazorpayOrder> {
    return this.#call('POST', '/v1/orders', {
      amount: input.amountPaise,
      currency: 'INR',
      receipt: input.receipt,
      notes: input.notes ?? {},
    });
  }

  fetchPayment(paymentId: string): Promise<RazorpayPayment> {
    return this.#call('GET', `/v1/payments/${encodeURIComponent(paymentId)}`);
  }

  /** Refund all that is left of a captured payment, or `amountPaise` of it; `receipt` is our reference (≤ 40). */
  refund(
    paymentId: string,
    input: { amountPaise?: number; receipt?: string; notes?: Record<string, string> } = {},
  ): Promise<RazorpayRefund> {
    const body = {
      ...(input.amountPaise === undefined ? {} : { amount: input.amountPaise }),
      ...(input.receipt === undefined ? {} : { receipt: input.receipt }),
      ...(input.notes ? { notes: input.notes } : {}),
    };
    return this.#call<RazorpayRefund>('POST', `/v1/payments/${encodeURIComponent(paymentId)}/refund`, body);
  }

  /** The refunds of a payment (the newest 100). */
  async refundsOf(paymentId: string): Promise<RazorpayRefund[]> {
    const page = await this.#call<{ items?: RazorpayRefund[] }>(
      'GET',
      `/v1/payments/${encodeURIComponent(paymentId)}/refunds?count=100`,
    );
    return Array.isArray(page.items) ? page.items : [];
  }

  close(): void {
    this.#http.close();
  }

  async #call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Basic ${Buffer.from(`${this.keyId}:${this.#secret}`).toString('base64')}`,
    };
    let text: string | undefined;
    if (body !== undefined) {
      text = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    let url: URL;
    try {
      url = new URL(`${this.#base}${path}`);
    } catch {
      throw new UpstreamError('rejected', `${this.label}: the API URL is not a URL`, { retryable: false });
    }
    const res = await this.#http.send({ method, url, headers, ...(text === undefined ? {} : { body: text }) });
    let parsed: unknown = null;
    try {
      parsed = res.text === '' ? null : JSON.parse(res.text);
    } catch {
      parsed = null;
    }
    if (res.status >= 200 && res.status < 300) {
      if (parsed === null || typeof parsed !== 'object') {
        throw new UpstreamError('protocol', `${this.label} answered ${res.status} without a JSON body`, {
          retryable: false,
          status: res.status,
        });
      }
      return parsed as T;
    }
    throw classify(this.label, res.status, (parsed as ErrorBody | null)?.error);
  }
}

/** Razorpay's refusal in the terms the core acts on. */
function classify(label: string, status: number, error: ErrorBody['error']): UpstreamError {
  const description = typeof error?.description === 'string' ? error.description.slice(0, 300) : '';
  const message = `${label} answered ${status}${description ? `: ${description}` : ''}`;
  if (status === 401) return new UpstreamError('auth', message, { status, retryable: false });
  if (status === 404) return new UpstreamError('not_found', message, { status });
  if (status === 429) return new UpstreamError('rate_limited', message, { status });
  if (status >= 500) return new UpstreamError('unreachable', message, { status });
  return new UpstreamError('rejected', message, {
    status,
    retryable: false,
    ...(description ? { detail: description } : {}),
    ...(typeof error?.field === 'string' && description ? { fields: { [error.field]: description } } : {}),
  });
}
