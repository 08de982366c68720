// buildServer(deps): the whole HTTP application, never listening. main.ts listens; tests
// inject requests into it. Each surface is an encapsulated plugin with its own auth hook;
// the error handling, request ids and the OpenAPI document are shared.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { prebuiltInfoLines, redactQuery } from '../logging.ts';
import { recordRequest } from '../metrics/metrics.ts';
import { clientSurface } from './client/plugin.ts';
import { cloudSurface } from './cloud/plugin.ts';
import { consoleRoutes } from './console.ts';
import { healthRoutes, isDraining } from './health.routes.ts';
import { registerMetricsRoute } from './metrics.routes.ts';
import { pageRoutes } from './pages.ts';
import { loadPanel, registerPanel } from './panel.ts';
import { registerErrorHandling, toAppError } from './plugins/errors.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { tokenCallLog } from './plugins/request-log.ts';
import { registerValidation } from './plugins/validation.ts';
import { razorpayReturnRoutes } from './razorpay-return.ts';
import { clientIp } from './request-context.ts';
import { restSurface } from './rest/plugin.ts';
import { authConstraint, searchRoutes } from './search.routes.ts';
import { staffSurface } from './staff/plugin.ts';
import { errorBody, sendError } from './surfaces.ts';
import { createTurnBatch } from './turn-batch.ts';
import { webhookRoutes } from './webhooks.routes.ts';

export const BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Reuse a caller's X-Request-Id when it is sane, so logs correlate across hops; else mint one. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * One access-log line per request, at completion (Fastify's default is two). The line is built
 * from named fields only (method, the URL with secret query values masked, address, status,
 * time), so it cannot carry a header or body; it skips the logger's wildcard redaction, which
 * costs several times more than writing the line. Failures go through the redacting logger.
 */
const asIs = <T>(value: T): T => value;

