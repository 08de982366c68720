// Signed outgoing webhooks (migration 0031): an account's endpoints, the outbox of events and
// the deliveries of each event to each endpoint.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp } from './columns.ts';

/** Why an endpoint is disabled: its owner turned it off, it failed for 3 days, or it answered 410 Gone. */
export type WebhookDisabledReason = 'client' | 'failing' | 'gone';

export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  description: ColumnType<string, string | undefined, string>;
  events: ColumnType<string[], string[], string[]>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: ColumnType<
    WebhookDisabledReason | null,
    WebhookDisabledReason | null | undefined,
    WebhookDisabledReason | null
  >;
  disabled_at: NullableTimestamp;
  /** `whsec_…`, sealed with SECRET_KEY. */
  secret_sealed: string;
  /** The secret's first characters, to recognise it. */
  secret_hint: string;
  /** The secret before the last rotation, still signing until previous_secret_expires_at. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** The first failure since the last success (null while it succeeds). */
  failing_since: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface WebhookEventsTable {
  id: Generated<string>;
  /** `msg_<base32>`: the body's `id` and the `webhook-id` header. */
  public_id: string;
  account_id: number;
  type: string;
  /** The exact JSON sent and signed. */
  body: string;
  created_at: CreatedAt;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  endpoint_id: number;
  event_id: string;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  /** Attempts made (a claimed attempt counts from the moment it is claimed). */
  attempt: ColumnType<number, number | undefined, number>;
  next_attempt_at: NullableTimestamp;
  /** The lease of the worker sending it now; expired: that worker died, send it again. */
  claimed_until: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  response_status: number | null;
  /** The first 1 KiB of the last answer's body. */
  response_body: string | null;
  /** The headers of the last attempt (never a secret: the signature is not one). */
  request_headers: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  error: string | null;
  duration_ms: number | null;
  created_at: CreatedAt;
}

export type WebhookEndpoint = Selectable<WebhookEndpointsTable>;
export type WebhookEvent = Selectable<WebhookEventsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
