// Webhook endpoints and their deliveries as the session surface shows them (CONTRACT §13). An
// endpoint never shows its secret after it is made or rotated: only its first characters.

import { Type } from 'typebox';
import { isoWithOffset } from '../../core/time.ts';
import type { DeliveryRow } from '../../core/webhooks/webhook.service.ts';
import type { WebhookEndpoint } from '../../db/tables.ts';

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const iso = (d: Date | null) => (d ? isoWithOffset(d) : null);

export const WebhookEndpointSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  description: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([
    Type.String({ description: 'client, failing (3 days of failures) or gone (410)' }),
    Type.Null(),
  ]),
  disabled_at: Time,
  secret_hint: Type.String({ description: 'the first characters of the signing secret' }),
  previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'after a rotation: until when the previous secret signs too',
  }),
  failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'the first failure since the last success; 3 days of it disables the endpoint',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export function webhookEndpointView(e: WebhookEndpoint, now: Date) {
  const previousValid = e.previous_secret_expires_at !== null && e.previous_secret_expires_at > now;
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    disabled_at: iso(e.disabled_at),
    secret_hint: e.secret_hint,
    previous_secret_expires_at: previousValid ? iso(e.previous_secret_expires_at) : null,
    failing_since: iso(e.failing_since),
    created_at: isoWithOffset(e.created_at),
    updated_at: isoWithOffset(e.updated_at),
  };
}

export const WebhookDeliverySchema = Type.Object({
  id: Type.Integer(),
  event_id: Type.String({ description: 'msg_…: the body’s id and the webhook-id header' }),
  type: Type.String(),
  attempt: Type.Integer({ description: 'attempts made so far' }),
  status: Type.String({ description: 'pending (waiting for its first attempt or a retry), succeeded or failed' }),
  response_status: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  next_attempt_at: Time,
  last_attempt_at: Time,
  created_at: Type.String({ format: 'date-time' }),
  error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String({ description: 'the first 1 KiB of the answer' }), Type.Null()]),
  request_headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  request_body: Type.String({ description: 'the JSON sent (the same bytes every attempt)' }),
});

export function webhookDeliveryView(d: DeliveryRow) {
  return {
    id: Number(d.id),
    event_id: d.event_public_id,
    type: d.type,
    attempt: d.attempt,
    status: d.status,
    response_status: d.response_status,
    duration_ms: d.duration_ms,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    last_attempt_at: iso(d.last_attempt_at),
    created_at: isoWithOffset(d.created_at),
    error: d.error,
    response_body: d.response_body,
    request_headers: d.request_headers,
    request_body: d.request_body,
  };
}
