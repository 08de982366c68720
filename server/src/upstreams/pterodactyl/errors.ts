// How Pterodactyl failures become UpstreamError (upstreams.md §1.3, §1.4; mapping in the header
// of ../game-panel.ts). The panel answers `{errors: [{code, status, detail, meta?}]}`; Wings,
// reached directly for uploads, answers `{error}`. The status decides the kind; the panel's own
// words go to `detail` (400, 403, 409, 429) or `fields` (422), where callers may show them.

import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, type UpstreamErrorKind } from '../errors.ts';

interface PanelErrorEntry {
  code?: unknown;
  status?: unknown;
  detail?: unknown;
  meta?: { source_field?: unknown; rule?: unknown } | null;
}

/** What an error body says: its entries' texts, and the failing fields of a 422. */
export interface ErrorText {
  /** The entries' details, in order (empty when the body is not an error body). */
  details: string[];
  /** source_field → its first message (422 only). */
  fields: Record<string, string>;
}

const clean = (text: string): string => text.trim().replace(/\s+/g, ' ');

/** Read a failure's body, whichever of the panel's or Wings' shapes it has (or none). */
export function readErrorBody(text: string): ErrorText {
  const out: ErrorText = { details: [], fields: {} };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return out;
  }
  if (typeof body !== 'object' || body === null) return out;
  const { errors, error } = body as { errors?: unknown; error?: unknown };
  if (Array.isArray(errors)) {
    for (const entry of errors as PanelErrorEntry[]) {
      if (typeof entry !== 'object' || entry === null || typeof entry.detail !== 'string') continue;
      const detail = clean(entry.detail);
      if (!detail) continue;
      out.details.push(detail);
      const field = entry.meta?.source_field;
      if (typeof field === 'string' && field && !(field in out.fields)) out.fields[field] = detail;
    }
  } else if (typeof error === 'string' && clean(error)) {
    out.details.push(clean(error));
  }
  return out;
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfter(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A non-2xx answer of the panel (or of Wings, for uploads) as an UpstreamError. */
export function classify(
  status: number,
  reason: string,
  text: string,
  headers: IncomingHttpHeaders,
  label: string,
): UpstreamError {
  const { details, fields } = readErrorBody(text);
  const said = details.join(' ') || clean(reason) || `HTTP ${status}`;
  const fail = (
    kind: UpstreamErrorKind,
    message: string,
    extra: { retryable?: boolean; detail?: string; fields?: Record<string, string>; retryAfterSeconds?: number } = {},
  ) => new UpstreamError(kind, `${label}: ${message}`, { status, ...extra });
  const detail = details.length > 0 ? details.join(' ') : undefined;
  const shown = detail === undefined ? {} : { detail };

  if (status === 401) return fail('auth', `the API key was refused (${said})`, { retryable: false });
  if (status === 403)
    return fail('forbidden', `refused for want of a permission (${said})`, { ...shown, retryable: false });
  if (status === 404) {
    // The panel always explains a 404 in its error body; a bare one is another server's page.
    if (details.length === 0) {
      return fail('protocol', `answered 404 without the panel's error body; is the endpoint the panel's URL?`, {
        retryable: false,
      });
    }
    return fail('not_found', `not found (${said})`, { retryable: false });
  }
  if (status === 409)
    return fail('conflict', `the server's state forbids it now (${said})`, { ...shown, retryable: false });
  if (status === 422) {
    return fail('rejected', `the request was refused (${said})`, { ...shown, fields, retryable: false });
  }
  if (status === 429) {
    const seconds = retryAfter(headers);
    return fail('rate_limited', `asks us to slow down (${said})`, {
      ...shown,
      ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }),
    });
  }
  if (status >= 300 && status < 400) {
    // Laravel redirects requests that do not look like API calls: not the panel's API, or a proxy's login.
    return fail('protocol', `answered a redirect (${status}); is the endpoint the panel's URL?`, { retryable: false });
  }
  if (status === 405)
    return fail('protocol', `answered 405 (${said}); is the endpoint a Pterodactyl panel?`, { retryable: false });
  if (status === 408) return fail('timeout', `timed out (${said})`, { retryable: true });
  if (status >= 400 && status < 500) {
    // 400 is the panel's DisplayException (a limit, a business rule); 413, 415, … are refusals too.
    return fail('rejected', `refused (${said})`, { ...shown, retryable: false });
  }
  // 500, 502/504 (Wings unreachable or failing behind the panel), 503 (maintenance), a proxy's 5xx.
  return fail('unreachable', `failed (${status} ${said})`, { retryable: true });
}

/** Replace every occurrence of the secrets, wherever panel text might have echoed them. */
export function redact(error: UpstreamError, secrets: string[]): UpstreamError {
  const present = secrets.filter((s) => s !== '' && error.message.includes(s));
  const inDetail = secrets.filter((s) => s !== '' && error.detail?.includes(s));
  const inFields = secrets.filter((s) => s !== '' && Object.values(error.fields ?? {}).some((v) => v.includes(s)));
  if (present.length === 0 && inDetail.length === 0 && inFields.length === 0) return error;
  const scrub = (text: string) => secrets.reduce((t, s) => (s === '' ? t : t.split(s).join('***')), text);
  return new UpstreamError(error.kind, scrub(error.message), {
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    ...(error.detail === undefined ? {} : { detail: scrub(error.detail) }),
    ...(error.fields === undefined
      ? {}
      : { fields: Object.fromEntries(Object.entries(error.fields).map(([k, v]) => [k, scrub(v)])) }),
  });
}
