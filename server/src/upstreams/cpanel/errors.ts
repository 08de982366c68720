// How cPanel/WHM failures become UpstreamError (upstreams.md §3.2–§3.3; mapping in the header of
// ../web-panel.ts). Transport-level answers (401/403, 5xx, redirects, pages that are not the API)
// are classified by status; refusals, which cPanel sends as HTTP 200 with `metadata.result: 0`
// (WHM) or `status: 0` (UAPI), become `rejected` with the panel's text in `detail` and, where the
// text is recognised, a `reason` (weak_password, bad_db_name, bad_mailbox, exists, not_found,
// limit). cPanel has no error codes, so recognition is by the wording its source uses.

import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, type UpstreamErrorKind } from '../errors.ts';

/** What kind of object the refused call was about: decides how a name problem is read. */
export type Area = 'account' | 'package' | 'database' | 'mailbox' | 'other';

/** `domain_taken` is never read from a text alone: ./accounts.ts decides it for createacct. */
export type WebReason =
  | 'weak_password'
  | 'bad_db_name'
  | 'bad_mailbox'
  | 'exists'
  | 'domain_taken'
  | 'not_found'
  | 'limit';

const clean = (text: string): string => text.trim().replace(/\s+/g, ' ');

/** `PasswordIsTooWeak`: "…too weak… strength rating of N or higher" (both wordings of §3.3), and the username rule. */
const WEAK = /too weak|strength rating|password strength|password may not contain/i;
/** Taken names: accounts, domains, packages, databases, users, mailboxes; the first-characters `NameConflict`. */
const EXISTS =
  /already exists?\b|\bis taken\b|already (taken|in use|set up|configured|registered|owned|hosted|on this server)|already has an? (account|user|database|domain)|a group for that username|exists on this server|\bname ?conflict\b|conflicts with (an|another) existing|characters must be unique/i;
const NOT_FOUND =
  /does not exist|do not exist|doesn['’]t exist|not found|no such|(cannot|can['’]t|could not|unable to) (find|locate)|is not a cpanel user|invalid user\b|user parameter is invalid|unknown (user|account|domain|database|vhost)|(does not|doesn['’]t|do not|don['’]t) (own|control|have a user)|is not owned by/i;
/** Counted limits and quotas of the package (not lengths of a name). */
const LIMIT =
  /maximum number|maximum allotment|exceed(s|ed)? (the|your|its) (maximum|limit|quota)|reached (the|your|its) (maximum|limit|quota)|(limit|quota) (has been )?(reached|exceeded)|too many|cannot create more than|would exceed (the|your|its) (limit|maximum)|allowed number of/i;
const LENGTHY = /\blength\b|\blong\b|\bcharacters?\b/i;
/** A database or database-user name refused: the prefix, empty, reserved, too long, bad characters. */
const DB_NAME =
  /prefix|cannot be empty|reserved|too long|longer than|length|character|invalid|not valid|not allowed|may not contain|cannot contain|can only contain|\bname\b/i;
/** A mailbox name refused: the local part or the address. */
const MAILBOX =
  /e-?mail|mailbox|address|local part|account name|user ?name|\bname\b|character|invalid|not valid|not allowed|too long|reserved/i;
/** Refusals in those areas that are not about the name: privileges, quotas. */
const NOT_A_NAME = /privilege|quota/i;
/** WHM ACLs: a reseller token asked for something it may not do. */
const DENIED =
  /access denied|permission denied|not have (the )?(required )?(privileges?|permissions?|access)|insufficient privileges/i;

/** The reason a refusal's text stands for, in the context of what was asked; undefined when not recognised. */
export function recognise(text: string, area: Area): WebReason | undefined {
  if (WEAK.test(text)) return 'weak_password';
  if (EXISTS.test(text)) return 'exists';
  if (NOT_FOUND.test(text)) return 'not_found';
  if (LIMIT.test(text) && !LENGTHY.test(text)) return 'limit';
  if (NOT_A_NAME.test(text)) return undefined;
  if (area === 'database' && DB_NAME.test(text)) return 'bad_db_name';
  if (area === 'mailbox' && MAILBOX.test(text)) return 'bad_mailbox';
  return undefined;
}

