// The panel's one way to the server: openapi-fetch over the types generated from the API's own
// OpenAPI document (sdk/src/schema.ts), so a renamed path, parameter or field breaks the build
// of the page that uses it. Only the session surface is used: the HttpOnly SVCSESSID cookie goes
// with every request (same origin), and every mutation carries the X-CSRF-Token header, whose
// value comes from the account (or the anonymous csrf) answer and lives only in memory.

import type { paths } from '@hostplane/sdk/schema';
import createClient from 'openapi-fetch';

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null | undefined): void {
  if (token) csrfToken = token;
}

export function getCsrfToken(): string | null {
  return csrfToken;
}

/** What the session surface answers when it refuses: its envelope, and the HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: Record<string, string>;
  readonly details: Record<string, unknown>;
  readonly retryAfter: number | null;

  constructor(status: number, body: unknown, retryAfter: string | null) {
    const envelope = (body ?? {}) as {
      message?: unknown;
      code?: unknown;
      errors?: unknown;
      details?: unknown;
    };
    super(typeof envelope.message === 'string' ? envelope.message : `The server answered ${status}.`);
    this.status = status;
    this.code = typeof envelope.code === 'string' ? envelope.code : 'unexpected';
    this.errors =
      envelope.errors && typeof envelope.errors === 'object' ? (envelope.errors as Record<string, string>) : {};
    this.details =
      envelope.details && typeof envelope.details === 'object' ? (envelope.details as Record<string, unknown>) : {};
    const seconds = Number(retryAfter);
    this.retryAfter = Number.isFinite(seconds) && seconds > 0 ? seconds : null;
  }

  /** The message for one field (`errors.amount`), if the server named it. */
  field(name: string): string | undefined {
    return this.errors[name];
  }
}

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });

/**
 * The session's token when a form is sent before the page has it: a page just loaded asks for it
 * (the account or the anonymous csrf answer), and an Enter pressed sooner must not go without it.
 */
async function fetchCsrfToken(): Promise<void> {
  try {
    const res = await fetch('/api/v1/client/auth/csrf/', { credentials: 'same-origin' });
    if (res.ok) setCsrfToken(((await res.json()) as { csrf_token?: string }).csrf_token);
  } catch {
    // Unreachable: the form's request fails the same way and says so.
  }
}

api.use({
  async onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      if (csrfToken === null) await fetchCsrfToken();
      if (csrfToken !== null) request.headers.set('X-CSRF-Token', csrfToken);
    }
    return request;
  },
});

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The payload of a success, or an ApiError carrying the refusal (never a raw fetch failure). */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch {
    throw new ApiError(
      0,
      { message: 'The server could not be reached. Check your connection and try again.', code: 'network_error' },
      null,
    );
  }
  const { data, error, response } = result;
  if (!response.ok || data === undefined) {
    throw new ApiError(response.status, error, response.headers.get('retry-after'));
  }
  const token = (data as { csrf_token?: unknown }).csrf_token;
  if (typeof token === 'string') setCsrfToken(token);
  return data;
}

/** A form upload (deposit screenshots, game files): fetch with the CSRF header and progress-free body. */
export async function postForm<T>(path: string, form: FormData): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: csrfToken ? { 'X-CSRF-Token': csrfToken } : {},
      body: form,
    });
  } catch {
    throw new ApiError(
      0,
      { message: 'The server could not be reached. Check your connection and try again.', code: 'network_error' },
      null,
    );
  }
  const body = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) throw new ApiError(response.status, body, response.headers.get('retry-after'));
  return body as T;
}

/**
 * An upload with progress (XMLHttpRequest: fetch has no upload progress). `onProgress` gets
 * 0..1; the promise settles with the JSON answer or an ApiError.
 */
export function uploadWithProgress<T>(
  path: string,
  form: FormData,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.withCredentials = true;
    if (csrfToken) xhr.setRequestHeader('X-CSRF-Token', csrfToken);
    xhr.responseType = 'json';
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response as T);
      else reject(new ApiError(xhr.status, xhr.response, xhr.getResponseHeader('retry-after')));
    };
    xhr.onerror = () =>
      reject(
        new ApiError(
          0,
          { message: 'The upload was interrupted. Check your connection and try again.', code: 'network_error' },
          null,
        ),
      );
    xhr.onabort = () => reject(new ApiError(0, { message: 'The upload was cancelled.', code: 'aborted' }, null));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(form);
  });
}
