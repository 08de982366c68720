// The closed catalogue of error codes (CONTRACT §2). Core code throws AppError; each HTTP
// surface renders it in its own envelope in one error handler, and the CLI prints it.
// A code's HTTP status lives here so every surface agrees on it.

const CATALOGUE = {
  // request shape
  validation_failed: { status: 422, message: 'Some fields are invalid.' },
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  bad_request: { status: 400, message: 'The request is malformed.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'This content type is not accepted here.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'Method not allowed.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  // authentication and authorisation
  unauthenticated: { status: 401, message: 'Sign in first.' },
  invalid_token: { status: 401, message: 'The API token is missing, malformed, unknown or revoked.' },
  token_expired: { status: 401, message: 'The API token has expired.' },
  invalid_credentials: { status: 401, message: 'The identifier or password is wrong.' },
  two_factor_required: {
    status: 401,
    message: 'Finish signing in with your authenticator app, a recovery code or a passkey (POST auth/2fa/).',
  },
  csrf_failed: { status: 403, message: 'The CSRF token is missing or wrong.' },
  insufficient_scope: { status: 403, message: 'The API token lacks the scope this route needs.' },
  ip_not_allowed: { status: 403, message: 'This address is not in the API token allow-list.' },
  // the staff console (CONTRACT §14)
  forbidden_role: { status: 403, message: 'Your staff role may not use this.' },
  second_factor_required: {
    status: 403,
    message: 'Finish signing in: enrol an authenticator app, or enter its code (POST /api/v1/staff/auth/totp).',
  },
  email_unverified: { status: 403, message: 'Verify your e-mail address before signing in.' },
  account_suspended: { status: 403, message: 'This account is suspended.' },
  deletion_blocked: {
    status: 409,
    message: 'The account cannot be deleted yet; details.reasons says what to settle first.',
  },
  rate_limited: { status: 429, message: 'Too many requests. Try again later.' },
  locked_out: { status: 429, message: 'Too many failed attempts. Try again later.' },
  // ordering and billing
  domain_required: { status: 422, message: 'A domain is required for this plan.' },
  bad_domain: { status: 422, message: 'The domain is not valid.' },
  domain_taken: { status: 422, message: 'The domain is already hosted by another account.' },
  insufficient_funds: { status: 422, message: 'The wallet balance does not cover the price.' },
  idempotency_conflict: { status: 409, message: 'This idempotency key was used with a different request.' },
  idempotency_in_progress: { status: 409, message: 'A request with this idempotency key is still running.' },
  conflict: { status: 409, message: 'This changed in the meantime; reload it and try again.' },
  // services
  not_owner: { status: 404, message: 'Not found.' },
  not_renewable: { status: 409, message: 'This service cannot be renewed.' },
  duplicate_request: { status: 409, message: 'An identical request is already pending.' },
  bad_signal: { status: 422, message: 'Unknown power signal.' },
  confirmation_mismatch: { status: 422, message: 'The confirmation does not match.' },
  bad_timeframe: { status: 422, message: 'Unknown timeframe.' },
  bad_os: { status: 422, message: 'Unknown OS template.' },
  suspended: { status: 409, message: 'The service is suspended.' },
  reinstall_running: { status: 409, message: 'A reinstall is already running.' },
  locked: { status: 409, message: 'Another job is running on this service.' },
  hypervisor_not_configured: { status: 409, message: 'No hypervisor is configured for this service.' },
  no_vm: { status: 409, message: 'This service has no virtual machine yet.' },
  limit_reached: { status: 409, message: 'A limit of your plan is reached.' },
  not_supported: { status: 422, message: 'This service does not support that.' },
  node_unreachable: { status: 503, message: 'The upstream node did not answer.' },
  // game and web panels
  not_game_service: { status: 422, message: 'This is not a game service.' },
  not_web_service: { status: 422, message: 'This is not a web-hosting service.' },
  no_server: { status: 409, message: 'The game server is still being provisioned.' },
  server_installing: { status: 409, message: 'The game server is installing.' },
  no_panel_user: { status: 409, message: 'The hosting account has no panel user yet.' },
  path_traversal: { status: 400, message: 'The path leaves the server root.' },
  binary_file: { status: 415, message: 'Binary files cannot be edited here.' },
  file_too_large: { status: 413, message: 'The file is too large.' },
  upstream_forbidden: { status: 403, message: 'The node refused this action.' },
  weak_password: { status: 422, message: 'The password is too weak.' },
  bad_db_name: { status: 422, message: 'The database name is not valid.' },
  bad_mailbox: { status: 422, message: 'The mailbox is not valid.' },
  bad_signature: { status: 400, message: 'The payment signature does not match.' },
  // the server itself
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable.' },
  insufficient_storage: { status: 507, message: 'The server is short of disk space for uploads; try again later.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type StaticErrorCode = keyof typeof CATALOGUE;
/** Codes with a variable part: `unavailable:<reason>` (409) and `bad_config_<field>` (422). */
export type ErrorCode = StaticErrorCode | `unavailable:${string}` | `bad_config_${string}`;

export interface AppErrorOptions {
  message?: string;
  /** Per-field reasons, rendered as `errors` on the session surface and `details.fields` on token surfaces. */
  fields?: Record<string, string>;
  /** Extra machine-readable facts (e.g. `required` for insufficient_scope). Never secrets. */
  details?: Record<string, unknown>;
  /** Seconds, for 429 and 503 answers. */
  retryAfter?: number;
  /** The limit that refused the request, for the RateLimit-* headers. */
  rateLimit?: { limit: number; remaining: number; reset: number };
  /**
   * The refusal tells about other records, not about what was sent (a taken e-mail or username,
   * a payment reference already used): limits that give back refusals for content keep counting
   * it, so probing for existing records is not free.
   */
  existence?: boolean;
  /** A status other than the catalogue's, where a surface says so (402 insufficient_funds on deploy). */
  status?: number;
  cause?: unknown;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: Record<string, string> | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly rateLimit: AppErrorOptions['rateLimit'];
  /** See AppErrorOptions.existence. */
  readonly existence: boolean;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const known = describe(code);
    super(options.message ?? known.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? known.status;
    this.fields = options.fields;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.rateLimit = options.rateLimit;
    this.existence = options.existence ?? false;
  }

  /** 422 validation_failed with every failing field. */
  static fields(fields: Record<string, string>, message?: string, options: { existence?: boolean } = {}): AppError {
    return new AppError('validation_failed', {
      fields,
      message: message ?? CATALOGUE.validation_failed.message,
      ...options,
    });
  }

  static unavailable(reason: string, message?: string): AppError {
    return new AppError(`unavailable:${reason}`, {
      message: message ?? `Not available: ${reason.replace(/_/g, ' ')}.`,
    });
  }
}

export function describe(code: ErrorCode): { status: number; message: string } {
  if (code in CATALOGUE) return CATALOGUE[code as StaticErrorCode];
  if (code.startsWith('unavailable:')) return { status: 409, message: 'Not available.' };
  if (code.startsWith('bad_config_')) return { status: 422, message: 'The configuration is not valid.' };
  return CATALOGUE.internal_error;
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
