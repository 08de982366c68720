// The OpenAPI 3.1 document, generated from the route schemas (each route declares its
// request, responses, errors, its operationId and, on token surfaces, the scope it needs),
// served at /api/v1/openapi.json, with a browsable page at /docs. Every documented route must
// have a unique operationId (the SDK's method name: refused at boot otherwise) and a security
// declaration (the auth plugins set it on their routes; public routes say `security: []`).

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { SessionError, sessionErrors, TokenError, tokenErrors } from '../schemas.ts';
import { surfaceOf } from '../surfaces.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

type DocumentedSchema = { hide?: boolean; operationId?: string; security?: unknown };

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route takes a bare request as an empty body (the token surfaces read no body as `{}`,
     * plugins/validation.ts emptyBodyAsObject): its request body is documented as optional.
     */
    optionalBody?: boolean;
  }
}

/** `/a/:id` as OpenAPI writes it: `/a/{id}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

function methodsOf(route: RouteOptions): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map(String);
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The refusals the shared plumbing makes before a route's handler runs: a path parameter that
 * does not decode (400 bad_request); parameters, query or body that fail the route's schema (422
 * validation_failed); on a route that takes a body, a body that does not parse (400), one over
 * the size limit (413) or of a type the route does not take (415, multipart included), and on the
 * session surface a mutation without its CSRF token or from another site (403 csrf_failed;
 * public routes included). Added to the route's responses, in its surface's envelope, where the
 * route does not list them itself.
 */
function withPlumbingRefusals(route: RouteOptions): void {
  const schema = route.schema as
    | { response?: Record<string, unknown>; params?: unknown; querystring?: unknown; body?: unknown }
    | undefined;
  const surface = surfaceOf(route.url);
  if (schema === undefined || surface === 'health') return;
  const takesBody = methodsOf(route).some((m) => BODY_METHODS.has(m));
  const statuses = takesBody ? (surface === 'session' ? [400, 403, 413, 415] : [400, 413, 415]) : [];
  if (route.url.includes(':')) statuses.push(400);
  if (schema.params !== undefined || schema.querystring !== undefined || schema.body !== undefined) statuses.push(422);
  if (statuses.length === 0) return;
  const refusals = surface === 'session' ? sessionErrors(...statuses) : tokenErrors(...statuses);
  const response = { ...schema.response };
  for (const status of statuses) if (!(status in response)) response[status] = refusals[status];
  route.schema = { ...schema, response };
}

/**
 * Refuse, at boot, a documented route without an operationId, a duplicate one, or (once every
 * plugin has seen the routes) one that declares no security. HEAD routes mirror their GET.
 */
function checkOperations(app: FastifyInstance, optionalBodies: Set<string>): void {
  const seen = new Map<string, string>();
  const documented: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    const methods = methodsOf(route).filter((m) => m !== 'HEAD');
    const schema = route.schema as DocumentedSchema | undefined;
    if (methods.length === 0 || schema?.hide) return;
    if (route.config?.optionalBody) for (const m of methods) optionalBodies.add(`${m} ${openApiPath(route.url)}`);
    withPlumbingRefusals(route);
    const name = `${methods.join(',')} ${route.url}`;
    const id = schema?.operationId;
    if (id === undefined) {
      throw new Error(`route ${name} declares no operationId`);
    }
    const other = seen.get(id);
    if (other !== undefined) throw new Error(`routes ${other} and ${name} share the operationId ${id}`);
    seen.set(id, name);
    documented.push(route);
  });
  // The surfaces' auth plugins set `security` in their own onRoute hooks, which run after this one.
  app.addHook('onReady', async () => {
    for (const route of documented) {
      if ((route.schema as DocumentedSchema).security === undefined)
        throw new Error(`route ${methodsOf(route).join(',')} ${route.url} declares no security`);
    }
  });
}

/** Registers on the root instance (not a child scope), so routes of every surface are seen. */
/** Request bodies of the routes that take none as `{}` are not required (fastify-swagger says they all are). */
function markOptionalBodies(document: Record<string, unknown>, optionalBodies: Set<string>): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation.requestBody && optionalBodies.has(`${method.toUpperCase()} ${path}`)) {
        operation.requestBody.required = false;
      }
    }
  }
}

