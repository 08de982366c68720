// Spec 4.7: GET /api/v1/client/orders/ (list, or ?id= one) and POST (CSRF): place an order paid
// from the wallet, idempotently (CONTRACT §5): the same key and payload replays the first
// answer with `Idempotent-Replayed: true`; another payload is 409 idempotency_conflict.

import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { keyFieldRule, requestKey, runIdempotent } from '../../core/idempotency.ts';
import { formatPaise } from '../../core/money.ts';
import { DEFAULT_OS_SLUG, type Placed } from '../../core/orders/order.service.ts';
import { orderFieldRules } from '../../core/orders/order-input.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { Order } from '../../db/tables.ts';
import { sessionErrors } from '../schemas.ts';
import { PAGE_QUERY, PaginationSchema, pagination, signedIn } from './context.ts';
import { JobSchema, jobView, ServiceSchema, serviceView } from './service-views.ts';
import { mutationBody, okSchema } from './views.ts';

export const OrderSchema = Type.Object({
  id: Type.Integer(),
  public_id: Type.String({ description: 'order_…' }),
  kind: Type.String({ description: 'new or renewal' }),
  status: Type.String({ description: 'unpaid, paid, refunded or cancelled' }),
  plan_id: Type.Integer(),
  service_id: Type.Union([Type.Integer(), Type.Null()]),
  amount: Type.String(),
  currency: Type.Literal('INR'),
  created_at: Type.String({ format: 'date-time' }),
  paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function orderView(o: Order) {
  return {
    id: o.id,
    public_id: o.public_id,
    kind: o.kind,
    status: o.status,
    plan_id: o.plan_id,
    service_id: o.service_id,
    amount: formatPaise(o.amount_paise),
    currency: 'INR' as const,
    created_at: isoWithOffset(o.created_at),
    paid_at: o.paid_at ? isoWithOffset(o.paid_at) : null,
  };
}

export function placedBody(placed: Placed) {
  return {
    success: true as const,
    message: `Order ${placed.order.public_id} placed: ₹${formatPaise(placed.order.amount_paise)} charged; provisioning has started.`,
    order: orderView(placed.order),
    service: serviceView(placed.service, { location: placed.location, plan: placed.plan, ipv4: placed.ipv4 }),
    job: jobView(placed.job),
  };
}

export async function orderRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const tags = ['orders'];
  app.get(
    '/orders/',
    {
      schema: {
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
      const q = request.query as { page: number; per_page: number; id?: number };
      if (q.id !== undefined) {
        return {
          success: true as const,
          message: 'Order loaded.',
          order: orderView(await deps.orders.get(session.account.id, q.id)),
        };
      }
      const list = await deps.orders.list(session.account.id, q.page, q.per_page);
      return {
        success: true as const,
        message: 'Orders loaded.',
        orders: list.rows.map(orderView),
        pagination: pagination(q.page, q.per_page, list.total),
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
        tags,
        summary: 'Order a plan, paid from the wallet; provisioning starts at once',
        description:
          'Body: `plan_id`, `config` (every key optional — vps: hostname (default: the label), os (default: ' +
          `${DEFAULT_OS_SLUG} while active, else the oldest active template), server_name, region, ssh_keys; ` +
          'game: server_name, region, eula (must be true); web: server_name, region), `domain` (web plans), ' +
          '`idempotency_key` (or the Idempotency-Key header; if both, they must match). server_name defaults to the ' +
          "hostname's first label, else the domain, else `<type>-<6 characters>`; region to the plan's first open one. " +
          'The debit, the order, the service, the job and the idempotency record commit together. Every failing field ' +
          'is reported at once. Errors: 422 insufficient_funds / domain_required / bad_domain / bad_config_<field> ' +
          '(the first failing field), 409 unavailable:<reason> / idempotency_conflict / idempotency_in_progress, ' +
          '429 after 10 orders in an hour per account, counted with deploys on the token surface (decided before any ' +
          'charge; refused orders and replays do not count).',
        body: mutationBody({
          plan_id: Type.Integer({ minimum: 1 }),
          config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 20 })),
          domain: Type.Optional(Type.Union([Type.String({ maxLength: 253 }), Type.Null()])),
          idempotency_key: Type.Optional(Type.String({ maxLength: 300 })),
        }),
        response: {
          201: okSchema({ order: OrderSchema, service: ServiceSchema, job: JobSchema }),
          ...sessionErrors(400, 401, 403, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body as {
        plan_id: number;
        config?: Record<string, unknown>;
        domain?: string | null;
        idempotency_key?: string;
      };
      const key = requestKey(body.idempotency_key, request.headers['idempotency-key']);
      const input = { plan: body.plan_id, config: body.config ?? {}, domain: body.domain ?? null };
      const idempotent = { accountId: session.account.id, key, scope: 'client.orders', payload: input };
      // The per-account deploy allowance (deploy_account, shared with the token surface's
      // POST /instances), counted inside the idempotent run: a replay (answered from the stored
      // record) and a twin still in progress (409) never count, even when the allowance is spent.
      const quotaKey = `account:${session.account.id}`;
      let counted = false;
      let answer: Awaited<ReturnType<typeof runIdempotent>>;
      try {
        answer = await runIdempotent(deps.database.db, idempotent, async (trx) => {
          await deps.limits.consume('deploy_account', quotaKey);
          counted = true;
          return { status: 201, body: placedBody(await deps.orders.place(trx, session.account.id, input)) };
        });
      } catch (error) {
        // Only orders that were placed count against the hourly allowance.
        if (counted) await deps.limits.refund('deploy_account', quotaKey);
        throw error;
      }
      if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply
        .code(answer.status as 201)
        .type('application/json; charset=utf-8')
        .send(answer.body);
    },
  );
}
