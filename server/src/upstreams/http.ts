// HTTP for upstream drivers: node:http/https with keep-alive, a deadline per request, a cap on
// response size, no redirects followed, optional CA pinning or (explicitly) no TLS checks.
// Failures become UpstreamError: unreachable (refused, reset, cut), timeout, protocol.
//
// `send` takes a body held in memory (string or bytes) and may stop reading an answer early
// (`readLimit`, for callers that only want the first bytes of a file). `stream` sends a body as
// it is produced (an upload of any size, memory bounded by the socket's buffer); its deadline
// restarts whenever bytes move, so a large upload is not cut by the per-request deadline.
//
// Every request of a client built for a node (`metricsNode`) first takes a token of that node's
// budget (budgets.ts): the one place every driver's calls pass, whatever the product.

import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { failureOfStatus, recordUpstreamCall, type UpstreamFailure } from '../metrics/metrics.ts';
import { type NodeBudgets, nodeBudgets } from './budgets.ts';
import { UpstreamError } from './errors.ts';

export interface TlsOptions {
  /** Skip certificate checks (self-signed node certificates). Prefer `ca`. */
  insecure?: boolean;
  /** PEM of the CA (or the node certificate) to trust. */
  ca?: string;
}

export interface HttpResponse {
  status: number;
  reason: string;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  text: string;
  /** The body's bytes (at most `readLimit` of them when the request set one). */
  bytes: Buffer;
  /** The answer was longer than `readLimit`; reading stopped there. */
  truncated: boolean;
}

export interface HttpRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
  /**
   * Read at most this many bytes of a successful (2xx) answer and then stop (the connection is
   * dropped), with `truncated` set. It replaces the client's size cap for that answer (the
   * caller chose how much it holds). Error answers are read whole, up to the cap.
   */
  readLimit?: number;
}

export interface HttpStreamRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** Produced lazily; each chunk is written when the socket takes it (backpressure). */
  body: AsyncIterable<Buffer | string>;
  /** Content-Length when known; null sends the body chunked. */
  length: number | null;
}

export interface HttpClient {
  send(request: HttpRequest): Promise<HttpResponse>;
  /**
   * Send a streamed body. The deadline is one of inactivity: it restarts whenever a chunk is
   * written or answer bytes arrive. A body that fails (its iterator throws) fails the request
   * with `rejected`, not a network kind.
   */
  stream(request: HttpStreamRequest): Promise<HttpResponse>;
  close(): void;
}

export interface HttpClientOptions {
  tls?: TlsOptions;
  timeoutMs: number;
  maxBytes?: number;
  label: string;
  /** The `node` label of this client's upstream-call metrics (our node name); the endpoint's host:port when absent. */
  metricsNode?: string | undefined;
  /** Where the node's call budget is taken from (default: this process's, by node name). */
  budgets?: NodeBudgets;
}

/** What every request of one client shares: its deadline and cap, its budget, its agents, its metrics. */
interface Transport {
  label: string;
  timeoutMs: number;
  maxBytes: number;
  /** A token of the node's budget (waits, or throws rate_limited); a refused call is never sent nor counted. */
  budget(): Promise<void>;
  /** A request on the client's keep-alive agent for the URL's scheme. */
  open(method: string, url: URL, headers: Record<string, string>): ClientRequest;
  /** Count a finished call in the metrics, by the node's name (or host:port): one series per configured node. */
  measured(url: URL, started: number, error: UpstreamError | null, response?: HttpResponse): void;
}

type Done = (error: UpstreamError | null, response?: HttpResponse) => void;

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const budgets = options.budgets ?? nodeBudgets;
  const http = new HttpAgent({ keepAlive: true, maxSockets: 16 });
  const https = new HttpsAgent({
    keepAlive: true,
    maxSockets: 16,
    ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
    rejectUnauthorized: !options.tls?.insecure,
  });
  const transport: Transport = {
    label: options.label,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes ?? 4 * 1024 * 1024,
    async budget() {
      if (options.metricsNode !== undefined) await budgets.take(options.metricsNode);
    },
    open(method, url, headers) {
      const secure = url.protocol === 'https:';
      return (secure ? httpsRequest : httpRequest)(url, {
        method,
        headers: { accept: 'application/json', ...headers },
        agent: secure ? https : http,
      });
    },
    measured(url, started, error, response) {
      const failure = error !== null ? toFailure(error) : failureOfStatus(response?.status ?? 0);
      recordUpstreamCall(options.metricsNode ?? url.host, (performance.now() - started) / 1000, failure);
    },
  };
  return {
    send: (request) => send(transport, request),
    stream: (request) => stream(transport, request),
    close() {
      http.destroy();
      https.destroy();
    },
  };
}

