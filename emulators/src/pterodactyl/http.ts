// HTTP as the Pterodactyl panel (Laravel) speaks it (upstreams.md §1.2–§1.4): JSON bodies,
// `{errors:[{code,status,detail,meta?}]}` error bodies, 204 with an empty body, the malformed-JSON
// 400, API keys looked up by their 16-character identifier, route keys for the call counters and
// Fractal pagination (`links` is `[]` when there is no previous/next page).

import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKey, PanelState, User } from './state.ts';

/** An error the panel answers with its JSON error body. */
export class PteroError extends Error {
  readonly status: number;
  readonly code: string;
  readonly entries: ErrorEntry[];
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.code = code;
    this.entries = [{ code, status: String(status), detail }];
    this.headers = headers;
  }

  /** A 422 with one entry per failed rule (Handler::invalidJson). */
  static validation(failures: { field: string; rule: string; detail: string }[]): PteroError {
    const error = new PteroError(422, 'ValidationException', failures[0]?.detail ?? 'The given data was invalid.');
    error.entries.length = 0;
    for (const f of failures) {
      error.entries.push({
        code: 'ValidationException',
        status: '422',
        detail: f.detail,
        meta: { source_field: f.field, rule: f.rule },
      });
    }
    return error;
  }
}

/** An error Wings answers (`{"error": "..."}` with a status); the panel wraps it (fromWings). */
export class WingsError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const NOT_FOUND_ON_SYSTEM = 'The requested resources was not found on the system.';

/** The panel's DaemonConnectionException for a Wings error answer (status kept, 2xx coerced to 502). */
export function fromWings(error: WingsError): PteroError {
  const id = randomUUID();
  const status = error.status < 400 ? 502 : error.status;
  if (status >= 500) {
    return new PteroError(
      status,
      'DaemonConnectionException',
      `There was an error while communicating with the machine running this server. This error has been logged, please try again. (code: ${status}) (request_id: ${id})`,
    );
  }
  return new PteroError(
    status,
    'DaemonConnectionException',
    `An error occurred on the remote host: ${error.message}. (request id: ${id})`,
  );
}

/** Wings cannot be reached at all. */
export function wingsUnreachable(): PteroError {
  return new PteroError(
    504,
    'DaemonConnectionException',
    'Could not establish a connection to the machine running this server. Please try again.',
  );
}

export interface ErrorEntry {
  code: string;
  status: string;
  detail: string;
  meta?: Record<string, unknown>;
}

/** DisplayException: a business error shown to the user, always 400. */
export function display(detail: string, code = 'DisplayException'): PteroError {
  return new PteroError(400, code, detail);
}

export function badRequest(detail: string): PteroError {
  return new PteroError(400, 'BadRequestHttpException', detail);
}

export function notFound(detail = 'The requested resource could not be found on the server.'): PteroError {
  return new PteroError(404, 'NotFoundHttpException', detail);
}

export function forbidden(detail = 'This action is unauthorized.'): PteroError {
  return new PteroError(403, 'AccessDeniedHttpException', detail);
}

export const UNEXPECTED = 'An unexpected error was encountered while processing this request, please try again.';

/** What a handler answers: a JSON body with a status, an empty 204, raw bytes, or nothing (already sent). */
export type Answer =
  | { status: number; json: unknown }
  | { status: 204 }
  | { status: number; raw: Buffer | string; type: string; headers?: Record<string, string> };

export const NO_CONTENT: Answer = { status: 204 };

export function ok(json: unknown, status = 200): Answer {
  return { status, json };
}

