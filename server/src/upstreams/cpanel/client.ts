// WHM API 1 as a client sees it (upstreams.md §3.1–§3.2): `{endpoint}/json-api/<fn>?api.version=1`
// with `Authorization: whm <user>:<token>`, parameters as strings (query for reads, a form body
// for writes, so passwords never sit in a URL), and the `{metadata: {result, reason}, data}`
// envelope. Everything inside an account goes through WHM's `uapi_cpanel` proxy, whose answer
// carries the UAPI result `{status, data, errors, …}` in `data.uapi`. Refusals and failures are
// mapped by ./errors.ts; transport (keep-alive, deadlines, size cap, TLS) is ../http.ts.

import { nodeHttpClient } from '../driver-config.ts';
import { UpstreamError } from '../errors.ts';
import type { HttpClient } from '../http.ts';
import { type CpanelConfig, labelOf, type ResolvedConfig, resolveConfig } from './config.ts';
import { type Area, classify, redact, refusal } from './errors.ts';

export type Params = Record<string, string | number | boolean | undefined>;

export interface WhmCallOptions {
  /** POST with a form body (anything that changes state or carries a password); default GET. */
  write?: boolean;
  /** The call runs account scripts on the server: the longer deadline. */
  slow?: boolean;
  /** What a refusal is about (how a name problem is read). */
  area?: Area;
}

/** Largest JSON answer read (a zone or a long account list). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Parameters whose values never appear in an error (cPanel does not echo them; this is belt and braces). */
const SECRET_PARAM = /pass/i;
/** Shorter values are not scrubbed from texts: they would cut words apart and say nothing. */
const MIN_SCRUBBED = 6;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class CpanelClient {
  readonly config: ResolvedConfig;
  /** Names the server in every message: `cPanel server host.example.in:2087`. */
  readonly label: string;
  readonly #problem: UpstreamError | null;
  readonly #http: HttpClient;
  readonly #slowHttp: HttpClient;

  constructor(config: CpanelConfig) {
    const { resolved, problem } = resolveConfig(config);
    this.config = resolved;
    this.#problem = problem;
    this.label = labelOf(config);
    this.#http = nodeHttpClient(config, this.label, {
      timeoutMs: resolved.requestTimeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
    this.#slowHttp = nodeHttpClient(config, this.label, {
      timeoutMs: resolved.slowTimeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
  }

  /** Throws the configuration's problem, if it has one (every call starts here). */
  check(): void {
    if (this.#problem) throw this.#problem;
  }

  /** Run a call; whatever it throws becomes an UpstreamError without the token in it. */
  async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      this.check();
      return await run();
    } catch (error) {
      if (error instanceof UpstreamError) throw redact(error, [this.config.apiToken]);
      // Not a network failure (those are UpstreamError already): e.g. a header Node refuses. Only
      // the error's name is kept: its message could quote the request.
      throw new UpstreamError('protocol', `${this.label}: the request could not be made (${(error as Error).name})`, {
        retryable: false,
      });
    }
  }

  /**
   * One WHM API 1 call: its `data` when `metadata.result` is 1 (null when absent). A result of 0
   * is a refusal (./errors.ts `refusal`).
   */
  async whm(fn: string, params: Params = {}, options: WhmCallOptions = {}): Promise<unknown> {
    const secrets = [this.config.apiToken, ...secretsOf(params)];
    try {
      return await this.#whm(fn, params, options);
    } catch (error) {
      throw error instanceof UpstreamError ? redact(error, secrets) : error;
    }
  }

  /** One UAPI call as `user` through WHM's proxy: the UAPI `data` when its `status` is 1. */
  async uapi(
    user: string,
    module: string,
    fn: string,
    params: Params = {},
    options: WhmCallOptions = {},
  ): Promise<unknown> {
    const what = `${module}::${fn} for ${user}`;
    const outer = await this.whm(
      'uapi_cpanel',
      { 'cpanel.user': user, 'cpanel.module': module, 'cpanel.function': fn, ...params },
      { ...options, area: options.area ?? 'other' },
    );
    const result = isObject(outer) ? outer.uapi : undefined;
    if (!isObject(result) || !('status' in result)) throw this.garbled(`the UAPI result of ${what}`);
    if (Number(result.status) !== 1) {
      const errors = Array.isArray(result.errors)
        ? result.errors.filter((e): e is string => typeof e === 'string')
        : [];
      const error = refusal(this.label, what, errors.join(' '), options.area ?? 'other');
      throw redact(error, secretsOf(params));
    }
    return result.data ?? null;
  }

  garbled(what: string): UpstreamError {
    return new UpstreamError('protocol', `${this.label}: answered something other than ${what}`, { retryable: false });
  }

  async #whm(fn: string, params: Params, options: WhmCallOptions): Promise<unknown> {
    const url = new URL(`${this.config.base}/json-api/${encodeURIComponent(fn)}`);
    url.searchParams.set('api.version', '1');
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined) continue;
      form.append(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
    }
    const headers: Record<string, string> = {
      authorization: `whm ${this.config.username}:${this.config.apiToken}`,
      accept: 'application/json',
    };
    let body: string | undefined;
    if (options.write) {
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else {
      for (const [key, value] of form) url.searchParams.append(key, value);
    }
    const http = options.slow ? this.#slowHttp : this.#http;
    const res = await http.send({
      method: options.write ? 'POST' : 'GET',
      url,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    if (res.status < 200 || res.status >= 300)
      throw classify(res.status, res.reason, res.text, res.headers, this.label);
    let envelope: unknown;
    try {
      envelope = JSON.parse(res.text);
    } catch {
      // A 200 that is not the API: a login page, a proxy's page, an HTML error.
      throw new UpstreamError('protocol', `${this.label}: answered ${fn} with a body that is not JSON`, {
        status: res.status,
        retryable: false,
      });
    }
    if (!isObject(envelope) || !isObject(envelope.metadata) || !('result' in envelope.metadata)) {
      throw this.garbled(`a WHM API 1 answer to ${fn} (no metadata.result)`);
    }
    const { result, reason } = envelope.metadata;
    if (Number(result) !== 1) {
      throw refusal(this.label, `WHM ${fn}`, typeof reason === 'string' ? reason : '', options.area ?? 'other');
    }
    return envelope.data ?? null;
  }

  close(): void {
    this.#http.close();
    this.#slowHttp.close();
  }
}

function secretsOf(params: Params): string[] {
  return Object.entries(params)
    .filter(([key, value]) => SECRET_PARAM.test(key) && typeof value === 'string' && value.length >= MIN_SCRUBBED)
    .map(([, value]) => String(value));
}
