// The Pterodactyl panel's two APIs as a client sees them (upstreams.md §1.1–§1.4): Bearer keys
// (the application key below /api/application, the client key below /api/client), JSON bodies,
// `Accept: application/json` always, the `{object, attributes}` / `{object: 'list', data}`
// envelopes with `meta.pagination`, and errors mapped by ./errors.ts. A 429 is waited out and
// retried (at most MAX_RATE_RETRIES times, only when the panel asks for ≤ MAX_RATE_WAIT_S);
// otherwise it is thrown as rate_limited. Transport (keep-alive, deadlines, TLS) is ../http.ts.

import { nodeHttpClient } from '../driver-config.ts';
import { UpstreamError } from '../errors.ts';
import type { HttpClient, HttpResponse } from '../http.ts';
import { labelOf, type PterodactylConfig, type ResolvedConfig, resolveConfig } from './config.ts';
import { classify, redact, retryAfter } from './errors.ts';

export type Api = 'application' | 'client';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Query = Record<string, string | number | undefined>;

/** Retries of a request the panel answered 429 (each after its Retry-After). */
export const MAX_RATE_RETRIES = 2;
/** A Retry-After longer than this is not waited for: rate_limited goes to the caller. */
export const MAX_RATE_WAIT_S = 5;
/** Largest JSON answer read (activity pages with properties can be long). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export interface CallOptions {
  query?: Query;
  /** A JSON body. */
  json?: unknown;
  /** A raw body sent as text/plain (file contents). */
  text?: string | Buffer;
  /** Read at most this many bytes of the answer (the rest is not read). */
  readLimit?: number;
}

