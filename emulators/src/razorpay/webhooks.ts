// Webhook delivery as Razorpay does it: a POST of the event (`{entity: "event", account_id, event,
// contains, payload: {payment: {entity}, order: {entity}, refund: {entity}}, created_at}`) with
// `X-Razorpay-Signature` = hex HMAC-SHA256 of the raw body under the webhook secret and
// `X-Razorpay-Event-Id`; a non-2xx answer or no answer (5 s) is retried later with backoff. One
// sender delivers events in the order they were raised, so the fault knobs (duplicate, reorder,
// delay, drop) decide exactly what a receiver sees.

import { createHmac } from 'node:crypto';
import { takeCount } from '../shared/faults.ts';
import type { RazorpayFaultKnobs } from './faults.ts';
import { newId, nowSeconds } from './state.ts';

export type WebhookEvent =
  | 'payment.authorized'
  | 'payment.captured'
  | 'payment.failed'
  | 'order.paid'
  | 'refund.created'
  | 'refund.processed';

/** What the emulator sends unless told otherwise (the events a deposit flow subscribes to). */
export const DEFAULT_EVENTS: readonly WebhookEvent[] = [
  'payment.captured',
  'payment.failed',
  'order.paid',
  'refund.processed',
];

export interface WebhookSettings {
  url: string | null;
  secret: string;
  accountId: string;
  events: Set<WebhookEvent>;
  /** Retries after the first attempt when the receiver answers non-2xx or not at all (default 3). */
  retries: number;
  /** The first retry waits this long, each next one twice as long (default 200 ms). */
  retryDelayMs: number;
}

/** One event as the receiver is sent it, and what became of it. */
export interface WebhookDelivery {
  eventId: string;
  event: WebhookEvent;
  /** The raw body, exactly as signed and sent. */
  body: string;
  signature: string;
  /** A second copy of an event already sent (the duplicateWebhooks knob). */
  duplicate: boolean;
  status: 'pending' | 'delivered' | 'failed' | 'dropped';
  attempts: number;
  /** The receiver's last HTTP status (null: no answer). */
  lastStatus: number | null;
}

export interface RaisedEvent {
  event: WebhookEvent;
  contains: string[];
  payload: Record<string, { entity: unknown }>;
}

export function signBody(body: string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export class WebhookSender {
  readonly log: WebhookDelivery[] = [];
  private chain: Promise<void> = Promise.resolve();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly wakers = new Set<() => void>();
  private stopped = false;
  /** Aborts deliveries in flight when the emulator stops. */
  private readonly halt = new AbortController();

  readonly settings: WebhookSettings;
  private readonly faults: RazorpayFaultKnobs;

  constructor(settings: WebhookSettings, faults: RazorpayFaultKnobs) {
    this.settings = settings;
    this.faults = faults;
  }

  /**
   * Raise events that happen together (a capture raises payment.captured then order.paid). The
   * payload is a snapshot of the entities now, as Razorpay's is.
   */
  raise(batch: RaisedEvent[]): void {
    let events = batch.filter((e) => this.settings.events.has(e.event));
    if (events.length === 0 || this.settings.url === null) return;
    if (events.length > 1 && takeCount(this.faults, 'reorderWebhooks')) events = [...events].reverse();
    const deliveries: WebhookDelivery[] = [];
    for (const raised of events) {
      const body = JSON.stringify({
        entity: 'event',
        account_id: this.settings.accountId,
        event: raised.event,
        contains: raised.contains,
        payload: structuredClone(raised.payload),
        created_at: nowSeconds(),
      });
      const delivery: WebhookDelivery = {
        eventId: newId('evt'),
        event: raised.event,
        body,
        signature: signBody(body, this.settings.secret),
        duplicate: false,
        status: 'pending',
        attempts: 0,
        lastStatus: null,
      };
      this.log.push(delivery);
      if (takeCount(this.faults, 'dropWebhooks')) {
        delivery.status = 'dropped';
        continue;
      }
      deliveries.push(delivery);
      if (takeCount(this.faults, 'duplicateWebhooks')) {
        const copy: WebhookDelivery = { ...delivery, duplicate: true };
        this.log.push(copy);
        deliveries.push(copy);
      }
    }
    const url = this.settings.url;
    for (const delivery of deliveries) this.chain = this.chain.then(() => this.deliver(delivery, url));
  }

  /** Resolves when every event raised so far has been delivered, dropped or given up on. */
  async idle(): Promise<void> {
    let seen: Promise<void> | null = null;
    while (seen !== this.chain) {
      seen = this.chain;
      await seen;
    }
  }

  stop(): void {
    this.stopped = true;
    this.halt.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        this.timers.delete(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.timers.add(timer);
      this.wakers.add(wake);
    });
  }

  private async deliver(delivery: WebhookDelivery, url: string): Promise<void> {
    await this.sleep(this.faults.webhookDelayMs);
    for (let attempt = 0; attempt <= this.settings.retries; attempt++) {
      if (this.stopped) break;
      if (attempt > 0) await this.sleep(this.settings.retryDelayMs * 2 ** (attempt - 1));
      if (this.stopped) break;
      delivery.attempts++;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Razorpay-Webhook/v1',
            'x-razorpay-signature': delivery.signature,
            'x-razorpay-event-id': delivery.eventId,
          },
          body: delivery.body,
          signal: AbortSignal.any([AbortSignal.timeout(5000), this.halt.signal]),
        });
        await res.arrayBuffer().catch(() => undefined);
        delivery.lastStatus = res.status;
        if (res.ok) {
          delivery.status = 'delivered';
          return;
        }
      } catch {
        delivery.lastStatus = null;
      }
    }
    delivery.status = 'failed';
  }
}
