// Spec 4.7: GET /api/v1/client/orders/ (list, or ?id= one) and POST (CSRF): place an order paid
// from the wallet, idempotently (CONTRACT §5): the same key and payload replays the first
// answer with `Idempotent-Replayed: true`; another payload is 409 idempotency_conflict.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { keyFieldRule, requestKey } from '../../core/idempotency.ts';
import { formatPaise } from '../../core/money.ts';
import { deploy } from '../../core/orders/deploy.ts';
import type { Placed } from '../../core/orders/order.service.ts';
import { OrderConfigSchema, orderFieldRules } from '../../core/orders/order-input.ts';
import { DEFAULT_OS_SLUG } from '../../core/products/vps/order.ts';
import { isoWithOffset } from '../../core/time.ts';
import { deployDeps } from '../deploy.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { OrderSchema, orderView } from '../views/order.view.ts';
import { JobSchema, jobView, ServiceSchema, type ServiceViewContext, serviceView } from '../views/service.view.ts';
import { PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

export function placedBody(view: ServiceViewContext, placed: Placed) {
  return {
    success: true as const,
    message: `Order ${placed.order.public_id} placed: ₹${formatPaise(placed.order.amount_paise)} charged; provisioning has started.`,
    order: orderView(placed.order),
    service: serviceView(view, placed.service, { location: placed.location, plan: placed.plan, ipv4: placed.ipv4 }),
    job: jobView(placed.job),
  };
}

export async function orderRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['orders'];
  app.get(
    '/orders/',
    {
      schema: {
        operationId: 'listOrders',
        tags,
        summary: 'Your orders, newest first; ?id= one',
        querystring: Type.Object(
          { ...PAGE_QUERY, id: Type.Optional(Type.Integer({ minimum: 1 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({ orders: Type.Array(OrderSchema), pagination: PaginationSchema }),
            okSchema({ order: OrderSchema }),
          ]),
          ...sessionErrors(401, 404, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const q = request.query;
      if (q.id !== undefined) {
        return {
          success: true as const,
          message: 'Order loaded.',
          order: orderView(await deps.orders.get(session.account.id, q.id)),
        };
      }
      const { page, perPage } = pageOf(q);
      const list = await deps.orders.list(session.account.id, page, perPage);
      return {
        success: true as const,
        message: 'Orders loaded.',
        orders: list.rows.map(orderView),
        pagination: pagination(page, perPage, list.total),
      };
    },
  );

  app.post(
    '/orders/',
    {
      config: {
        fieldRules: (body) => ({
          ...keyFieldRule(body.idempotency_key),
          ...orderFieldRules(body.config, body.domain, 'nested'),
        }),
      },
      schema: {
        operationId: 'placeOrder',
        tags,
        summary:
          'Order a plan, paid from the wallet (provisioning starts at once); or {action: "pay", id} an unpaid renewal',
        description:
          'Body: `plan_id`, `config` (every key optional — vps: hostname (default: the label), os (default: ' +
          `${DEFAULT_OS_SLUG} while active, else the oldest active template), server_name, region, ssh_keys, ` +
          'user_data (cloud-init user data, at most 64 KiB of UTF-8; sealed until provisioning used it, never shown); ' +
          'game: server_name, region, eula (must be true); web: server_name, region), `domain` (web plans), ' +
          '`idempotency_key` (or the Idempotency-Key header; if both, they must match). server_name defaults to the ' +
          "hostname's first label, else the domain, else `<type>-<6 characters>`; region to the plan's first open one. " +
          'The debit, the order, the service, the job and the idempotency record commit together. Every failing field ' +
          'is reported at once. Errors: 422 insufficient_funds / domain_required / bad_domain / bad_config_<field> ' +
          '(the first failing field), 409 unavailable:<reason> / idempotency_conflict / idempotency_in_progress, ' +
          '429 after 10 orders in an hour per account, counted with deploys on the token surface (decided before any ' +
          'charge; refused orders and replays do not count).',
        body: mutationBody({
          action: Type.Optional(
            Type.Literal('pay', { description: 'pay an unpaid renewal order (`id`) from the wallet instead' }),
          ),
          id: Type.Optional(Type.Integer({ minimum: 1, description: 'with action pay: the order' })),
          plan_id: Type.Optional(Type.Integer({ minimum: 1, description: 'required to place an order' })),
          config: Type.Optional(OrderConfigSchema),
          domain: Type.Optional(Type.Union([Type.String({ maxLength: 253 }), Type.Null()])),
          idempotency_key: Type.Optional(Type.String({ maxLength: 300 })),
        }),
        response: {
          200: okSchema({
            order: OrderSchema,
            service: Type.Object({ id: Type.Integer(), paid_until: Type.String() }),
          }),
          201: okSchema({ order: OrderSchema, service: ServiceSchema, job: JobSchema }),
          ...sessionErrors(400, 401, 403, 404, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      if (body.action === 'pay') {
        if (body.id === undefined) throw AppError.fields({ id: 'is required with action pay' });
        const { order, service } = await deps.billing.pay(session.account.id, body.id, whoOf(request));
        return reply.code(200).send({
          success: true as const,
          message: `Order ${order.public_id} paid: ${service.label} is paid until ${service.period_end?.toISOString().slice(0, 10)}.`,
          order: orderView(order),
          service: { id: service.id, paid_until: isoWithOffset(service.period_end as Date) },
        });
      }
      if (body.plan_id === undefined) throw AppError.fields({ plan_id: 'is required' });
      const key = requestKey(body.idempotency_key, request.headers['idempotency-key']);
      const input = { plan: body.plan_id, config: body.config ?? {}, domain: body.domain ?? null };
      // The deploy allowance (deploy_account) is shared with the token surface's POST /instances.
      const answer = await deploy(deployDeps(deps), {
        accountId: session.account.id,
        input,
        idempotency: { key, scope: 'client.orders', payload: input },
        naming: 'nested',
        render: (placed) => placedBody(deps, placed),
        who: whoOf(request),
      });
      if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
      return sendAsIs(reply.code(answer.status as 201).type('application/json; charset=utf-8'), answer.body);
    },
  );
}
