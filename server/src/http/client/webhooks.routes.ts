// Signed outgoing webhooks on the session surface (CONTRACT §13): GET /api/v1/client/webhooks/
// lists the account's endpoints (with the event types and the low-balance threshold), `?id=` one,
// `?id=&action=deliveries` its delivery log; POST {url, events[], description?} adds one and shows
// its signing secret once; POST {action, id, …}: update, delete, rotate_secret (the new secret
// once; the old one signs too for 24 h), test (a webhook.test event), enable, disable;
// {action: "redeliver", delivery_id}; {action: "settings", low_balance_threshold}.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import { KEEP_DELIVERIES } from '../../core/webhooks/deliveries.ts';
import { MAX_ATTEMPTS, USER_AGENT } from '../../core/webhooks/dispatcher.ts';
import { WEBHOOK_EVENT_TYPES } from '../../core/webhooks/outbox.ts';
import { endpointProblems, MAX_ENDPOINTS } from '../../core/webhooks/webhook.service.ts';
import { sessionErrors } from '../schemas.ts';
import {
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  webhookDeliveryView,
  webhookEndpointView,
} from '../views/webhook.view.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['webhooks'];
const Money = Type.Union([Type.String(), Type.Null()], { description: 'INR amount, two decimals; null: off' });
const SettingsSchema = Type.Object({
  low_balance_threshold: Money,
  currency: Type.Literal('INR'),
});

const ACTIONS = [
  'create',
  'update',
  'delete',
  'rotate_secret',
  'test',
  'enable',
  'disable',
  'redeliver',
  'settings',
] as const;
type Action = (typeof ACTIONS)[number];

const ok = <T extends object>(message: string, payload: T) => ({ success: true as const, message, ...payload });

