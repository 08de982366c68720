// GET /api/v1/webhooks (read): the account's webhook endpoints, read-only, for scripts and the
// `hostplane webhooks list` command. The token surface mirrors what the console offers (spec 4.1)
// and `read` covers its GET routes (spec §5); adding, changing, testing and rotating endpoints
// stay on the session surface (/api/v1/client/webhooks/, CONTRACT §13), where a secret is shown.
// An endpoint's view never holds its secret, only its first characters.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { WEBHOOK_EVENT_TYPES } from '../../core/webhooks/outbox.ts';
import { MAX_ENDPOINTS } from '../../core/webhooks/webhook.service.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { tokenErrors } from '../schemas.ts';
import { WebhookEndpointSchema, webhookEndpointView } from '../views/webhook.view.ts';
import { okSchema } from './envelopes.ts';

export async function webhookListRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/webhooks',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listWebhookEndpoints',
        tags: ['token: webhooks'],
        summary: 'Your webhook endpoints (read-only; manage them on the session surface)',
        description:
          'The same endpoint objects as GET /api/v1/client/webhooks/ (the secret only as secret_hint). Adding, ' +
          'changing, testing, rotating and the delivery log are on the session surface.',
        response: {
          200: okSchema({
            endpoints: Type.Array(WebhookEndpointSchema),
            event_types: Type.Array(Type.String()),
            max_endpoints: Type.Integer(),
          }),
          ...tokenErrors(),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const now = deps.clock();
      return {
        ok: true as const,
        endpoints: (await deps.webhooks.list(accountId)).map((e) => webhookEndpointView(e, now)),
        event_types: [...WEBHOOK_EVENT_TYPES],
        max_endpoints: MAX_ENDPOINTS,
      };
    },
  );
}
