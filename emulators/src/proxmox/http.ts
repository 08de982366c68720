// HTTP as pveproxy speaks it: the `{data}` envelope, errors in the reason phrase and in
// `message`, API-token auth (`PVEAPIToken=USER@REALM!TOKENID=SECRET`, or with a space), bodies
// form-encoded or JSON, booleans as 0/1.

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PveError } from './tasks.ts';

const MAX_BODY = 1024 * 1024;

export function send(res: ServerResponse, status: number, reason: string, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, reason.replace(/[\r\n]+/g, ' ').trim(), {
    'content-type': 'application/json;charset=UTF-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'max-age=0',
    pragma: 'no-cache',
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: PveError): void {
  send(res, error.status, error.message, {
    data: null,
    message: `${error.message}\n`,
    ...(error.errors ? { errors: error.errors } : {}),
  });
}

/** The request body, or null when it is over the limit. */
export function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Query and body parameters as PVE sees them: strings, JSON booleans as 0/1. */
export function parseParams(req: IncomingMessage, url: URL, raw: string): Record<string, string> {
  const params: Record<string, string> = Object.fromEntries(url.searchParams);
  if (raw === '') return params;
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
  if (type === 'application/json') {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new PveError(400, 'malformed JSON body');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new PveError(400, 'JSON body must be an object');
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === null) continue;
      params[key] = typeof v === 'boolean' ? (v ? '1' : '0') : typeof v === 'object' ? JSON.stringify(v) : String(v);
    }
    return params;
  }
  if (type !== 'application/x-www-form-urlencoded' && type !== '') {
    throw new PveError(415, `Unsupported content type '${type}'`);
  }
  return { ...params, ...Object.fromEntries(new URLSearchParams(raw)) };
}

/** Null when the token is right; otherwise the 401 a real node answers. */
export function authFailure(header: string | undefined, tokenId: string, secret: string): PveError | null {
  if (!header) return new PveError(401, 'No ticket');
  const match = /^PVEAPIToken[= ]([^=\s]+)=(\S+)$/.exec(header.trim());
  const given = Buffer.from(match?.[2] ?? '');
  const expected = Buffer.from(secret);
  const ok =
    match !== null && match[1] === tokenId && given.length === expected.length && timingSafeEqual(given, expected);
  return ok ? null : new PveError(401, 'Authentication failed!');
}

/** `METHOD /path` with node names, vmids and UPIDs replaced by `:`, e.g. `POST /nodes/:/qemu/:/clone`. */
export function routeKey(method: string, path: string): string {
  return `${method} ${path
    .replace(/^\/nodes\/[^/]+/, '/nodes/:')
    .replace(/\/qemu\/\d+/, '/qemu/:')
    .replace(/\/tasks\/[^/]+/, '/tasks/:')}`;
}

/** The API path below /api2/json, each segment percent-decoded (UPIDs arrive encoded). */
export function apiPath(pathname: string): string | null {
  if (!pathname.startsWith('/api2/json/')) return null;
  try {
    return pathname
      .slice('/api2/json'.length)
      .split('/')
      .map((segment) => decodeURIComponent(segment))
      .join('/')
      .replace(/\/+$/, '');
  } catch {
    return null;
  }
}