/** One request with a body held in memory, under one deadline. */
async function send(t: Transport, { method, url, headers, body, readLimit }: HttpRequest): Promise<HttpResponse> {
  await t.budget();
  return new Promise((resolve, reject) => {
    let settled = false;
    const started = performance.now();
    const req = t.open(method, url, {
      ...headers,
      ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
    });
    const timer = setTimeout(() => {
      req.destroy(new UpstreamError('timeout', `${t.label} did not answer within ${t.timeoutMs} ms`));
    }, t.timeoutMs);
    const done: Done = (error, response) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      t.measured(url, started, error, response);
      if (error) reject(error);
      else resolve(response as HttpResponse);
    };
    req.on('response', (res) => {
      // Only a successful answer is cut short; an error's body is read whole (up to the cap).
      const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
      const limit = ok && readLimit !== undefined ? readLimit : null;
      collect(t.label, req, res, limit ?? t.maxBytes, limit !== null, () => {}, done);
    });
    req.on('error', (error) => done(toUpstream(error, t.label)));
    req.end(body);
  });
}

/** One request whose body is sent as it is produced, under a deadline of inactivity. */
async function stream(t: Transport, { method, url, headers, body, length }: HttpStreamRequest): Promise<HttpResponse> {
  await t.budget();
  return new Promise((resolve, reject) => {
    let settled = false;
    const started = performance.now();
    let bodyFailure: unknown = null;
    const req = t.open(method, url, {
      ...headers,
      ...(length === null ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
    });
    let timer: NodeJS.Timeout | undefined;
    const progress = () => {
      clearTimeout(timer);
      if (settled) return;
      timer = setTimeout(() => {
        req.destroy(new UpstreamError('timeout', `${t.label} made no progress within ${t.timeoutMs} ms`));
      }, t.timeoutMs);
    };
    const done: Done = (error, response) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      t.measured(url, started, error, response);
      if (error) reject(error);
      else resolve(response as HttpResponse);
    };
    progress();
    req.on('response', (res) => collect(t.label, req, res, t.maxBytes, false, progress, done));
    req.on('error', (error) => {
      if (bodyFailure !== null) {
        const name = bodyFailure instanceof Error ? bodyFailure.message : String(bodyFailure);
        done(
          bodyFailure instanceof UpstreamError
            ? bodyFailure
            : new UpstreamError('rejected', `${t.label}: the body being sent failed (${name})`, {
                retryable: false,
              }),
        );
        return;
      }
      done(toUpstream(error, t.label));
    });
    const pump = async () => {
      try {
        for await (const chunk of body) {
          if (req.destroyed) return;
          progress();
          if (!req.write(chunk)) await drained(req);
        }
        if (!req.destroyed) req.end();
      } catch (error) {
        // Either the body failed (it threw) or the request did (drained() rethrows its error,
        // which the request's own error listener reports).
        if (!req.destroyed) {
          bodyFailure = error;
          req.destroy(error instanceof Error ? error : new Error(String(error)));
        }
      }
    };
    void pump();
  });
}

/** Collect an answer up to `limit` bytes: past it, stop (truncate) or fail (the size cap). */
function collect(
  label: string,
  req: ClientRequest,
  res: IncomingMessage,
  limit: number,
  truncate: boolean,
  progress: () => void,
  done: Done,
): void {
  let size = 0;
  const chunks: Buffer[] = [];
  const answer = (truncated: boolean): HttpResponse => {
    const bytes = Buffer.concat(chunks);
    return {
      status: res.statusCode ?? 0,
      reason: res.statusMessage ?? '',
      headers: res.headers,
      text: bytes.toString('utf8'),
      bytes,
      truncated,
    };
  };
  res.on('data', (chunk: Buffer) => {
    progress();
    if (size + chunk.length > limit) {
      if (truncate) {
        chunks.push(chunk.subarray(0, limit - size));
        size = limit;
        done(null, answer(true));
        req.destroy();
        return;
      }
      req.destroy(new UpstreamError('protocol', `${label} sent more than ${limit} bytes`, { retryable: false }));
      return;
    }
    size += chunk.length;
    chunks.push(chunk);
  });
  res.on('end', () => done(null, answer(false)));
  res.on('error', (error) => done(toUpstream(error, label)));
}

/** The request can take more (drain), or it is over (close, error): never waits forever. */
function drained(req: ClientRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: unknown) => {
      req.off('drain', done);
      req.off('close', done);
      req.off('error', done);
      if (error instanceof Error) reject(error);
      else resolve();
    };
    req.on('drain', done);
    req.on('close', done);
    req.on('error', done);
  });
}

function toFailure(error: UpstreamError): UpstreamFailure {
  const { kind } = error;
  return kind === 'timeout' || kind === 'protocol' || kind === 'rejected' ? kind : 'unreachable';
}

function toUpstream(error: unknown, label: string): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (/CERT|SELF_SIGNED|TLS|SSL/.test(code)) {
    return new UpstreamError(
      'protocol',
      `${label}: TLS verification failed (${code}); pin its CA or set tls.insecure`,
      { retryable: false, cause: error },
    );
  }
  // Refused, reset, cut mid-answer ("socket hang up"), unknown host: the node may be back later.
  return new UpstreamError('unreachable', `${label} is unreachable (${code || (error as Error).message})`, {
    cause: error,
  });
}
