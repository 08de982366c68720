// One error type for every failure a caller can meet: an API answer that is not a success (the
// token envelope, CONTRACT §2), or no answer at all (status 0: the server could not be reached,
// or did not answer within the timeout). Scripts branch on `code`, people read `message`, and
// support finds the request by `request_id`.

export interface HostplaneErrorFields {
  /** The HTTP status; 0 when no answer came. */
  status: number;
  /** A stable snake_case code: the API's `error`, or `unreachable` / `timeout` / `http_<status>`. */
  code: string;
  message: string;
  /** The API's request id (body or X-Request-Id), null when no answer came. */
  request_id: string | null;
  details?: Record<string, unknown> | undefined;
}

export class HostplaneError extends Error implements HostplaneErrorFields {
  readonly status: number;
  readonly code: string;
  readonly request_id: string | null;
  readonly details: Record<string, unknown> | undefined;

  constructor(fields: HostplaneErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options);
    this.name = 'HostplaneError';
    this.status = fields.status;
    this.code = fields.code;
    this.request_id = fields.request_id;
    this.details = fields.details;
  }

  /** The fields as plain data (what `-o json` prints). */
  toJSON(): HostplaneErrorFields {
    return {
      status: this.status,
      code: this.code,
      message: this.message,
      request_id: this.request_id,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }

  /**
   * From a failed answer and its parsed body: the token envelope
   * `{ok: false, error, status, message, request_id, details?}`; the session envelope
   * (`code`, `message`) when a session route was called; else the bare HTTP status.
   */
  static fromResponse(response: Response, body: unknown): HostplaneError {
    const b = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    const header = response.headers.get('x-request-id');
    const code =
      typeof b.error === 'string' ? b.error : typeof b.code === 'string' ? b.code : `http_${response.status}`;
    const message =
      typeof b.message === 'string' && b.message !== ''
        ? b.message
        : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    const details =
      b.details !== null && typeof b.details === 'object' ? (b.details as Record<string, unknown>) : undefined;
    return new HostplaneError({
      status: response.status,
      code,
      message,
      request_id: typeof b.request_id === 'string' ? b.request_id : header,
      details,
    });
  }
}
