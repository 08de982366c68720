// The one error every upstream driver throws (Proxmox VE, Pterodactyl, cPanel/WHM, Redfish, and
// whatever comes next): what went wrong, in terms the core can act on (retry, refuse, report),
// never a driver's own exception and never a message carrying credentials.

export type UpstreamErrorKind =
  /** Refused, reset, cut mid-answer, unknown host, or a 5xx from the node or a proxy in front of it. */
  | 'unreachable'
  /** No answer within the request deadline, or a task still running at the task deadline. */
  | 'timeout'
  /** The credentials are wrong (401) or lack a permission (403 on a hypervisor). */
  | 'auth'
  /** A panel refused the action for want of a permission (a game panel's 403). */
  | 'forbidden'
  /** The node asks us to slow down (429); `retryAfterSeconds` says for how long. */
  | 'rate_limited'
  /** The VM (or the configured node) does not exist, or the vmid now belongs to another VM. */
  | 'not_found'
  /** The VM's state forbids it now (locked, running, id taken, config changed meanwhile). */
  | 'conflict'
  /** The node refused the request itself (bad parameters) or the task it ran failed. */
  | 'rejected'
  /** The answer is not the API we speak (not JSON, no envelope, redirect, unknown path, too large). */
  | 'protocol';

/**
 * A failure talking to an upstream. `kind` says what happened; `retryable` whether the same call
 * may succeed later without anyone changing anything (the node was down, slow, locked, or
 * answered 5xx; a task failed for an unknown reason) as opposed to a request the node will keep
 * refusing (bad credentials, bad parameters, an id that is taken, a VM that is gone).
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly kind: UpstreamErrorKind;
  readonly retryable: boolean;
  /** The HTTP status the node answered, when there was one. */
  readonly status: number | undefined;
  /** A refusal of fields (a panel's 422): field → the panel's message. */
  readonly fields: Record<string, string> | undefined;
  /** How long the node asked us to wait (429 Retry-After), in seconds. */
  readonly retryAfterSeconds: number | undefined;
  /** The node's own words for what it refused, safe to show a client (a panel's 400 text). */
  readonly detail: string | undefined;
  /** What the refusal was, where the driver recognised it (a web panel: `weak_password`, `bad_db_name`, …). */
  readonly reason: string | undefined;
  constructor(
    kind: UpstreamErrorKind,
    message: string,
    options: {
      retryable?: boolean;
      status?: number;
      cause?: unknown;
      fields?: Record<string, string>;
      retryAfterSeconds?: number;
      detail?: string;
      reason?: string;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.retryable = options.retryable ?? (kind === 'unreachable' || kind === 'timeout' || kind === 'rate_limited');
    this.status = options.status;
    this.fields = options.fields;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.detail = options.detail;
    this.reason = options.reason;
  }
}
