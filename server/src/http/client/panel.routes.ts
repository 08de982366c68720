// A product's management route (spec 4.9 game, 4.10 web; CONTRACT §6): one path,
// `GET|POST /api/v1/client/<type>/?service=<id>&action=<name>`, serving every action of the
// product's registry exposed on 'panel'. A read is a GET with its parameters in the query, any
// other action a POST with a JSON body (or multipart, for an upload action) and CSRF; the other
// method is 405 with Allow. An unknown action is 422 naming `action` with the valid ones.
// Then, in order: ownership (404 not_owner) → type (the product's wrongType) → state → the
// action's parameters (422, every failing field) → the panel (core/services/service-actions.ts
// runPanel). The OpenAPI entry lists every action with its parameters, from the registry.
// An upload (multipart, the X-CSRF-Token header checked by the session plugin) has the action,
// ownership, type and state decided in preParsing, before a byte of its body is read (T3-M4).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type TObject, Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { type ProductAction, sessionRoutes } from '../../core/product-kit/actions.ts';
import type { Product } from '../../core/product-kit/product.ts';
import { authorisePanel, panelLimitOf } from '../../core/services/action-runner.ts';
import { validationFields } from '../plugins/errors.ts';
import { MAX_ANY_FILE_BYTES, sentAsMultipart } from '../plugins/session-auth.ts';
import { compileValidator } from '../plugins/validation.ts';
import { sessionErrors } from '../schemas.ts';
import { jobView } from '../views/service.view.ts';
import { signedIn } from './context.ts';

const Answer = Type.Object(
  { success: Type.Literal(true), message: Type.String() },
  { additionalProperties: true, description: "the action's fields next to success and message" },
);

/** The product's actions on its management route, in registry order. */
export function panelActions(product: Product): ProductAction[] {
  return product.actions.filter((a) => sessionRoutes(a).includes('panel'));
}

/** A schema's properties as one line: `path (string), content (string, optional)`. */
function describeParams(schema: TObject): string {
  const required = new Set(schema.required ?? []);
  const parts = Object.entries(schema.properties).map(([name, sub]) => {
    const s = sub as { type?: string; anyOf?: { const?: unknown }[] };
    const kind = s.anyOf ? s.anyOf.map((o) => JSON.stringify(o.const)).join('|') : (s.type ?? 'value');
    return `\`${name}\` (${kind}${required.has(name) ? '' : ', optional'})`;
  });
  return parts.length === 0 ? 'no parameters' : parts.join(', ');
}

function describeAll(actions: ProductAction[], method: 'read' | 'mutate'): string {
  const groups = new Map<string, ProductAction[]>();
  for (const a of actions.filter((x) => x.method === method)) {
    groups.set(a.group ?? 'other', [...(groups.get(a.group ?? 'other') ?? []), a]);
  }
  const lines: string[] = [];
  for (const [group, list] of groups) {
    lines.push(`**${group}**`);
    for (const a of list) {
      lines.push(`- \`${a.name}\`: ${a.description}. Parameters: ${describeParams(a.params)}.`);
    }
  }
  return lines.join('\n');
}

/** Every action of a method with its JSON schema, for the OpenAPI document (`x-actions`). */
function actionCatalogue(actions: ProductAction[], method: 'read' | 'mutate') {
  return Object.fromEntries(
    actions
      .filter((a) => a.method === method)
      .map((a) => [
        a.name,
        {
          group: a.group ?? null,
          description: a.description,
          states: a.states,
          parameters: a.params,
          ...(a.upload ? { upload: { field: a.upload.field, max_bytes: a.upload.maxBytes } } : {}),
        },
      ]),
  );
}

interface Compiled {
  action: ProductAction;
  check(data: unknown): Record<string, string> | null;
}

