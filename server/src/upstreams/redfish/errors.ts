// How Redfish failures become UpstreamError (mapping in the header of ../bare-metal.ts). A
// Redfish error body is `{"error": {"code", "message", "@Message.ExtendedInfo": [{MessageId,
// Message, RelatedProperties: ["#/ResetType"], Severity, Resolution}]}}` (DSP0266 §9.5). The
// messages' texts become `detail`, their RelatedProperties (JSON pointers) `fields` (`#/Boot/
// BootSourceOverrideTarget` → `Boot.BootSourceOverrideTarget`), and the registry key of the
// first message (`PropertyValueNotInList`, `ResourceInUse`, …, the part after the registry
// version) `reason`. Statuses: 401 auth, 403 forbidden, 404 not_found, 409 or ResourceInUse
// conflict, 412 (stale ETag) conflict, 400 and other 4xx rejected, 408 timeout, 429
// rate_limited, 5xx (503 with Retry-After) unreachable, 3xx protocol.

import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, type UpstreamErrorKind } from '../errors.ts';

export interface RedfishMessage {
  /** `Base.1.8.PropertyValueNotInList`. */
  id: string;
  /** The registry key: `PropertyValueNotInList`. */
  key: string;
  text: string;
  /** JSON pointers, e.g. `#/ResetType`. */
  related: string[];
}

const clean = (text: string): string => text.trim().replace(/\s+/g, ' ');
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The registry key of a MessageId (`Base.1.8.ResourceInUse` → `ResourceInUse`). */
export function messageKey(id: string): string {
  const parts = id.split('.');
  return parts[parts.length - 1] ?? id;
}

/** Messages of an ExtendedInfo array (an error's, a task's `Messages`, an action's answer). */
export function readMessages(value: unknown): RedfishMessage[] {
  if (!Array.isArray(value)) return [];
  const out: RedfishMessage[] = [];
  for (const item of value) {
    if (!isObject(item)) continue;
    const id = typeof item.MessageId === 'string' ? item.MessageId : '';
    const text = typeof item.Message === 'string' ? clean(item.Message) : '';
    if (!id && !text) continue;
    const related = Array.isArray(item.RelatedProperties)
      ? item.RelatedProperties.filter((p): p is string => typeof p === 'string')
      : [];
    out.push({ id, key: id ? messageKey(id) : '', text, related });
  }
  return out;
}

/** The error body's code, message and ExtendedInfo; null when the body is not a Redfish error. */
export function parseErrorBody(text: string): { code: string; message: string; messages: RedfishMessage[] } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(body) || !isObject(body.error)) return null;
  const error = body.error;
  return {
    code: typeof error.code === 'string' ? error.code : '',
    message: typeof error.message === 'string' ? clean(error.message) : '',
    messages: readMessages(error['@Message.ExtendedInfo']),
  };
}

/** `#/Boot/BootSourceOverrideTarget` → `Boot.BootSourceOverrideTarget`; `#/ResetType` → `ResetType`. */
export function fieldOf(pointer: string): string {
  const path = pointer.replace(/^#?\/?/, '');
  return path
    .split('/')
    .filter((p) => p !== '')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** Detail (every message's text, or the error's), fields and reason of an error body. */
export function describe(
  messages: RedfishMessage[],
  fallback: string,
): {
  detail: string | undefined;
  fields: Record<string, string> | undefined;
  reason: string | undefined;
} {
  const meaningful = messages.filter((m) => m.key !== 'Success');
  const texts = [...new Set(meaningful.map((m) => m.text).filter((t) => t !== ''))];
  const detail = texts.length > 0 ? texts.join(' ') : fallback || undefined;
  const fields: Record<string, string> = {};
  for (const m of meaningful) {
    for (const pointer of m.related) {
      const field = fieldOf(pointer);
      if (field && !(field in fields)) fields[field] = m.text || m.key;
    }
  }
  const reason = meaningful.find((m) => m.key !== '' && m.key !== 'GeneralError')?.key;
  return { detail, fields: Object.keys(fields).length > 0 ? fields : undefined, reason };
}

/** `Retry-After` in seconds (a number of seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfter(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A non-2xx answer of the BMC (or of a proxy in front of it) as an UpstreamError; `what` names the request. */
export function classify(
  status: number,
  statusText: string,
  text: string,
  headers: IncomingHttpHeaders,
  label: string,
  what: string,
): UpstreamError {
  const body = parseErrorBody(text);
  const { detail, fields, reason } = describe(body?.messages ?? [], body?.message ?? '');
  const said = detail ?? (clean(statusText) || `HTTP ${status}`);
  const extra = {
    status,
    ...(detail === undefined ? {} : { detail }),
    ...(fields === undefined ? {} : { fields }),
    ...(reason === undefined ? {} : { reason }),
  };
  const fail = (
    kind: UpstreamErrorKind,
    message: string,
    options: { retryable?: boolean; retryAfterSeconds?: number },
  ) => new UpstreamError(kind, `${label}: ${what}: ${message}`, { ...extra, ...options });

  if (status >= 300 && status < 400) {
    return fail('protocol', `answered a redirect (${status}); is the endpoint the BMC’s https base URL?`, {
      retryable: false,
    });
  }
  if (status === 401) return fail('auth', `the BMC refused the account or session (${said})`, { retryable: false });
  if (status === 403) return fail('forbidden', `the BMC account may not do this (${said})`, { retryable: false });
  if (status === 404) return fail('not_found', `not found (${said})`, { retryable: false });
  if (status === 408) return fail('timeout', `timed out (${said})`, { retryable: true });
  if (status === 409 || status === 412 || reason === 'ResourceInUse') {
    // In transition (ResourceInUse) or a stale ETag: the same call may succeed in a moment.
    const transient = reason === 'ResourceInUse' || status === 412;
    return fail('conflict', `refused in the current state (${said})`, { retryable: transient });
  }
  if (status === 429) {
    const seconds = retryAfter(headers);
    return fail('rate_limited', `asks us to slow down (${said})`, {
      ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }),
    });
  }
  if (status >= 400 && status < 500) return fail('rejected', `refused (${status}: ${said})`, { retryable: false });
  const seconds = retryAfter(headers);
  return fail('unreachable', `failed (${status}: ${said})`, {
    retryable: true,
    ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }),
  });
}

/** Replace every occurrence of the secrets (password, session token) in an error's texts. */
export function redact(error: UpstreamError, secrets: string[]): UpstreamError {
  const present = secrets.filter(
    (s) =>
      s !== '' &&
      (error.message.includes(s) ||
        error.detail?.includes(s) ||
        Object.values(error.fields ?? {}).some((v) => v.includes(s))),
  );
  if (present.length === 0) return error;
  present.sort((a, b) => b.length - a.length);
  const scrub = (text: string) => present.reduce((t, s) => t.split(s).join('***'), text);
  return new UpstreamError(error.kind, scrub(error.message), {
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    ...(error.detail === undefined ? {} : { detail: scrub(error.detail) }),
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    ...(error.fields === undefined
      ? {}
      : { fields: Object.fromEntries(Object.entries(error.fields).map(([k, v]) => [k, scrub(v)])) }),
  });
}
