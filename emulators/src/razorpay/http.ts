// HTTP as Razorpay's API speaks it: JSON answers, errors as `{"error": {code, description, source,
// step, reason, metadata, field?}}` (401 for a bad key pair, 400 BAD_REQUEST_ERROR for input, 500
// SERVER_ERROR), and request bodies either JSON (the official SDKs) or form-encoded (the curl
// examples of the docs, with `notes[key]=value`).

import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BODY = 64 * 1024;

export interface ErrorFields {
  code: 'BAD_REQUEST_ERROR' | 'SERVER_ERROR' | 'GATEWAY_ERROR';
  description: string;
  source: string;
  step: string;
  reason: string;
  metadata: Record<string, string>;
  field?: string;
}

/** A refusal a handler throws: the HTTP status and Razorpay's error object. */
export class RazorpayError extends Error {
  readonly status: number;
  readonly fields: ErrorFields;

  constructor(status: number, fields: ErrorFields) {
    super(fields.description);
    this.status = status;
    this.fields = fields;
  }
}

/** A 400 for a request parameter, as the Orders and Refunds APIs answer one. */
export function badInput(description: string, field?: string): RazorpayError {
  return new RazorpayError(400, {
    code: 'BAD_REQUEST_ERROR',
    description,
    source: 'business',
    step: 'payment_initiation',
    reason: 'input_validation_failed',
    metadata: {},
    ...(field ? { field } : {}),
  });
}

/** What Razorpay answers a missing or wrong key pair (the NA fields are Razorpay's own). */
export function authFailed(): RazorpayError {
  return new RazorpayError(401, {
    code: 'BAD_REQUEST_ERROR',
    description: 'Authentication failed',
    source: 'NA',
    step: 'NA',
    reason: 'NA',
    metadata: {},
  });
}

export function serverError(status = 500): RazorpayError {
  return new RazorpayError(status, {
    code: 'SERVER_ERROR',
    description: 'The server encountered an error. The incident has been reported to admins.',
    source: 'NA',
    step: 'NA',
    reason: 'server_error',
    metadata: {},
  });
}

export const notFound = (): RazorpayError => badInput('The id provided does not exist');
export const noRoute = (): RazorpayError => badInput('The requested URL was not found on the server.');

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-cache',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: RazorpayError): void {
  sendJson(res, error.status, { error: error.fields });
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    // Inline style and the self-submitting callback form only; nothing is fetched from elsewhere.
    'content-security-policy':
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action *",
  });
  res.end(html);
}

export function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return reject(badInput('The request body is too large'));
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/**
 * A request body as a plain object: JSON, or form fields with `a[b]=c` folded into `{a: {b: c}}`
 * (the form's values stay strings; the handlers check types as Razorpay does).
 */
export function parseBody(text: string, contentType: string | undefined): Record<string, unknown> {
  if (text.trim() === '') return {};
  if ((contentType ?? '').includes('application/x-www-form-urlencoded')) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(text)) {
      const nested = /^([^[\]]+)\[([^[\]]*)\]$/.exec(key);
      if (nested) {
        const outer = nested[1]!;
        if (typeof out[outer] !== 'object' || out[outer] === null) out[outer] = {};
        (out[outer] as Record<string, unknown>)[nested[2]!] = value;
      } else out[key] = value;
    }
    return out;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badInput('The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw badInput('The request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