/** A refusal the panel answered with HTTP 200 (`metadata.result: 0` or UAPI `status: 0`). */
export function refusal(label: string, what: string, text: string, area: Area): UpstreamError {
  const said = clean(text);
  if (said === '') {
    return new UpstreamError('rejected', `${label}: ${what} was refused without a reason`, { retryable: false });
  }
  if (DENIED.test(said)) {
    return new UpstreamError('forbidden', `${label}: ${what} was refused for want of a privilege (${said})`, {
      retryable: false,
      detail: said,
    });
  }
  // WHM answers an unknown function with result 0: the endpoint is not the WHM we speak to.
  if (/unknown app|unknown function|requested for this version/i.test(said)) {
    return new UpstreamError('protocol', `${label}: ${what}: the server does not know this call (${said})`, {
      retryable: false,
    });
  }
  const reason = recognise(said, area);
  // "An internal error occurred … Try again": the server says itself that a retry may succeed.
  const transient = reason === undefined && /try again|temporar(il)?y|internal error|locked by another/i.test(said);
  return new UpstreamError('rejected', `${label}: ${what} was refused (${said})`, {
    retryable: transient,
    detail: said,
    ...(reason === undefined ? {} : { reason }),
  });
}

/** `Retry-After` in seconds (a number of seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfter(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A plain-text error body longer than this is not quoted (it is a page, not a sentence). */
const MAX_PLAIN = 200;

/**
 * The panel's words in an error body: one of cPanel's JSON shapes, or a short plain-text
 * sentence (cpsrvd's "Token authentication allows access to …"); never an HTML page.
 */
function bodyText(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const plain = clean(text);
    return plain !== '' && plain.length <= MAX_PLAIN && !/[<>]/.test(plain) ? plain : undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const { metadata, errors, error, reason } = body as Record<string, unknown>;
  if (typeof metadata === 'object' && metadata !== null) {
    const said = (metadata as Record<string, unknown>).reason;
    if (typeof said === 'string' && clean(said)) return clean(said);
  }
  if (Array.isArray(errors)) {
    const joined = clean(errors.filter((e): e is string => typeof e === 'string').join(' '));
    if (joined) return joined;
  }
  for (const value of [error, reason]) if (typeof value === 'string' && clean(value)) return clean(value);
  return undefined;
}

/** A non-2xx answer of cpsrvd (or of a proxy in front of it) as an UpstreamError. */
export function classify(
  status: number,
  statusText: string,
  text: string,
  headers: IncomingHttpHeaders,
  label: string,
): UpstreamError {
  const panel = bodyText(text);
  const said = panel ?? (clean(statusText) || `HTTP ${status}`);
  const fail = (kind: UpstreamErrorKind, message: string, extra: { retryable?: boolean; retryAfterSeconds?: number }) =>
    new UpstreamError(kind, `${label}: ${message}`, { status, ...extra });

  // Token authentication answers refusals with 401/403, never a login page (§3.1).
  if (status === 401) return fail('auth', `the API token was refused (${said})`, { retryable: false });
  if (status === 403) return fail('auth', `the API token may not do this (${said})`, { retryable: false });
  if (status >= 300 && status < 400) {
    // cpsrvd redirects plain-HTTP ports to SSL, and a proxy may send a login page.
    return fail('protocol', `answered a redirect (${status}); is the endpoint WHM's https URL (port 2087)?`, {
      retryable: false,
    });
  }
  if (status === 404 || status === 405) {
    return fail('protocol', `answered ${status} (${said}); is the endpoint WHM's URL?`, { retryable: false });
  }
  if (status === 408) return fail('timeout', `timed out (${said})`, { retryable: true });
  if (status === 429) {
    const seconds = retryAfter(headers);
    return fail('rate_limited', `asks us to slow down (${said})`, {
      ...(seconds === undefined ? {} : { retryAfterSeconds: seconds }),
    });
  }
  if (status >= 400 && status < 500)
    return fail('rejected', `refused the request (${status} ${said})`, { retryable: false });
  // 500: the API subprocess died; 503: cPanel is being upgraded (§3.2); a proxy's 502/504.
  return fail('unreachable', `failed (${status} ${said})`, { retryable: true });
}

/** Replace every occurrence of the secrets (the token, passwords sent) in an error's texts. */
export function redact(error: UpstreamError, secrets: string[]): UpstreamError {
  const present = secrets.filter((s) => s !== '' && (error.message.includes(s) || error.detail?.includes(s)));
  // Longest first, so a secret containing another is replaced whole.
  present.sort((a, b) => b.length - a.length);
  if (present.length === 0) return error;
  const scrub = (text: string) => present.reduce((t, s) => t.split(s).join('***'), text);
  return new UpstreamError(error.kind, scrub(error.message), {
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    ...(error.detail === undefined ? {} : { detail: scrub(error.detail) }),
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    ...(error.fields === undefined ? {} : { fields: error.fields }),
  });
}
