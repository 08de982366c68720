// A webhook receiver on 127.0.0.1 for tests: records every request (headers and raw body) and
// answers what the test says — a status, a body, a redirect, or nothing for a while.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from './browser.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** What the next requests get (default 204). */
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 204 }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), url: req.url ?? '' };
      receiver.received.push(request);
      const answer = receiver.answer(request);
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
    });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}${path}`;
  return receiver;
}

export const WEBHOOKS = '/api/v1/client/webhooks/';

/** POST webhooks/ with the browser's CSRF token. */
export const hooksPost = (browser: Browser, body: Record<string, unknown>) =>
  browser.post(WEBHOOKS, body, { csrf: true });

/** Add an endpoint; its id and secret (fails the test on anything but 201). */
export async function addEndpoint(
  browser: Browser,
  body: Record<string, unknown>,
): Promise<{ id: number; secret: string }> {
  const res = await hooksPost(browser, body);
  if (res.statusCode !== 201) throw new Error(`adding an endpoint: ${res.statusCode} ${res.body}`);
  const json = res.json() as { endpoint: { id: number }; secret: string };
  return { id: json.endpoint.id, secret: json.secret };
}

export interface DeliveryView {
  id: number;
  event_id: string;
  type: string;
  attempt: number;
  status: string;
  response_status: number | null;
  duration_ms: number | null;
  next_attempt_at: string | null;
  error: string | null;
  response_body: string | null;
  request_headers: Record<string, string> | null;
}

/** The endpoint's delivery log, newest first. */
export async function deliveriesOf(browser: Browser, id: number): Promise<DeliveryView[]> {
  const res = await browser.get(`${WEBHOOKS}?id=${id}&action=deliveries`);
  if (res.statusCode !== 200) throw new Error(`deliveries: ${res.statusCode} ${res.body}`);
  return (res.json() as { deliveries: DeliveryView[] }).deliveries;
}
