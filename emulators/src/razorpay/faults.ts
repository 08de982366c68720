// The emulator's fault knobs: how Razorpay misbehaves as a driver and a webhook receiver see it.
// The API can be slow, dead, hanging, answer 5xx (a share, or the next N calls) or lose answers of
// work it did; webhooks can arrive twice, out of order (order.paid before payment.captured), late,
// or never. The common part is ../shared/faults.ts.

import { type CommonKnobs, parseKnobs } from '../shared/faults.ts';

export interface RazorpayFaultKnobs extends CommonKnobs {
  /** Delay before every API answer, in ms. (common) */
  latencyMs: number;
  /** A dead API: connections are reset without an answer (checkout and control paths still work). (common) */
  down: boolean;
  /** Accept API requests and never answer them. (common) */
  hang: boolean;
  /** Fraction (0–1) of API calls answered 500 SERVER_ERROR without doing anything. (common) */
  errorRate: number;
  /** Do the work, then cut the connection. A whole number N: the next N calls; a fraction: that share. (common) */
  loseResponses: number;
  /** The next call of this route key (`POST /v1/orders`, `POST /v1/payments/:/refund`) loses its answer. (common) */
  loseNext: string | null;
  /** The next N API calls answer `errorStatus` (SERVER_ERROR) without doing anything. */
  errorNext: number;
  /** The status of those answers (default 500; 502, 503 or 504 as a gateway in front would). */
  errorStatus: number;
  /** The next N API calls wait `slowMs` before answering. */
  slowNext: number;
  /** How long a slow answer waits, in ms (default 2000). */
  slowMs: number;
  /** The next N webhook events are delivered twice (same event id, same body and signature). */
  duplicateWebhooks: number;
  /** The next N events that come in a batch (a capture: payment.captured + order.paid) are sent in reverse order. */
  reorderWebhooks: number;
  /** Every webhook delivery waits this long before it is sent, in ms. */
  webhookDelayMs: number;
  /** The next N webhook events are never delivered (no retries either). */
  dropWebhooks: number;
}

export const NO_FAULTS: Readonly<RazorpayFaultKnobs> = Object.freeze({
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  loseResponses: 0,
  loseNext: null,
  errorNext: 0,
  errorStatus: 500,
  slowNext: 0,
  slowMs: 2000,
  duplicateWebhooks: 0,
  reorderWebhooks: 0,
  webhookDelayMs: 0,
  dropWebhooks: 0,
});

export function noFaults(): RazorpayFaultKnobs {
  return { ...NO_FAULTS };
}

const NUMBERS = [
  'latencyMs',
  'errorRate',
  'loseResponses',
  'errorNext',
  'errorStatus',
  'slowNext',
  'slowMs',
  'duplicateWebhooks',
  'reorderWebhooks',
  'webhookDelayMs',
  'dropWebhooks',
] as const;
const FLAGS = ['down', 'hang'] as const;

/** Check a change (e.g. a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseFaults(input: unknown): Partial<RazorpayFaultKnobs> {
  const out = parseKnobs<RazorpayFaultKnobs>(input, { numbers: NUMBERS, flags: FLAGS });
  if (
    out.errorStatus !== undefined &&
    (!Number.isInteger(out.errorStatus) || out.errorStatus < 500 || out.errorStatus > 599)
  ) {
    throw new Error('errorStatus: a 5xx status');
  }
  return out;
}

export { takeCount, takeError, takeLoss } from '../shared/faults.ts';
