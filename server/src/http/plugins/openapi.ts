// The OpenAPI 3.1 document, generated from the route schemas (each route declares its
// request, responses, errors and, on token surfaces, the scope it needs), served at
// /api/v1/openapi.json, with a browsable page at /docs.

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SessionError, TokenError } from '../schemas.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** Registers on the root instance (not a child scope), so routes of every surface are seen. */
export function registerOpenApi(app: FastifyInstance, publicUrl: string): void {
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
          '/api/v1/client (cookie `SVCSESSID` plus CSRF token). Public session-surface routes (register, ' +
          'one-time codes, forgot, reset, verify) take JSON without a CSRF token; sent as a form ' +
          "(multipart or any other non-JSON body) they need the anonymous session's token from " +
          '`GET /api/v1/client/auth/csrf/`, else 403 csrf_failed. Money is a decimal string in INR.',
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
      ],
    },
    // Shared schemas keep their $id as the component name, so errors read `#/components/schemas/TokenError`.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get(OPENAPI_PATH, { schema: { tags: ['meta'], summary: 'This OpenAPI document', hide: true } }, async () =>
    app.swagger(),
  );
}
