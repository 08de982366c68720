// HTTP for upstream drivers: node:http/https with keep-alive, a deadline per request, a cap on
// response size, no redirects followed, optional CA pinning or (explicitly) no TLS checks.
// Failures become UpstreamError: unreachable (refused, reset, cut), timeout, protocol.

import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { UpstreamError } from './hypervisor.ts';

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
  text: string;
}

export interface HttpClient {
  send(request: { method: string; url: URL; headers: Record<string, string>; body?: string }): Promise<HttpResponse>;
  close(): void;
}

export function createHttpClient(options: {
  tls?: TlsOptions;
  timeoutMs: number;
  maxBytes?: number;
  label: string;
}): HttpClient {
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  const http = new HttpAgent({ keepAlive: true, maxSockets: 16 });
  const https = new HttpsAgent({
    keepAlive: true,
    maxSockets: 16,
    ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
    rejectUnauthorized: !options.tls?.insecure,
  });

  return {
    send({ method, url, headers, body }) {
      return new Promise((resolve, reject) => {
        const secure = url.protocol === 'https:';
        const req = (secure ? httpsRequest : httpRequest)(url, {
          method,
          headers: {
            accept: 'application/json',
            ...headers,
            ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          },
          agent: secure ? https : http,
        });
        const timer = setTimeout(() => {
          req.destroy(new UpstreamError('timeout', `${options.label} did not answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        req.on('response', (res) => {
          let size = 0;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              req.destroy(
                new UpstreamError('protocol', `${options.label} sent more than ${maxBytes} bytes`, {
                  retryable: false,
                }),
              );
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: res.statusCode ?? 0,
              reason: res.statusMessage ?? '',
              headers: res.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', (error) => {
            clearTimeout(timer);
            reject(toUpstream(error, options.label));
          });
        });
        req.on('error', (error) => {
          clearTimeout(timer);
          reject(toUpstream(error, options.label));
        });
        req.end(body);
      });
    },
    close() {
      http.destroy();
      https.destroy();
    },
  };
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