export function panelRoutes(product: Product, path: string) {
  return async function routes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    const actions = panelActions(product);
    const compiled = new Map<string, Compiled>();
    for (const action of actions) {
      const validate = compileValidator(action.params, action.method === 'read');
      compiled.set(action.name, {
        action,
        check(data) {
          if (validate(data)) return null;
          return validationFields(validate.errors ?? [], action.method === 'read' ? 'querystring' : 'body');
        },
      });
    }
    const names = actions.map((a) => a.name);
    const reads = actions.filter((a) => a.method === 'read').map((a) => a.name);
    const mutations = actions.filter((a) => a.method === 'mutate').map((a) => a.name);
    const maxUpload = Math.max(0, ...actions.map((a) => a.upload?.maxBytes ?? 0));
    if (maxUpload > MAX_ANY_FILE_BYTES) throw new Error(`${product.type}: an upload above the multipart limit`);

    /** The action named in the query, for this method (422 unknown, 405 the other method). */
    function chosen(request: FastifyRequest, reply: FastifyReply, method: 'read' | 'mutate'): Compiled {
      const name = (request.query as { action?: unknown }).action;
      const found = typeof name === 'string' ? compiled.get(name) : undefined;
      if (!found) {
        throw AppError.fields(
          { action: `must be one of ${names.join(', ')}` },
          typeof name === 'string' ? `Unknown action ${JSON.stringify(name.slice(0, 64))}.` : 'Name an action.',
        );
      }
      if (found.action.method !== method) {
        reply.header('Allow', found.action.method === 'read' ? 'GET, HEAD' : 'POST');
        throw new AppError('method_not_allowed', {
          message: `${found.action.name} is ${found.action.method === 'read' ? 'a GET' : 'a POST'} action.`,
        });
      }
      return found;
    }

    async function run(
      request: FastifyRequest,
      reply: FastifyReply,
      found: Compiled,
      params: Record<string, unknown>,
    ): Promise<{ success: true; message: string } & Record<string, unknown>> {
      const session = signedIn(request);
      const accountId = session.account.id;
      const serviceId = (request.query as { service: number }).service;
      const { action } = found;
      const files = request.receivedAnyFiles ?? {};
      const file = action.upload ? files[action.upload.field] : undefined;
      if (!action.upload && Object.keys(files).length > 0) {
        throw new AppError('unsupported_media_type', { message: `${action.name} takes no file.` });
      }
      if (file && action.upload && file.bytes > action.upload.maxBytes) {
        throw new AppError('file_too_large', { details: { limit_bytes: action.upload.maxBytes } });
      }
      const hooks = deps.consoles.hooksFor(accountId);
      const { result } = await deps.serviceActions.runPanel(accountId, serviceId, product, action, params, {
        gate: hooks.gate,
        mintConsole: hooks.mintConsole,
        upload: file ? { path: file.tmpPath, filename: file.filename, bytes: file.bytes } : null,
        validate: (given) => {
          action.screen?.(given);
          const problems = found.check(given);
          if (problems) throw AppError.fields(problems);
          return given;
        },
      });
      switch (result.kind) {
        case 'data':
          reply.code(result.status ?? 200);
          if (action.noStore) reply.header('Cache-Control', 'no-store');
          return { success: true as const, message: result.message, ...result.data };
        case 'job':
          reply.code(202);
          return { success: true as const, message: result.message, job: jobView(result.job) };
        default:
          throw new Error(`${action.name} answered ${result.kind} on the management route`);
      }
    }

    const Query = Type.Object(
      {
        service: Type.Integer({ minimum: 1, description: 'the service id' }),
        action: Type.String({ maxLength: 64, description: 'the action' }),
      },
      { additionalProperties: true },
    );
    const label = `/api/v1/client${path}`;

    // Parameters beyond service and action are the action's, checked by it (a NUL in a path is its 400).
    const queryValidator = ({ schema }: { schema: object }) =>
      compileValidator(schema, true, { nulInDeclaredOnly: true });
    const bodyValidator = ({ schema }: { schema: object }) =>
      compileValidator(schema, false, { nulInDeclaredOnly: true });
    const checkQuery = queryValidator({ schema: Query });

    /**
     * A multipart POST (an upload), before its body is read: the query as the route's schema has
     * it, the action (an upload action: any other takes JSON), then ownership, type and state.
     * runPanel checks them all again when the request runs.
     */
    async function authoriseUpload(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (!sentAsMultipart(request)) return;
      const query = { ...(request.query as Record<string, unknown>) };
      if (!checkQuery(query)) throw AppError.fields(validationFields(checkQuery.errors ?? [], 'querystring'));
      const found = chosen(request, reply, 'mutate');
      if (!found.action.upload) {
        throw new AppError('unsupported_media_type', {
          message: `${found.action.name} takes its parameters as JSON, not a form.`,
        });
      }
      const db = deps.database.db;
      const accountId = signedIn(request).account.id;
      await authorisePanel(
        { db, services: deps.services, products: deps.products },
        accountId,
        query.service as number,
        product,
        found.action,
      );
      // An account over its panel-write limit is refused before its file is read too (the
      // request is counted when it runs, as every panel write is).
      await deps.limits.check(panelLimitOf(found.action), `account:${accountId}`);
    }

    app.get(
      path,
      {
        validatorCompiler: queryValidator,
        schema: {
          tags: [product.type],
          operationId: `${product.type}Read`,
          summary: `${product.type} management, read actions: ${reads.join(', ')}`,
          description:
            `\`GET ${label}?service=<id>&action=<name>&<parameters>\`. Parameters go in the query. ` +
            `A POST action sent as GET is 405.\n\n${describeAll(actions, 'read')}`,
          'x-actions': actionCatalogue(actions, 'read'),
          querystring: Query,
          // 400: path_traversal from the file reads (file_read, file_download…); 403 upstream_forbidden.
          response: { 200: Answer, ...sessionErrors(400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 503) },
        },
      },
      async (request, reply) => {
        const found = chosen(request, reply, 'read');
        const { service: _service, action: _action, ...params } = request.query as Record<string, unknown>;
        return run(request, reply, found, params);
      },
    );

    app.post(
      path,
      {
        validatorCompiler: ({ schema, httpPart }) =>
          httpPart === 'body' ? bodyValidator({ schema }) : queryValidator({ schema }),
        // A 1 MiB text in JSON may take several times that on the wire (escapes).
        bodyLimit: 8 * 1024 * 1024,
        config: maxUpload > 0 ? { uploads: { anyType: true, maxBytes: maxUpload } } : {},
        ...(maxUpload > 0 ? { preParsing: authoriseUpload } : {}),
        schema: {
          tags: [product.type],
          operationId: `${product.type}Mutate`,
          summary: `${product.type} management, actions that change something: ${mutations.join(', ')}`,
          description:
            `\`POST ${label}?service=<id>&action=<name>\` with the parameters as a JSON object ` +
            '(and `csrf_token`, or the X-CSRF-Token header)' +
            `${
              maxUpload > 0
                ? '; an upload action takes multipart/form-data (its fields first, then the file) with the ' +
                  'X-CSRF-Token header, and is refused before its body is read (403 without the header, 422/404/409 ' +
                  'for the action, ownership, type and state; 429 while 2 uploads of the account are in flight; ' +
                  '507 insufficient_storage when the server is short of disk space, or runs out of it while the file ' +
                  'is received: nothing reaches the panel)'
                : ''
            }. ` +
            `A GET action sent as POST is 405.\n\n${describeAll(actions, 'mutate')}`,
          'x-actions': actionCatalogue(actions, 'mutate'),
          querystring: Query,
          consumes: ['application/json', ...(maxUpload > 0 ? ['multipart/form-data'] : [])],
          body: Type.Optional(
            Type.Object(
              { csrf_token: Type.Optional(Type.String({ description: 'or send the X-CSRF-Token header' })) },
              { additionalProperties: true, description: "the action's parameters" },
            ),
          ),
          response: {
            200: Answer,
            201: Answer,
            202: Answer,
            ...sessionErrors(400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 503, ...(maxUpload > 0 ? [507] : [])),
          },
        },
      },
      async (request, reply) => {
        const found = chosen(request, reply, 'mutate');
        const body = (request.body ?? {}) as Record<string, unknown>;
        const { csrf_token: _csrf, ...params } = body;
        if (found.action.upload) delete params[found.action.upload.field];
        return run(request, reply, found, params);
      },
    );
  };
}
