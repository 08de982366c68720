// The staff console's one way to the server: openapi-fetch over the SDK's types, like the client
// panel's lib/api.ts, but with the staff surface's own CSRF token (from auth/csrf, login, the
// second factor and me), kept in memory only. The STAFFSESSID cookie goes with every request.

import type { paths } from '@hostplane/sdk/schema';
import createClient from 'openapi-fetch';
import { ApiError } from '../lib/api.ts';

export { ApiError };

let csrfToken: string | null = null;

export function setStaffCsrf(token: string | null | undefined): void {
  if (token) csrfToken = token;
}

async function fetchCsrf(): Promise<void> {
  try {
    const res = await fetch('/api/v1/staff/auth/csrf', { credentials: 'same-origin' });
    if (res.ok) setStaffCsrf(((await res.json()) as { csrf_token?: string }).csrf_token);
  } catch {
    // The form's own request fails the same way and says so.
  }
}

export const staffApi = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });

staffApi.use({
  async onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      if (csrfToken === null) await fetchCsrf();
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

/** The payload of a success (its csrf_token kept), or an ApiError with the refusal. */
export async function call<T>(request: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await request;
  } catch {
    throw new ApiError(
      0,
      { message: 'The server could not be reached. Check your connection and try again.', code: 'network_error' },
      null,
    );
  }
  const { data, error, response } = result;
  if (!response.ok || data === undefined)
    throw new ApiError(response.status, error, response.headers.get('retry-after'));
  const token = (data as { csrf_token?: unknown }).csrf_token;
  if (typeof token === 'string') setStaffCsrf(token);
  return data;
}

/** A refusal because of the member's role (or a session still short of its second factor). */
export function isForbidden(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403;
}
