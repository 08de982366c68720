// Every answer a test receives is checked against the OpenAPI document the app serves (issue 32,
// "the document says what the server does"): the status must be listed for the operation the
// request reached (or a `default`), and the body must match the schema for that status and its
// media type. A mismatch is an AssertionError thrown where the test made the request, so the
// test fails there, with the operation, the status and ajv's reasons.
//
// The document is compiled once per process and document (each test file builds apps from the
// same code, so one compile per file); each response schema is compiled the first time a test
// receives that status, and kept.

import { AssertionError } from 'node:assert';
import { createHash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

interface MediaObject {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaObject>;
}
interface Operation {
  operationId?: string;
  responses?: Record<string, ResponseObject>;
}
type PathItem = Record<string, Operation>;
export interface OpenApiDocument {
  paths: Record<string, PathItem>;
  components?: Record<string, unknown>;
}

/** What a test received, as light-my-request (or fetch, or a captured reply) gives it. */
export interface ReceivedResponse {
  method: string;
  url: string;
  statusCode: number;
  contentType: string | undefined;
  /** null: not seen (a stream sent over a socket); its status and media type are still checked. */
  body: string | null;
}

/**
 * Paths that are not the API: pages the e-mail links open, the document and its browsable page,
 * metrics, and the console WebSocket. Answers to these are not checked.
 */
const OUTSIDE_THE_DOCUMENT: RegExp[] = [
  /^\/docs(\/|$)/,
  /^\/api\/v1\/openapi\.json$/,
  /^\/(verify|reset)\/?$/,
  /^\/metrics\/?$/,
  /^\/ws\/console\/?$/,
];

/** The envelopes an answer to a path or method the document does not have (a 404, a 405) may take. */
const UNKNOWN_ROUTE_STATUSES = new Set([400, 404, 405, 414, 431]);
const DOC_ID = 'openapi.json';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

interface Template {
  path: string;
  /** Segments without the trailing slash; `null` stands for a `{parameter}`. */
  segments: (string | null)[];
  item: PathItem;
}

/** A path without its query and without a trailing slash: both forms are one route (CONTRACT §2). */
function segmentsOf(path: string): string[] {
  const bare = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return bare.split('/');
}

/** `#/…` references made absolute, so a schema compiled on its own still finds them in the document. */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith('#') ? `${DOC_ID}${inner}` : absoluteRefs(inner);
  }
  return out;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 12)
    .map((e) => `  ${e.instancePath || '(body)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
    .join('\n');
}

export class DocumentValidator {
  readonly #ajv: Ajv2020;
  readonly #templates: Template[];
  readonly #compiled = new Map<string, ValidateFunction>();
  /** By the schema's text: the many responses that are the same error envelope compile once. */
  readonly #bySchema = new Map<string, ValidateFunction>();
  readonly #document: OpenApiDocument;

  constructor(document: OpenApiDocument) {
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    // CommonJS with a default export (as in src/http/plugins/validation.ts).
    (formats as unknown as { default: (ajv: Ajv2020) => void }).default(this.#ajv);
    this.#document = absoluteRefs(document) as OpenApiDocument;
    this.#ajv.addSchema(this.#document, DOC_ID);
    this.#templates = Object.entries(document.paths).map(([path, item]) => ({
      path,
      segments: segmentsOf(path).map((s) => (/^\{[^}]+\}$/.test(s) ? null : s)),
      item,
    }));
  }

  /** The document's path for a request path: literal segments win over parameters, left to right. */
  #template(path: string): Template | null {
    const wanted = segmentsOf(path);
    let best: Template | null = null;
    let bestScore = '';
    for (const template of this.#templates) {
      if (template.segments.length !== wanted.length) continue;
      let score = '';
      let matches = true;
      for (const [i, segment] of template.segments.entries()) {
        if (segment === null) {
          if (wanted[i] === '') matches = false;
          score += '0';
        } else if (segment === wanted[i]) score += '1';
        else matches = false;
        if (!matches) break;
      }
      if (matches && score > bestScore) {
        best = template;
        bestScore = score;
      }
    }
    return best;
  }

  #validator(path: string, method: string, status: string, media: string): ValidateFunction {
    const ref = `${path} ${method} ${status} ${media}`;
    let validate = this.#compiled.get(ref);
    if (validate === undefined) {
      const schema = this.#document.paths[path]?.[method]?.responses?.[status]?.content?.[media]?.schema as object;
      const text = JSON.stringify(schema);
      validate = this.#bySchema.get(text);
      if (validate === undefined) {
        validate = this.#ajv.compile(schema);
        this.#bySchema.set(text, validate);
      }
      this.#compiled.set(ref, validate);
    }
    return validate;
  }

  /**
   * What is wrong with this answer, or null when the document allows it (or does not cover the
   * path). `hiddenRoute`: the app answered with a route it keeps out of the document (its pages,
   * /metrics, routes a test adds to probe the plumbing); unchecked unless the document has the path.
   */
  problem(received: ReceivedResponse, hiddenRoute = false): string | null {
    const path = received.url.split('?', 1)[0] ?? '';
    if (OUTSIDE_THE_DOCUMENT.some((p) => p.test(path))) return null;
    const method = received.method.toLowerCase();
    const head = method === 'head';
    const template = this.#template(path);
    const operation = template?.item[head ? 'get' : method];
    const status = received.statusCode;
    if (template === null || operation === undefined || !METHODS.has(method)) {
      if (hiddenRoute) return null;
      // A route the document does not have: the refusal, in an error envelope, is all it may answer.
      const where = `${received.method} ${path} (not in the document)`;
      if (!UNKNOWN_ROUTE_STATUSES.has(status)) return `${where} answered ${status}`;
      if (head || received.body === null || received.body === '') return null;
      return this.#errorEnvelope(received.body, received.statusCode, where);
    }
    const name = `${operation.operationId ?? '?'} (${received.method} ${template.path})`;
    const responses = operation.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (key === undefined) {
      return `${name} answered ${status}, which the document does not list (it lists ${Object.keys(responses).join(', ')})\n  body: ${(received.body ?? '').slice(0, 300)}`;
    }
    if (head) return null;
    const response = responses[key] as ResponseObject;
    const content = response.content ?? {};
    const media = (received.contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
    if (Object.keys(content).length === 0) {
      return received.body === '' || (received.body === null && media === '')
        ? null
        : `${name} ${status}: the document lists no body, the answer has one (${media})`;
    }
    if (media === '') {
      return (received.body === '' || received.body === null) && status === 204
        ? null
        : `${name} ${status}: no Content-Type (the document lists ${Object.keys(content).join(', ')})`;
    }
    const [type] = media.split('/');
    const listed = [media, `${type}/*`, '*/*'].find((m) => m in content);
    if (listed === undefined) {
      return `${name} ${status}: Content-Type ${media} is not listed (the document lists ${Object.keys(content).join(', ')})`;
    }
    if (!/^application\/(.+\+)?json$/.test(media) || content[listed]?.schema === undefined) return null;
    if (received.body === null) return null;
    let body: unknown;
    try {
      body = JSON.parse(received.body);
    } catch {
      return `${name} ${status}: the ${media} body is not JSON: ${received.body.slice(0, 200)}`;
    }
    const validate = this.#validator(template.path, head ? 'get' : method, key, listed);
    if (validate(body)) return null;
    return `${name} ${status}: the body does not match the document's schema:\n${describeErrors(validate.errors)}\n  body: ${received.body.slice(0, 600)}`;
  }

  /** An answer to an undocumented route must still be a surface's error envelope. */
  #errorEnvelope(text: string, status: number, where: string): string | null {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${where} answered ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
    }
    for (const id of ['TokenError', 'SessionError']) {
      const ref = `${DOC_ID}#/components/schemas/${id}`;
      let validate = this.#compiled.get(ref);
      if (validate === undefined) {
        validate = this.#ajv.compile({ $ref: ref });
        this.#compiled.set(ref, validate);
      }
      if (validate(body)) return null;
    }
    return `${where} answered ${status} outside the error envelopes: ${text.slice(0, 300)}`;
  }

  /** Throws an AssertionError naming what is wrong with `received`. */
  assert(received: ReceivedResponse, hiddenRoute = false): void {
    const problem = this.problem(received, hiddenRoute);
    if (problem === null) return;
    throw new AssertionError({
      message: `The answer does not match the OpenAPI document: ${problem}`,
      actual: received.statusCode,
      operator: 'openapi',
    });
  }
}

const validators = new Map<string, DocumentValidator>();

/** The validator of a document (its JSON text), compiled once per process. */
export function validatorFor(text: string): DocumentValidator {
  const key = createHash('sha256').update(text).digest('hex');
  let validator = validators.get(key);
  if (validator === undefined) {
    validator = new DocumentValidator(JSON.parse(text) as OpenApiDocument);
    validators.set(key, validator);
  }
  return validator;
}
