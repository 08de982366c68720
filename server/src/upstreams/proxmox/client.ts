// The Proxmox VE API as a client sees it: the API-token header, form-encoded bodies with 0/1
// booleans, the `{data}` envelope, errors from the JSON `message` (newer nodes) or else the
// reason phrase (older ones). Transport (keep-alive, deadlines, size cap, TLS) is ../http.ts.

import { nodeHttpClient } from '../driver-config.ts';
import { UpstreamError } from '../errors.ts';
import type { HttpClient } from '../http.ts';
import { type ProxmoxConfig, type ResolvedConfig, resolveConfig } from './config.ts';
import { classify, redact } from './errors.ts';

export type Params = Record<string, string | number | boolean | undefined>;
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Form encoding as PVE expects it: booleans 0/1, undefined left out. */
export function encodeParams(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.set(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  return form;
}

interface Envelope {
  data?: unknown;
  message?: unknown;
  errors?: unknown;
}

export class ProxmoxClient {
  readonly config: ResolvedConfig;
  /** Names the node in every message: `Proxmox node pve1`. */
  readonly label: string;
  readonly #problem: UpstreamError | null;
  readonly #http: HttpClient;

  constructor(config: ProxmoxConfig) {
    const { resolved, problem } = resolveConfig(config);
    this.config = resolved;
    this.#problem = problem;
    this.label = `Proxmox node ${config.node}`;
    this.#http = nodeHttpClient(config, this.label, { timeoutMs: resolved.requestTimeoutMs });
  }

  /** Call one path (below /api2/json); resolves with `data`. */
  async call<T>(method: Method, path: string, params: Params = {}): Promise<T> {
    try {
      return await this.#call<T>(method, path, params);
    } catch (error) {
      if (error instanceof UpstreamError) throw redact(error, this.config.tokenSecret);
      // Not a network failure (those are UpstreamError already): e.g. a header Node refuses. Only
      // the error's name is kept: its message or cause could quote the request.
      throw new UpstreamError('protocol', `${this.label}: the request could not be made (${(error as Error).name})`, {
        retryable: false,
      });
    }
  }

  async #call<T>(method: Method, path: string, params: Params): Promise<T> {
    if (this.#problem) throw this.#problem;
    const url = new URL(`${this.config.base}${path}`);
    const form = encodeParams(params);
    const headers: Record<string, string> = {
      authorization: `PVEAPIToken=${this.config.tokenId}=${this.config.tokenSecret}`,
    };
    let body: string | undefined;
    if (method === 'GET' || method === 'DELETE') {
      for (const [key, value] of form) url.searchParams.set(key, value);
    } else {
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await this.#http.send({ method, url, headers, ...(body === undefined ? {} : { body }) });
    let parsed: Envelope | null = null;
    try {
      const value: unknown = res.text === '' ? null : JSON.parse(res.text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) parsed = value as Envelope;
    } catch {
      parsed = null;
    }
    if (res.status !== 200) {
      const message = typeof parsed?.message === 'string' && parsed.message.trim() ? parsed.message : res.reason;
      const errors =
        typeof parsed?.errors === 'object' && parsed.errors !== null
          ? Object.entries(parsed.errors as Record<string, unknown>).map(([k, v]) => `${k}: ${String(v).trim()}`)
          : [];
      throw classify(res.status, errors.length > 0 ? `${message.trim()} (${errors.join('; ')})` : message, this.label);
    }
    if (parsed === null || !('data' in parsed)) {
      // A 200 that is not the API (a login page, a proxy's error page): garbled, maybe passing.
      throw new UpstreamError('protocol', `${this.label}: answered 200 without a JSON {data} envelope`, {
        status: 200,
        retryable: true,
      });
    }
    return parsed.data as T;
  }

  close(): void {
    this.#http.close();
  }
}