class AccessLog extends LogController {
  readonly #lines: FastifyBaseLogger;
  /** The line written as pino would, from fields built here (logging.ts); null: through pino. */
  readonly #prebuilt: ((fields: string, msg: string) => void) | null;
  constructor(logger: FastifyBaseLogger) {
    super({ requestIdLogLabel: 'reqId' });
    // The line's `req` and `res` are built here already (redacted URL): not again by the
    // logger's serializers (each line ran redactQuery twice).
    this.#lines = (logger as Logger).child({}, { redact: [], serializers: { req: asIs, res: asIs } });
    this.#prebuilt = prebuiltInfoLines(this.#lines as Logger);
  }
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // A route with `logLevel: 'silent'` (the probes, /livez and /readyz) has no access-log line.
    if (!error && !request.is404 && request.routeOptions.logLevel === 'silent') return;
    const line = {
      reqId: request.id,
      req: { method: request.method, url: redactQuery(request.url), ip: clientIp(request) },
      res: { statusCode: reply.statusCode },
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    const msg = `${request.method} ${reply.statusCode}`;
    // Plain strings and numbers: the object's JSON is the fields as pino writes them (a `ms` that
    // is not a number becomes null in both).
    if (!error && this.#prebuilt !== null) this.#prebuilt(JSON.stringify(line).slice(1, -1), msg);
    else if (error) reply.log.error({ ...line, err: error }, msg);
    else this.#lines.info(line, msg);
  }
}

/**
 * A request's logger, made when something first logs through it. Fastify gives every request a
 * child logger, and pino's child() serialises its bindings through the redaction on each request,
 * a real cost for a logger that a request answered without error never uses (the access-log line
 * has its own, see AccessLog).
 */
class RequestLogger {
  #made: FastifyBaseLogger | null = null;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }
  get #logger(): FastifyBaseLogger {
    if (this.#made === null) this.#made = this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }
  get level(): string {
    return this.#logger.level;
  }
  set level(level: string) {
    this.#logger.level = level;
  }
  fatal(...args: LogArgs): void {
    (this.#logger.fatal as (...a: LogArgs) => void)(...args);
  }
  error(...args: LogArgs): void {
    (this.#logger.error as (...a: LogArgs) => void)(...args);
  }
  warn(...args: LogArgs): void {
    (this.#logger.warn as (...a: LogArgs) => void)(...args);
  }
  info(...args: LogArgs): void {
    (this.#logger.info as (...a: LogArgs) => void)(...args);
  }
  debug(...args: LogArgs): void {
    (this.#logger.debug as (...a: LogArgs) => void)(...args);
  }
  trace(...args: LogArgs): void {
    (this.#logger.trace as (...a: LogArgs) => void)(...args);
  }
  silent(...args: LogArgs): void {
    (this.#logger.silent as (...a: LogArgs) => void)(...args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}
type LogArgs = [unknown, ...unknown[]];

export function buildServer(deps: Deps): FastifyInstance {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: requestId,
    logController: new AccessLog(deps.logger),
    childLoggerFactory: (logger, bindings, options) =>
      new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    routerOptions: {
      ignoreTrailingSlash: true,
      maxParamLength: 200,
      // GET /api/v1/search/ is one path on two surfaces, chosen by the Authorization header.
      constraints: { auth: authConstraint },
    },
    return503OnClosing: true,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Refusals before routing (a URL that does not decode) still answer in the surface's envelope.
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id);
      sendError(request, reply, toAppError(error));
    },
    // What Node's HTTP parser refuses (headers over 16 KiB, garbage) never becomes a request, so
    // its surface is unknown: the body carries the fields of both error envelopes.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return;
      const appError = new AppError(error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'bad_request');
      const id = randomUUID();
      const body = JSON.stringify({
        ...errorBody('token', appError, id),
        ...errorBody('session', appError, id),
      });
      const status = `${appError.status} ${appError.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`;
      socket.end(
        `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${id}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  }) as unknown as FastifyInstance;

  registerValidation(app);
  registerErrorHandling(app);

  // Every answer leaves at the end of the event loop's turn with the others of that turn
  // (turn-batch.ts). A callback hook: no promise per request.
  const atTurnEnd = createTurnBatch((error) => deps.logger.error({ err: error }, 'answer not sent'));
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('X-Request-Id', request.id);
    // Shutting down (main.ts): the proxy's kept-alive connections end with this answer, rather than
    // meet the closing server with their next request.
    if (isDraining(deps)) reply.header('Connection', 'close');
    if (request.url.startsWith('/api/') && !reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    reply.header('X-Content-Type-Options', 'nosniff');
    atTurnEnd(() => done(null, payload));
  });

  // One callback hook (no promise per request, and the route's options read once: Fastify builds
  // them on each read): the request count and latency by route pattern (never the URL: one series
  // per route and status) for GET /metrics, in memory only; then the request log of token calls.
  const logTokenCall = tokenCallLog(app, deps);
  app.addHook('onResponse', (request, reply, done) => {
    const options = request.is404 ? undefined : request.routeOptions;
    recordRequest(request.method, options?.url, reply.statusCode, reply.elapsedTime / 1000);
    logTokenCall(request, reply, options, done);
  });

  registerOpenApi(app, config.publicUrl, config.altBasePath);
  // GET /metrics on this port only with METRICS_TOKEN (metrics.routes.ts); not in the OpenAPI document.
  if (config.metricsToken !== null) registerMetricsRoute(app, deps, config.metricsToken);
  app.register(healthRoutes, { deps });
  app.register(webhookRoutes, { deps });
  app.register(clientSurface, { deps, prefix: '/api/v1/client' });
  // The staff console's API (CONTRACT §14): its own cookie, CSRF and role table.
  app.register(staffSurface, { deps, prefix: '/api/v1/staff' });
  app.register(searchRoutes, { deps, prefix: '/api/v1/search' });
  app.register(restSurface, { deps, prefix: '/api/v1' });
  // The second token surface (spec 4.12), mounted where the operator says (ALT_BASE_PATH).
  app.register(cloudSurface, { deps, prefix: `${config.altBasePath}/v1` });
  app.register(consoleRoutes, { deps });
  // The client panel at / (web/dist); without a build, the two pages mail links open.
  const panel = loadPanel(config.panelDir);
  if (panel !== null) {
    registerPanel(app, panel, config.altBasePath, () => deps.razorpay.checkoutOrigin);
    // Hosted Checkout's way back to the panel's /wallet/razorpay-return (a POST from the gateway).
    app.register(razorpayReturnRoutes);
  } else {
    deps.logger.warn({ panelDir: config.panelDir }, 'no client panel build: run `npm run build:web`');
    app.register(pageRoutes);
  }
  return app;
}
