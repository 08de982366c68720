// The Proxmox VE API as a client sees it: API-token header, form-encoded bodies with 0/1
// booleans, the `{data}` envelope, errors in the JSON `message` or the reason phrase, and
// UPID tasks polled to completion.

import { createHttpClient, type HttpClient, type TlsOptions } from '../http.ts';
import { UpstreamError } from '../hypervisor.ts';

export interface ProxmoxConfig {
  /** e.g. https://pve1.example.in:8006 */
  endpoint: string;
  /** The PVE node name (e.g. pve1). */
  node: string;
  /** `USER@REALM!TOKENID` */
  tokenId: string;
  tokenSecret: string;
  tls?: TlsOptions;
  /** Storage for cloned disks (default: the template's). */
  storage?: string;
  requestTimeoutMs?: number;
  taskTimeoutMs?: number;
  pollIntervalMs?: number;
}

export type Params = Record<string, string | number | boolean | undefined>;

/** Failures that are business answers from the node, not outages: retrying will not change them. */
const FINAL_500 = [
  /does not exist/,
  /already exists/,
  /not running/,
  /already running/,
  /is running/,
  /cannot/,
  /not supported/,
  /no such/,
];

function encode(params: Params): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.set(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  return form.toString();
}

export function classify(status: number, message: string): UpstreamError {
  const text = message.trim() || `HTTP ${status}`;
  if (status === 401)
    return new UpstreamError('auth', `Proxmox refused the API token: ${text}`, { status, retryable: false });
  if (status === 403)
    return new UpstreamError('auth', `Proxmox denied the operation: ${text}`, { status, retryable: false });
  if (status === 400)
    return new UpstreamError('rejected', `Proxmox rejected the request: ${text}`, { status, retryable: false });
  if (status === 501 || (status >= 300 && status < 400))
    return new UpstreamError('protocol', `Proxmox answered ${status}: ${text}`, { status, retryable: false });
  if (status === 500) {
    if (/does not exist/.test(text)) return new UpstreamError('not_found', text, { status, retryable: false });
    if (/is locked/.test(text)) return new UpstreamError('conflict', text, { status, retryable: true });
    if (/already exists/.test(text)) return new UpstreamError('conflict', text, { status, retryable: false });
    if (FINAL_500.some((re) => re.test(text))) return new UpstreamError('rejected', text, { status, retryable: false });
  }
  return new UpstreamError('unreachable', `Proxmox failed (${status}): ${text}`, { status, retryable: true });
}

export class ProxmoxClient {
  readonly config: ProxmoxConfig;
  readonly #http: HttpClient;
  readonly #base: string;

  constructor(config: ProxmoxConfig) {
    this.config = config;
    this.#base = `${config.endpoint.replace(/\/+$/, '')}/api2/json`;
    this.#http = createHttpClient({
      tls: config.tls,
      timeoutMs: config.requestTimeoutMs ?? 15_000,
      label: `Proxmox node ${config.node}`,
    });
  }

  /** Call one path; resolves with `data`. */
  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, params: Params = {}): Promise<T> {
    const url = new URL(`${this.#base}${path}`);
    const headers: Record<string, string> = {
      authorization: `PVEAPIToken=${this.config.tokenId}=${this.config.tokenSecret}`,
    };
    let body: string | undefined;
    if (method === 'GET' || method === 'DELETE') {
      for (const [key, value] of new URLSearchParams(encode(params))) url.searchParams.set(key, value);
    } else {
      body = encode(params);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await this.#http.send({ method, url, headers, body });
    type Envelope = { data?: unknown; message?: string; errors?: Record<string, string> };
    let parsed = null as Envelope | null;
    try {
      parsed = res.text === '' ? null : (JSON.parse(res.text) as Envelope);
    } catch {
      if (res.status === 200)
        throw new UpstreamError('protocol', 'Proxmox answered with something that is not JSON', { retryable: true });
    }
    if (res.status !== 200) {
      const detail = parsed?.errors
        ? ` (${Object.entries(parsed.errors)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; ')})`
        : '';
      throw classify(res.status, `${parsed?.message ?? res.reason}${detail}`);
    }
    if (parsed === null || !('data' in parsed))
      throw new UpstreamError('protocol', 'Proxmox answered without a data envelope', { retryable: true });
    return parsed.data as T;
  }

  /** Poll a task until it stops; an exit status other than OK/WARNINGS is a failure with its text. */
  async waitTask(upid: string): Promise<void> {
    const deadline = Date.now() + (this.config.taskTimeoutMs ?? 300_000);
    const interval = this.config.pollIntervalMs ?? 250;
    for (;;) {
      const status = await this.call<{ status: string; exitstatus?: string }>(
        'GET',
        `/nodes/${encodeURIComponent(this.config.node)}/tasks/${encodeURIComponent(upid)}/status`,
      );
      if (status.status === 'stopped') {
        const exit = status.exitstatus ?? 'unexpected status';
        if (exit === 'OK' || exit.startsWith('WARNINGS')) return;
        throw classify(500, exit);
      }
      if (Date.now() > deadline)
        throw new UpstreamError(
          'timeout',
          `Proxmox task ${upid.split(':')[5] ?? ''} still running after ${(this.config.taskTimeoutMs ?? 300_000) / 1000} s`,
        );
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }

  /** Call and, when the answer is a UPID, wait for its task. */
  async run(method: 'POST' | 'PUT' | 'DELETE', path: string, params: Params = {}): Promise<void> {
    const data = await this.call<unknown>(method, path, params);
    if (typeof data === 'string' && data.startsWith('UPID:')) await this.waitTask(data);
  }

  close(): void {
    this.#http.close();
  }
}