export function registerOpenApi(app: FastifyInstance, publicUrl: string, altBasePath = '/cloud'): void {
  const optionalBodies = new Set<string>();
  checkOperations(app, optionalBodies);
  app.addSchema(TokenError);
  app.addSchema(SessionError);
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Hostplane API',
        version: '1.0.0',
        description:
          'Hosting platform: virtual servers, game servers and web hosting paid from a prepaid INR wallet. ' +
          'Token surface under /api/v1 (Bearer `svc_` tokens with scopes); session surface under ' +
          `/api/v1/client (cookie \`SVCSESSID\` plus CSRF token). Second token surface under ${altBasePath}/v1 ` +
          '(tags `cloud: …`; the same tokens, scopes, limits and envelope): KVM and bare-metal instances, power, ' +
          'snapshots, SSH keys, and the plans, regions and images a deploy names. Public session-surface routes (register, ' +
          'one-time codes, forgot, reset, verify) take JSON without a CSRF token; sent as a form ' +
          "(multipart or any other non-JSON body) they need the anonymous session's token from " +
          '`GET /api/v1/client/auth/csrf/`, else 403 csrf_failed. Money is a decimal string in INR. ' +
          "The staff console's API is under /api/v1/staff (tags `staff: …`): cookie `STAFFSESSID` and a CSRF token of " +
          'its own, a mandatory second factor, and roles support ⊂ billing ⊂ admin (403 forbidden_role).',
        // The project is not published under an open licence (an SPDX reference of its own).
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API token `svc_…`' },
          session: { type: 'apiKey', in: 'cookie', name: 'SVCSESSID', description: 'Session cookie from login' },
          csrf: {
            type: 'apiKey',
            in: 'header',
            name: 'X-CSRF-Token',
            description: 'Session CSRF token (or body `csrf_token`)',
          },
          staffSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'STAFFSESSID',
            description: 'Staff console session cookie (POST /api/v1/staff/auth/login, then the second factor)',
          },
          staffCsrf: {
            type: 'apiKey',
            in: 'header',
            name: 'X-CSRF-Token',
            description: "The staff session's CSRF token (or body `csrf_token`); a customer session's never fits",
          },
        },
      },
      tags: [
        { name: 'health', description: 'Liveness' },
        { name: 'meta', description: 'This document' },
        { name: 'auth', description: 'Session surface: sign-up, sign-in, one-time codes, password reset' },
        { name: 'account', description: 'Session surface: the signed-in account' },
        { name: 'catalog', description: 'Session surface: plans, regions, OS templates, games' },
        { name: 'wallet', description: 'Session surface: balance, ledger and manual deposits' },
        { name: 'notifications', description: 'Session surface: in-app notifications' },
        { name: 'orders', description: 'Session surface: orders paid from the wallet' },
        { name: 'services', description: 'Session surface: services, power, metrics, renewals' },
        { name: 'vps', description: 'Session surface: virtual server management (snapshots)' },
        { name: 'ssh-keys', description: 'Session surface: SSH keys of the account' },
        { name: 'webhooks', description: 'Session surface: signed outgoing webhooks (Standard Webhooks)' },
        { name: 'staff: auth', description: 'Staff console (/api/v1/staff): sign-in, second factor, session' },
        { name: 'staff: audit', description: 'Staff console: the audit log of staff changes (admin)' },
        { name: 'staff: directory', description: 'Staff console: staff members and their roles (admin)' },
        { name: 'staff: deposits', description: 'Staff console: the deposits queue' },
        { name: 'staff: operations', description: 'Staff console: the dashboard (support)' },
        { name: 'staff: accounts', description: "Staff console: customers' accounts, their wallets and security" },
        { name: 'staff: services', description: "Staff console: every account's services and their jobs" },
        { name: 'staff: billing', description: 'Staff console: the billing cycle and the GSTR-1 export (billing)' },
        { name: 'staff: infrastructure', description: 'Staff console: nodes, their health and load (admin)' },
        { name: 'staff: catalog', description: 'Staff console: plans and their prices (admin)' },
        {
          name: 'cloud: instances',
          description: `Second token surface (${altBasePath}/v1): KVM and bare-metal instances, power, jobs`,
        },
        {
          name: 'cloud: snapshots',
          description: `Second token surface (${altBasePath}/v1): disk snapshots of KVM instances`,
        },
        { name: 'cloud: ssh-keys', description: `Second token surface (${altBasePath}/v1): SSH keys of the account` },
        { name: 'cloud: catalog', description: `Second token surface (${altBasePath}/v1): plans, regions and images` },
      ],
    },
    // Shared schemas keep their $id as the component name, so errors read `#/components/schemas/TokenError`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: Record<string, unknown> }).openapiObject;
      markOptionalBodies(document, optionalBodies);
      return document as never;
    },
  });
  app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get(OPENAPI_PATH, { schema: { tags: ['meta'], summary: 'This OpenAPI document', hide: true } }, async () =>
    app.swagger(),
  );
}