export function sendAnswer(res: ServerResponse, answer: Answer, extra: Record<string, string> = {}): void {
  const headers: Record<string, string | number> = { 'cache-control': 'no-cache, private', ...extra };
  if ('json' in answer) {
    const text = JSON.stringify(answer.json);
    res.writeHead(answer.status, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  if ('raw' in answer) {
    const body = typeof answer.raw === 'string' ? Buffer.from(answer.raw) : answer.raw;
    res.writeHead(answer.status, {
      ...headers,
      ...(answer.headers ?? {}),
      'content-type': answer.type,
      'content-length': body.length,
    });
    res.end(body);
    return;
  }
  res.writeHead(204, headers);
  res.end();
}

export function sendError(res: ServerResponse, error: PteroError, extra: Record<string, string> = {}): void {
  sendAnswer(res, ok({ errors: error.entries }, error.status), { ...extra, ...error.headers });
}

/** The request body as bytes, or null when it is over `max`. */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > max ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Body = Record<string, Json>;

/**
 * The request's input as Laravel sees it (IsValidJson + the request bag): a JSON object for
 * JSON bodies, form fields for urlencoded ones. A JSON body that does not parse is a 400.
 */
export function parseInput(req: IncomingMessage, raw: Buffer): Body {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const text = raw.toString('utf8');
  if (/\/json|\+json/.test(type)) {
    if (text.trim() === '') return {};
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('The JSON data passed in the request appears to be malformed: Syntax error');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    return value as Body;
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const out: Body = {};
    for (const [k, v] of new URLSearchParams(text)) out[k] = v;
    return out;
  }
  return {};
}

/** The key a Bearer header names, or null (unknown key or wrong secret). */
export function findKey(state: PanelState, header: string | undefined): { key: ApiKey; user: User } | null {
  const match = /^Bearer\s+(\S+)$/i.exec((header ?? '').trim());
  const token = match?.[1] ?? '';
  if (token.length !== 48) return null;
  const key = state.keys.get(token.slice(0, 16));
  if (!key) return null;
  const given = Buffer.from(token.slice(16));
  const expected = Buffer.from(key.secret);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const user = state.users.get(key.userId);
  return user ? { key, user } : null;
}

const COLLECTIONS = new Set([
  'servers',
  'users',
  'nodes',
  'nests',
  'eggs',
  'allocations',
  'backups',
  'databases',
  'schedules',
  'tasks',
  'locations',
  'external',
]);

/** `METHOD /path` with ids replaced by `:`, e.g. `POST /api/client/servers/:/power`. */
export function routeKey(method: string, path: string): string {
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (COLLECTIONS.has(parts[i - 1] ?? '') && part !== '' && part !== 'external') parts[i] = ':';
  }
  return `${method} ${parts.join('/')}`;
}

/** Fractal's `meta.pagination` for one page of `total` items. */
export function pagination(
  baseUrl: string,
  path: string,
  query: URLSearchParams,
  total: number,
  count: number,
  perPage: number,
  page: number,
): Record<string, unknown> {
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number) => {
    const q = new URLSearchParams(query);
    q.set('page', String(p));
    return `${baseUrl}${path}?${q.toString()}`;
  };
  const links: Record<string, string> = {};
  if (page > 1) links.previous = link(page - 1);
  if (page < totalPages) links.next = link(page + 1);
  return {
    total,
    count,
    per_page: perPage,
    current_page: page,
    total_pages: totalPages,
    links: Object.keys(links).length === 0 ? [] : links,
  };
}

/** `?page=&per_page=` as Laravel reads them (bad values fall back). */
export function pageParams(query: URLSearchParams, fallback: number, max: number): { page: number; perPage: number } {
  const per = Number.parseInt(query.get('per_page') ?? '', 10);
  const page = Number.parseInt(query.get('page') ?? '', 10);
  return {
    perPage: Number.isFinite(per) && per > 0 ? Math.min(per, max) : fallback,
    page: Number.isFinite(page) && page > 0 ? page : 1,
  };
}

/** `filter[name]` query values. */
export function filters(query: URLSearchParams): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of query) {
    const m = /^filter\[([^\]]+)\]$/.exec(k);
    if (m?.[1]) out.set(m[1], v);
  }
  return out;
}

/** A `string` input, or undefined. */
export function str(body: Body, key: string): string | undefined {
  const v = body[key];
  return typeof v === 'string' ? v : undefined;
}