export async function webhookRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const hooks = deps.webhooks;
  const settingsOf = async (accountId: number) => {
    const paise = await hooks.lowBalanceThreshold(accountId);
    return { low_balance_threshold: paise === null ? null : formatPaise(paise), currency: 'INR' as const };
  };

  app.get(
    '/webhooks/',
    {
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'Your webhook endpoints; ?id= one; ?id=&action=deliveries its delivery log',
        description:
          `Event types: ${WEBHOOK_EVENT_TYPES.join(', ')} (and webhook.test, sent by the test action). The log keeps ` +
          `an endpoint's newest ${KEEP_DELIVERIES} deliveries and every one still pending.`,
        querystring: Type.Object(
          {
            id: Type.Optional(Type.Integer({ minimum: 1 })),
            action: Type.Optional(Type.Literal('deliveries')),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: KEEP_DELIVERIES })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({
              endpoints: Type.Array(WebhookEndpointSchema),
              event_types: Type.Array(Type.String()),
              max_endpoints: Type.Integer(),
              settings: SettingsSchema,
            }),
            okSchema({ endpoint: WebhookEndpointSchema }),
            okSchema({ endpoint: WebhookEndpointSchema, deliveries: Type.Array(WebhookDeliverySchema) }),
          ]),
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const accountId = session.account.id;
      const q = request.query;
      const now = deps.clock();
      if (q.id === undefined) {
        if (q.action) throw AppError.fields({ id: 'is required with action' });
        return ok('Webhook endpoints loaded.', {
          endpoints: (await hooks.list(accountId)).map((e) => webhookEndpointView(e, now)),
          event_types: [...WEBHOOK_EVENT_TYPES],
          max_endpoints: MAX_ENDPOINTS,
          settings: await settingsOf(accountId),
        });
      }
      const endpoint = webhookEndpointView(await hooks.get(accountId, q.id), now);
      if (q.action !== 'deliveries') return ok('Webhook endpoint loaded.', { endpoint });
      const deliveries = await hooks.deliveries(accountId, q.id, q.limit ?? KEEP_DELIVERIES);
      return ok('Deliveries loaded.', { endpoint, deliveries: deliveries.map(webhookDeliveryView) });
    },
  );

  app.post(
    '/webhooks/',
    {
      config: {
        fieldRules: (body) =>
          body.action === undefined || body.action === 'create' || body.action === 'update'
            ? endpointProblems(body, hooks.policy, body.action !== 'update').fields
            : {},
      },
      schema: {
        operationId: 'changeWebhooks',
        tags,
        summary: 'Add an endpoint ({url, events, description?}: the secret is shown once), or {action, id, …}',
        description:
          `Actions: ${ACTIONS.join(', ')}. create (or no action): 201 with \`secret\` (whsec_…), at most ` +
          `${MAX_ENDPOINTS} endpoints (409 limit_reached). update: url, events, description, enabled. ` +
          'rotate_secret: a new secret (shown once); the old one keeps signing, beside it, for 24 hours. ' +
          'test: 202, a webhook.test event to this endpoint. enable / disable. redeliver {delivery_id}: 202, the ' +
          'event again as a new delivery. settings {low_balance_threshold: amount | null}: wallet.low_balance is ' +
          'sent once when a debit takes the balance below it. URLs must be https:// to a public address ' +
          '(http:// and loopback only in demo mode). Deliveries: POST, JSON body {id, type, created_at, data}, ' +
          `headers webhook-id, webhook-timestamp, webhook-signature (Standard Webhooks, v1 HMAC-SHA256), user-agent ` +
          `${USER_AGENT}; a 2xx within 10 s is a success, anything else (3xx included) is retried, ${MAX_ATTEMPTS} ` +
          'attempts over about 3 days, in order per endpoint; 3 days of failures (or a 410) disable the endpoint.',
        body: mutationBody({
          action: Type.Optional(Type.Union(ACTIONS.map((a) => Type.Literal(a)))),
          id: Type.Optional(Type.Integer({ minimum: 1 })),
          delivery_id: Type.Optional(Type.Integer({ minimum: 1 })),
          url: Type.Optional(Type.String({ maxLength: 4096 })),
          events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
          description: Type.Optional(Type.String({ maxLength: 1000 })),
          enabled: Type.Optional(Type.Boolean()),
          low_balance_threshold: Type.Optional(
            Type.Union([Type.String({ maxLength: 32 }), Type.Number(), Type.Null()]),
          ),
        }),
        response: {
          200: Type.Union([
            okSchema({
              endpoint: WebhookEndpointSchema,
              secret: Type.String({ description: 'whsec_…, shown this once' }),
            }),
            okSchema({ endpoint: WebhookEndpointSchema }),
            okSchema({ settings: SettingsSchema }),
          ]),
          201: okSchema({
            endpoint: WebhookEndpointSchema,
            secret: Type.String({ description: 'whsec_…, shown this once' }),
          }),
          202: okSchema({ delivery: WebhookDeliverySchema }),
          ...sessionErrors(401, 403, 404, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const accountId = session.account.id;
      const body = request.body;
      const action = (body.action ?? 'create') as Action;
      const now = () => deps.clock();
      const needId = (): number => {
        if (body.id === undefined) throw AppError.fields({ id: `is required with action ${action}` });
        return body.id;
      };
      switch (action) {
        case 'create': {
          const { endpoint, secret } = await hooks.create(accountId, body);
          return reply
            .code(201)
            .header('Cache-Control', 'no-store')
            .send(
              ok('Endpoint added. Copy the signing secret now: it is not shown again.', {
                endpoint: webhookEndpointView(endpoint, now()),
                secret,
              }),
            );
        }
        case 'update':
        case 'enable':
        case 'disable': {
          const id = needId();
          const input = action === 'update' ? body : { enabled: action === 'enable' };
          const endpoint = await hooks.update(accountId, id, input);
          const message = action === 'update' ? 'Endpoint saved.' : `Endpoint ${action}d.`;
          return ok(message, { endpoint: webhookEndpointView(endpoint, now()) });
        }
        case 'delete': {
          const endpoint = await hooks.remove(accountId, needId());
          return ok('Endpoint deleted.', { endpoint: webhookEndpointView(endpoint, now()) });
        }
        case 'rotate_secret': {
          const { endpoint, secret } = await hooks.rotate(accountId, needId());
          reply.header('Cache-Control', 'no-store');
          return ok('New signing secret made: copy it now. The old one also signs for 24 hours.', {
            endpoint: webhookEndpointView(endpoint, now()),
            secret,
          });
        }
        case 'test':
        case 'redeliver': {
          const id = action === 'test' ? needId() : body.delivery_id;
          if (id === undefined) throw AppError.fields({ delivery_id: 'is required with action redeliver' });
          await limit(deps, reply, [['panel_write_account', String(accountId)]]);
          const delivery =
            action === 'test' ? await hooks.test(accountId, id) : await hooks.redeliver(accountId, String(id));
          return reply.code(202).send(
            ok(action === 'test' ? 'Test event queued.' : 'Delivery queued again.', {
              delivery: webhookDeliveryView(delivery),
            }),
          );
        }
        case 'settings': {
          if (body.low_balance_threshold === undefined)
            throw AppError.fields({ low_balance_threshold: 'is required with action settings (an amount, or null)' });
          await hooks.setLowBalanceThreshold(accountId, body.low_balance_threshold);
          return ok('Webhook settings saved.', { settings: await settingsOf(accountId) });
        }
      }
    },
  );
}
