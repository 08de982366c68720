// Where GET /metrics is served (README "Metrics"):
// - METRICS_PORT: a listener of its own (plain node:http, loopback unless METRICS_HOST says
//   otherwise), without auth: whoever can reach that port is the scraper;
// - METRICS_TOKEN: a route on the main port (buildServer), open to `Authorization: Bearer
//   <token>` only, compared in constant time, and hidden from the OpenAPI document.
// Neither set: no /metrics anywhere (the main port answers 404).

import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { type MetricSources, registry, watchProcess } from '../metrics/metrics.ts';
import { bearerToken } from './request-context.ts';

export const METRICS_PATH = '/metrics';

/** What the scrape reads of a running process: its pool and its job queue's (cached) depth. */
function sourcesOf(deps: Deps): MetricSources {
  return { pool: deps.database.pool, queueDepth: () => deps.jobs.queueDepth() };
}

/** Digests have one length whatever was sent, so timingSafeEqual compares without a length leak. */
const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** GET /metrics on the main port, for `Authorization: Bearer <METRICS_TOKEN>` only. */
export function registerMetricsRoute(app: FastifyInstance, deps: Deps, token: string): void {
  const expected = digest(token);
  const unwatch = watchProcess(sourcesOf(deps));
  app.addHook('onClose', async () => unwatch());
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const given = bearerToken(request.headers.authorization);
    if (given === null || !timingSafeEqual(digest(given), expected)) {
      reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new AppError('invalid_token', { message: 'The metrics token is missing or wrong.' });
    }
    const text = await registry.metrics();
    return reply.header('Cache-Control', 'no-store').type(registry.contentType).send(text);
  });
}

export interface MetricsListener {
  host: string;
  /** The bound port (the one asked for, or the one the system chose for port 0). */
  port: number;
  close(): Promise<void>;
}

/** The separate listener of METRICS_PORT: GET (or HEAD) /metrics, 404 elsewhere. */
export async function startMetricsListener(deps: Deps, host: string, port: number): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Only ${METRICS_PATH} is here.\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET only.\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        deps.logger.error({ err: error }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be read.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Only once listening: a port that cannot be bound leaves nothing watching.
  const unwatch = watchProcess(sourcesOf(deps));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    async close() {
      unwatch();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
