// HTTP as cpsrvd speaks it for the APIs: JSON answers (HTTP 200 even when the call failed),
// parameters from the query string and form-encoded bodies (repeatable, or `name-1`,
// `name-2` …), token Authorization headers (`whm USER:TOKEN`, `cpanel USER:TOKEN`) and Basic.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BODY = 1024 * 1024;

/** Request parameters as cPanel sees them: strings, possibly repeated. */
export class Params {
  readonly values = new Map<string, string[]>();

  add(name: string, value: string): void {
    const list = this.values.get(name);
    if (list) list.push(value);
    else this.values.set(name, [value]);
  }

  /** The first value (Perl's scalar `param()`), or undefined. */
  get(name: string): string | undefined {
    return this.values.get(name)?.[0];
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  /** Every value of a multi-valued argument: repeats of `name` and `name-1`, `name-2` … (deduplicated, in order). */
  all(name: string): string[] {
    const found: string[] = [...(this.values.get(name) ?? [])];
    const numbered = [...this.values.keys()]
      .map((key) => ({ key, n: key.startsWith(`${name}-`) ? Number(key.slice(name.length + 1)) : Number.NaN }))
      .filter((k) => Number.isInteger(k.n))
      .sort((a, b) => a.n - b.n);
    for (const { key } of numbered) found.push(...(this.values.get(key) ?? []));
    return [...new Set(found)];
  }

  delete(name: string): void {
    this.values.delete(name);
  }

  /** Single-valued view (first values), e.g. for logging. */
  flat(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, list] of this.values) out[key] = list[0] ?? '';
    return out;
  }
}

export class HttpFailure extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function parseParams(req: IncomingMessage, url: URL, raw: string): Params {
  const params = new Params();
  for (const [key, value] of url.searchParams) params.add(key, value);
  if (raw === '') return params;
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' || type === '' || type === undefined) {
    for (const [key, value] of new URLSearchParams(raw)) params.add(key, value);
    return params;
  }
  if (type === 'application/json') {
    // cpsrvd reads JSON bodies for UAPI too; values become strings.
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new HttpFailure(400, 'The request body is not valid JSON.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new HttpFailure(400, 'The request body must be a JSON object.');
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === null || v === undefined) continue;
      const list = Array.isArray(v) ? v : [v];
      for (const item of list) params.add(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    return params;
  }
  throw new HttpFailure(415, 'Unsupported Media Type');
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

function headers(type: string, length: number): Record<string, string | number> {
  return {
    'content-type': type,
    'content-length': length,
    'cache-control': 'no-cache, no-store, must-revalidate, private',
    pragma: 'no-cache',
    server: 'cpsrvd/11.120.0.16',
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, headers('application/json; charset="utf-8"', Buffer.byteLength(text)));
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  type = 'text/plain; charset="utf-8"',
): void {
  res.writeHead(status, headers(type, Buffer.byteLength(text)));
  res.end(text);
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  extra: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, { ...headers('text/html; charset="utf-8"', Buffer.byteLength(html)), ...extra });
  res.end(html);
}

/** The parsed Authorization header. */
export type Credentials =
  | { kind: 'whm' | 'cpanel'; user: string; token: string }
  | { kind: 'basic'; user: string; password: string }
  | { kind: 'none' }
  | { kind: 'bad' };

export function parseAuthorization(header: string | undefined): Credentials {
  if (!header) return { kind: 'none' };
  const match = /^(\S+)\s+(.*)$/.exec(header.trim());
  if (!match) return { kind: 'bad' };
  const scheme = (match[1] ?? '').toLowerCase();
  const detail = match[2] ?? '';
  if (scheme === 'whm' || scheme === 'cpanel') {
    const colon = detail.indexOf(':');
    if (colon < 1 || colon === detail.length - 1) return { kind: 'bad' };
    return { kind: scheme, user: detail.slice(0, colon), token: detail.slice(colon + 1) };
  }
  if (scheme === 'basic') {
    const decoded = Buffer.from(detail, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) return { kind: 'bad' };
    return { kind: 'basic', user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { kind: 'bad' };
}

/** Constant-time string comparison. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A cPanel API token: 32 uppercase letters and digits. */
export function makeToken(): string {
  const bytes = randomBytes(32);
  let out = '';
  for (const byte of bytes) out += TOKEN_ALPHABET[byte % TOKEN_ALPHABET.length];
  return out;
}

/** Random text from an alphabet (session ids, XIDs). */
export function randomText(length: number, alphabet: string): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}
