// One HTTP attempt of a webhook delivery, bounded: one POST, no redirects followed (a 3xx is a
// failure), 10 seconds for all of it (connecting, the answer and its body), at most 64 KiB of the
// answer's body read (the first 1 KiB kept for the delivery log), the connection never reused,
// and only to addresses the SSRF guard (./ssrf.ts) allows, checked on the connected socket too.

import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { addressAllowed, BlockedAddressError, guardedLookup, type Resolver, type UrlPolicy } from './ssrf.ts';

export const KEEP_BODY_BYTES = 1024;
export const READ_BODY_BYTES = 64 * 1024;

export interface SendOptions extends UrlPolicy {
  resolver: Resolver;
  timeoutMs: number;
}

export interface AttemptResult {
  /** The answer's status, or null when none came (refused, timed out, connection lost). */
  status: number | null;
  /** The first KEEP_BODY_BYTES of the answer's body (UTF-8, lossy). */
  body: string | null;
  /** Why the attempt failed without an answer (or why an answer was cut short). */
  error: string | null;
  durationMs: number;
}

function describe(error: unknown): string {
  if (error instanceof BlockedAddressError) return `refused: ${error.message}`;
  const e = error as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message}` : String(e.message ?? error);
}

/** POST `body` to `url` with `headers`; never throws. */
export function postOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now();
  const target = new URL(url);
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const elapsed = () => Math.round(performance.now() - started);
  // A literal address is never looked up: check it here, before any connection.
  if (/^[\d.]+$/.test(host) || host.includes(':')) {
    if (!addressAllowed(host, options)) {
      return Promise.resolve({
        status: null,
        body: null,
        error: `refused: ${host} is an address webhooks may not reach`,
        durationMs: elapsed(),
      });
    }
  }
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      const text = keptBytes > 0 ? Buffer.concat(kept).subarray(0, KEEP_BODY_BYTES).toString('utf8') : '';
      resolve({ status, body: status === null ? null : text, error, durationMs: elapsed() });
    };
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
        lookup: guardedLookup(options.resolver, options),
      },
      (response) => {
        status = response.statusCode ?? null;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (keptBytes < KEEP_BODY_BYTES) {
            kept.push(chunk.subarray(0, KEEP_BODY_BYTES - keptBytes));
            keptBytes += Math.min(chunk.length, KEEP_BODY_BYTES - keptBytes);
          }
          // Enough has been read to know the endpoint answered: the rest is never read.
          if (read >= READ_BODY_BYTES) finish(null);
        });
        response.on('end', () => finish(null));
        response.on('error', (error) => finish(describe(error)));
      },
    );
    request.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        const peer = socket.remoteAddress ?? '';
        if (!addressAllowed(peer, options))
          request.destroy(new BlockedAddressError(`connected to ${peer}, an address webhooks may not reach`));
      });
    });
    request.on('error', (error) => finish(describe(error)));
    const timer = setTimeout(() => finish(`timed out after ${options.timeoutMs / 1000} s`), options.timeoutMs);
    request.end(body);
  });
}