/** One paginated list: its items and what `meta.pagination` says (absent → one page of everything). */
export interface Listed<T> {
  items: T[];
  meta: Record<string, unknown>;
  pagination: { total: number; count: number; perPage: number; currentPage: number; totalPages: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class PterodactylClient {
  readonly config: ResolvedConfig;
  /** Names the panel in every message: `Pterodactyl panel panel.example.in`. */
  readonly label: string;
  readonly #problem: UpstreamError | null;
  readonly #http: HttpClient;

  constructor(config: PterodactylConfig) {
    const { resolved, problem } = resolveConfig(config);
    this.config = resolved;
    this.#problem = problem;
    this.label = labelOf(config);
    this.#http = nodeHttpClient(config, this.label, {
      timeoutMs: resolved.requestTimeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
  }

  /** Throws the configuration's problem, if it has one (every call starts here). */
  check(): void {
    if (this.#problem) throw this.#problem;
  }

  /** One call; resolves with the (successful) answer as it came. */
  async raw(api: Api, method: Method, path: string, options: CallOptions = {}): Promise<HttpResponse> {
    return this.guard(() => this.#raw(api, method, path, options));
  }

  /** One call whose answer is JSON (or empty: 204, and null then). */
  async json(api: Api, method: Method, path: string, options: CallOptions = {}): Promise<unknown> {
    const res = await this.raw(api, method, path, options);
    if (res.status === 204 || res.text.trim() === '') return null;
    try {
      return JSON.parse(res.text) as unknown;
    } catch {
      // A 2xx that is not the API (a login page, a proxy's page): garbled, maybe passing.
      throw new UpstreamError('protocol', `${this.label}: answered ${res.status} with a body that is not JSON`, {
        status: res.status,
        retryable: true,
      });
    }
  }

  /** A single resource: its `attributes` (the envelope checked). */
  async item<T>(api: Api, method: Method, path: string, options: CallOptions = {}): Promise<T> {
    return this.attributes<T>(await this.json(api, method, path, options));
  }

  /** A list: the `attributes` of each entry, with meta and pagination. */
  async list<T>(api: Api, path: string, query: Query = {}): Promise<Listed<T>> {
    return this.listed<T>(await this.json(api, 'GET', path, { query }));
  }

  /** Every page of a list (bounded: at most `maxPages` pages). */
  async all<T>(api: Api, path: string, query: Query = {}, maxPages = 50): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; page <= maxPages; page++) {
      const listed = await this.list<T>(api, path, { ...query, page });
      items.push(...listed.items);
      if (page >= listed.pagination.totalPages || listed.items.length === 0) return items;
    }
    return items;
  }

  /** `{object, attributes}` → attributes; anything else is not the API. */
  attributes<T>(body: unknown): T {
    if (!isObject(body) || !isObject(body.attributes)) throw this.garbled('a resource');
    return body.attributes as T;
  }

  /** `{object: 'list', data: [{attributes}], meta?}` → its parts. */
  listed<T>(body: unknown): Listed<T> {
    if (!isObject(body) || !Array.isArray(body.data)) throw this.garbled('a list');
    const items = body.data.map((entry) => this.attributes<T>(entry));
    const meta = isObject(body.meta) ? body.meta : {};
    const page = isObject(meta.pagination) ? meta.pagination : {};
    const num = (value: unknown, fallback: number) =>
      typeof value === 'number' && Number.isFinite(value) ? value : fallback;
    // `links` is `[]` or `{}` depending on Fractal's version: it is never read.
    return {
      items,
      meta,
      pagination: {
        total: num(page.total, items.length),
        count: num(page.count, items.length),
        perPage: num(page.per_page, items.length),
        currentPage: num(page.current_page, 1),
        totalPages: num(page.total_pages, 1),
      },
    };
  }

  garbled(what: string): UpstreamError {
    return new UpstreamError('protocol', `${this.label}: answered something other than ${what}`, { retryable: false });
  }

  /**
   * Send a streamed body to a URL the panel handed out (Wings' signed upload URL): no panel key
   * goes with it, only the token in the URL. The answer is checked like the panel's.
   */
  async upload(
    url: URL,
    headers: Record<string, string>,
    body: AsyncIterable<Buffer>,
    length: number | null,
  ): Promise<void> {
    await this.guard(async () => {
      const res = await this.#http.stream({ method: 'POST', url, headers, body, length });
      if (res.status < 200 || res.status >= 300) {
        throw classify(res.status, res.reason, res.text, res.headers, `${this.label} (its node)`);
      }
    });
  }

  /** Run a call; whatever it throws becomes an UpstreamError without secrets in it. */
  async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      this.check();
      return await run();
    } catch (error) {
      if (error instanceof UpstreamError) throw redact(error, [this.config.appKey, this.config.clientKey]);
      // Not a network failure (those are UpstreamError already): e.g. a header Node refuses. Only
      // the error's name is kept: its message or cause could quote the request.
      throw new UpstreamError('protocol', `${this.label}: the request could not be made (${(error as Error).name})`, {
        retryable: false,
      });
    }
  }

  async #raw(api: Api, method: Method, path: string, options: CallOptions): Promise<HttpResponse> {
    const url = new URL(`${this.config.base}/api/${api}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${api === 'application' ? this.config.appKey : this.config.clientKey}`,
      accept: 'application/json',
    };
    let body: string | Buffer | undefined;
    if (options.text !== undefined) {
      body = options.text;
      headers['content-type'] = 'text/plain';
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    for (let attempt = 0; ; attempt++) {
      const res = await this.#http.send({
        method,
        url,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(options.readLimit === undefined ? {} : { readLimit: options.readLimit }),
      });
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status === 429) {
        // Throttled before the panel acted (the throttle runs first): the same call may be sent again.
        const wait = retryAfter(res.headers);
        if (wait !== undefined && wait <= MAX_RATE_WAIT_S && attempt < MAX_RATE_RETRIES) {
          await sleep(wait * 1000);
          continue;
        }
      }
      // A truncated answer is only ever a file's contents; an error body is short anyway.
      throw classify(res.status, res.reason, res.text, res.headers, this.label);
    }
  }

  close(): void {
    this.#http.close();
  }
}
