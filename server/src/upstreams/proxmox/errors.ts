// How Proxmox VE failures become UpstreamError. PVE says what went wrong mostly in text (the
// reason phrase, the JSON `message`, a task's exit status), so the kind and whether a retry can
// help are read from the status first, then from the text (upstreams.md §2.2, §2.3).

import { UpstreamError, type UpstreamErrorKind } from '../errors.ts';

type Rule = [RegExp, UpstreamErrorKind, boolean];

/** Texts of handler and task failures, first match wins: [pattern, kind, retryable]. */
const TEXT_RULES: Rule[] = [
  [/^Configuration file .* does not exist|^VM \d+ does not exist/i, 'not_found', false],
  [/hostname lookup .* failed|no such cluster node/i, 'not_found', false],
  // Locks and optimistic concurrency clear up by themselves.
  [/is locked|can't lock file|got timeout|detected modified configuration/i, 'conflict', true],
  [/already exists/i, 'conflict', false],
  [/already running|not running|is running|is paused/i, 'conflict', false],
  // Anything else missing (a storage, a bridge) is a setup problem, not a vanished VM.
  [/does not exist|no such/i, 'rejected', false],
  [/cannot|can't|not supported|not allowed|not implemented|permission/i, 'rejected', false],
];

function byText(text: string): Rule | undefined {
  return TEXT_RULES.find(([pattern]) => pattern.test(text));
}

/** A non-200 answer: `text` is the JSON `message` or the reason phrase, plus any parameter errors. */
export function classify(status: number, text: string, label: string): UpstreamError {
  const detail = text.trim().replace(/\s+/g, ' ') || `HTTP ${status}`;
  const fail = (kind: UpstreamErrorKind, message: string, retryable: boolean) =>
    new UpstreamError(kind, `${label}: ${message}`, { status, retryable });
  if (status === 401) return fail('auth', `the API token was refused (${detail})`, false);
  if (status === 403) return fail('auth', `the API token lacks a permission (${detail})`, false);
  if (status === 400 || status === 413 || status === 415 || status === 422) {
    return fail('rejected', `the request was refused (${detail})`, false);
  }
  if ((status >= 300 && status < 400) || status === 404 || status === 405 || status === 501) {
    return fail('protocol', `answered ${status} (${detail}); is the endpoint a Proxmox VE API?`, false);
  }
  if (status === 408 || status === 596) return fail('timeout', `timed out (${detail})`, true);
  if (status === 500) {
    const rule = byText(detail);
    if (rule) return fail(rule[1], detail, rule[2]);
  }
  // 500 "internal error", 502/503/504 from a proxy, 595 (cluster node unreachable), …
  return fail('unreachable', `failed (${status} ${detail})`, true);
}

/** A task that ended with an exit status other than OK or WARNINGS. */
export function taskFailure(type: string, exitstatus: string, label: string): UpstreamError {
  const rule = byText(exitstatus);
  // A task that failed for a reason we do not recognise (storage hiccup, a crash) may well
  // succeed on a later attempt; the job system bounds the attempts.
  return new UpstreamError(rule?.[1] ?? 'rejected', `${label}: task ${type} failed: ${exitstatus}`, {
    retryable: rule?.[2] ?? true,
  });
}

/** Replace every occurrence of the secret, wherever node text might have echoed it. */
export function redact(error: UpstreamError, secret: string): UpstreamError {
  if (secret === '' || !error.message.includes(secret)) return error;
  return new UpstreamError(error.kind, error.message.split(secret).join('***'), {
    retryable: error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
  });
}
