// HTTP as PowerDNS's webserver speaks it for the API: JSON answers, every refusal as
// `{"error": "<text>"}` with its status (401 a missing or wrong X-API-Key, 404 an unknown server
// or zone, 422 a record the server will not take, 400 a body that is not JSON), 204 with no body
// for a successful PATCH or DELETE.

import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BODY = 2 * 1024 * 1024;

/** A refusal a handler throws: the status and PowerDNS's `error` text. */
export class PdnsError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const unprocessable = (message: string) => new PdnsError(422, message);

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    // What PowerDNS's webserver sends with API answers.
    'access-control-allow-origin': '*',
    server: 'PowerDNS/4.9.4',
  });
  res.end(text);
}

export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204, { server: 'PowerDNS/4.9.4', 'access-control-allow-origin': '*' });
  res.end();
}

export function sendError(res: ServerResponse, error: PdnsError): void {
  sendJson(res, error.status, { error: error.message });
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
      if (size > MAX_BODY) return reject(new PdnsError(413, 'Request Entity Too Large'));
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** A JSON object body, or 400 as PowerDNS answers a body it cannot parse. */
export function parseObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new PdnsError(400, 'JSON parse error');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new PdnsError(400, 'Document root is not an Object');
  }
  return parsed as Record<string, unknown>;
}
