// The one error handler. Whatever goes wrong in a request (an AppError from the core, a
// schema validation failure, a body parser refusal, an unknown route, a bug) is turned into
// an AppError here and rendered in the envelope of the surface the URL belongs to. Unknown
// failures are logged with their stack and answered with a generic 500 that says nothing.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../core/errors.ts';
import { databaseUnavailable } from '../../db/unavailable.ts';
import { sendError } from '../surfaces.ts';

interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const PARSER_ERRORS: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('unsupported_media_type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('bad_request', { message: 'Content-Length does not match the body.' }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('malformed_json', { message: 'The JSON body is empty.' }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('malformed_json'),
  FST_ERR_CTP_INVALID_TYPE: () => new AppError('bad_request'),
  FST_ERR_BAD_URL: () => new AppError('bad_request', { message: 'The URL is malformed.' }),
  FST_ERR_ASYNC_CONSTRAINT: () => new AppError('bad_request'),
  FST_ERR_REP_INVALID_PAYLOAD_TYPE: () => new AppError('internal_error'),
  // Multipart bodies (@fastify/multipart).
  FST_FILES_LIMIT: () => AppError.fields({ body: 'send one file only' }),
  FST_FIELDS_LIMIT: () => new AppError('payload_too_large', { message: 'The form has too many fields.' }),
  FST_PARTS_LIMIT: () => new AppError('payload_too_large', { message: 'The form has too many parts.' }),
  FST_PROTO_VIOLATION: () => new AppError('bad_request', { message: 'A form field has a forbidden name.' }),
  FST_INVALID_JSON_FIELD_ERROR: () => new AppError('bad_request', { message: 'A form field is not valid JSON.' }),
  FST_MP_PREMATURE_CLOSE: () => new AppError('bad_request', { message: 'The form ended early.' }),
};

/** What the multipart parser (busboy) throws, untyped, for a body that is not a well-formed form. */
const MALFORMED_MULTIPART = /^Multipart: |unexpected end of multipart data|^Boundary required|^Malformed part header/i;

const TRANSIENT_DATABASE = new Set(['40P01', '40001']);
/** Retry-After of a 503 while the database is away: a restart takes seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as Partial<FastifyError> & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return AppError.fields(validationFields(fastifyError.validation, fastifyError.validationContext ?? 'body'));
  }
  const mapped = fastifyError.code === undefined ? undefined : PARSER_ERRORS[fastifyError.code];
  if (mapped) return mapped();
  if (error instanceof Error && MALFORMED_MULTIPART.test(error.message))
    return new AppError('bad_request', { message: 'The multipart/form-data body is malformed.' });
  // secure-json-parse refusals (prototype poisoning) and JSON syntax errors carry statusCode 400.
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) return new AppError('malformed_json');
  // PostgreSQL aborted the transaction for another one's sake (deadlock_detected,
  // serialization_failure): nothing of it was written and the same request can be sent again.
  if (TRANSIENT_DATABASE.has(String(fastifyError.code))) return new AppError('conflict', { cause: error });
  // The database away (restarting, unreachable, out of connections): the request's transaction was
  // rolled back (or, cut short at COMMIT, its idempotency key tells when it is sent again), and the
  // same request may be sent again shortly (db/unavailable.ts).
  if (databaseUnavailable(error)) {
    return new AppError('service_unavailable', { retryAfter: DATABASE_RETRY_AFTER_SECONDS, cause: error });
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return new AppError('not_found');
    if (status === 405) return new AppError('method_not_allowed');
    if (status === 413) return new AppError('payload_too_large');
    if (status === 415) return new AppError('unsupported_media_type');
    return new AppError('bad_request');
  }
  return new AppError('internal_error', { cause: error });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's own value rules for its body fields (the ones its core service applies), run
     * when the schema already refused the body, so that one answer names every failing field:
     * a wrong type in one field does not hide a too-short password in another. Fields the
     * schema refused keep the schema's reason. Must not touch the database.
     */
    fieldRules?: (body: Record<string, unknown>) => Record<string, string>;
  }
}

const quote = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** Turn ajv's issues into `{field: reason}`, nested fields dotted; a choice names its options. */
export function validationFields(issues: AjvIssue[], context: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const root = context === 'querystring' ? 'query' : context;
  // `Type.Union([Type.Literal('a'), …])` fails once per literal: gather them into one reason.
  const choices = new Map<string, unknown[]>();
  for (const issue of issues) {
    if (issue.keyword === 'const') {
      const allowed = choices.get(issue.instancePath) ?? [];
      allowed.push(issue.params.allowedValue);
      choices.set(issue.instancePath, allowed);
    } else if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
      choices.set(issue.instancePath, [...(choices.get(issue.instancePath) ?? []), ...issue.params.allowedValues]);
    }
  }
  for (const issue of issues) {
    const path = issue.instancePath
      .split('/')
      .filter((part) => part !== '')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    let reason = issue.message ?? 'is invalid';
    const allowed = choices.get(issue.instancePath);
    if (allowed && (issue.keyword === 'const' || issue.keyword === 'enum' || issue.keyword === 'anyOf')) {
      reason =
        allowed.length === 1 ? `must be ${quote(allowed[0])}` : `must be one of ${allowed.map(quote).join(', ')}`;
    } else if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
      path.push(issue.params.missingProperty);
      reason = 'is required';
    } else if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
      path.push(issue.params.additionalProperty);
      reason = 'is not an accepted field';
    } else if (issue.keyword === 'type' && path.length === 0 && root === 'body') {
      reason = 'must be a JSON object';
    }
    const field = path.length === 0 ? root : path.join('.');
    if (!(field in fields)) fields[field] = reason;
  }
  return fields;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    let appError = toAppError(error);
    const rules = request.routeOptions.config?.fieldRules;
    const body = request.body;
    if (
      rules &&
      appError.code === 'validation_failed' &&
      (error as { validationContext?: string }).validationContext === 'body' &&
      body !== null &&
      typeof body === 'object' &&
      !Array.isArray(body)
    ) {
      appError = AppError.fields({ ...rules(body as Record<string, unknown>), ...appError.fields });
    }
    if (appError.code === 'service_unavailable' && appError !== error) {
      // Not a bug: one line per request without the stack, while the database is away.
      request.log.warn({ errorCode: appError.code, reason: String(error) }, 'request failed: database unavailable');
    } else if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? error, errorCode: appError.code }, 'request failed');
    } else if (appError !== error && appError.code === 'conflict') {
      // Answered 409, but a deadlock means two paths lock rows in different orders: worth a look.
      request.log.warn({ err: error }, 'request aborted by the database; answered 409');
    }
    return sendError(request, reply, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new AppError('not_found', { message: `No route ${request.method} ${request.url.split('?', 1)[0]}.` }),
    ),
  );
}
