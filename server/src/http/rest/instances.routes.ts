// /api/v1/instances… and /api/v1/jobs/{id} (spec 4.1): the caller's services on the same core as
// the session surface. Deploys are idempotent and limited to 10 an hour per account, decided
// before any charge; a wallet that cannot cover one answers 402 with what is missing.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { keyFieldRule } from '../../core/idempotency.ts';
import { orderFieldRules, USER_DATA_DESCRIPTION } from '../../core/orders/order-input.ts';
import {
  actionParams,
  actionsOn,
  listActions,
  powerDescription,
  tokenPuts,
} from '../../core/product-kit/action-routes.ts';
import { DEFAULT_OS_SLUG } from '../../core/products/vps/order.ts';
import { getOwnJob } from '../../core/services/service-jobs.ts';
import { answerTokenDeploy } from '../deploy.ts';
import { jsonList } from '../list-body.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { tokenErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { CredentialsSchema, instanceCredentials, instanceDetail, instancePage } from '../views/instance.view.ts';
import { OrderSchema, orderView } from '../views/order.view.ts';
import {
  JobSchema,
  jobView,
  type listedServiceView,
  orUnknown,
  ServiceSchema,
  serviceView,
} from '../views/service.view.ts';
import { IdParams, okSchema, PageQuery, PaginationSchema } from './envelopes.ts';

const tags = ['token: instances'];
const INSTANCES_PER_PAGE = 50;

const DeployBody = Type.Object(
  {
    plan: Type.String({ maxLength: 64, description: 'the plan label, e.g. vps-2c-4g' }),
    server_name: Type.String({ maxLength: 63, description: 'becomes the label (DELETE confirm must equal it)' }),
    eula: Type.Boolean({ description: 'game plans need true' }),
    idempotency_key: Type.Optional(
      Type.String({ maxLength: 300, description: 'or the Idempotency-Key header (required one way)' }),
    ),
    os: Type.Optional(
      Type.String({
        maxLength: 64,
        description: `vps; default ${DEFAULT_OS_SLUG} while active, else the oldest active template (GET /os)`,
      }),
    ),
    region: Type.Optional(Type.String({ maxLength: 32, description: "default: the plan's first open region" })),
    hostname: Type.Optional(Type.String({ maxLength: 253, description: 'vps; defaults to server_name' })),
    ssh_keys: Type.Optional(
      Type.Array(Type.String({ maxLength: 16_384 }), { maxItems: 10, description: 'vps: OpenSSH public key lines' }),
    ),
    ssh_key_ids: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), {
        maxItems: 10,
        description: 'vps: ids of your SSH keys (GET ssh-keys)',
      }),
    ),
    domain: Type.Optional(Type.String({ maxLength: 253, description: 'web plans' })),
    // Its byte limit is the core's (a clear reason in bytes); the body limit bounds it before.
    user_data: Type.Optional(Type.String({ description: USER_DATA_DESCRIPTION })),
  },
  { additionalProperties: false },
);

/** The deploy body's order options: what the session surface nests in `config`, here flat. */
const CONFIG_KEYS = [
  'server_name',
  'eula',
  'region',
  'hostname',
  'os',
  'ssh_keys',
  'ssh_key_ids',
  'user_data',
] as const;

function deployConfig(body: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (body[key] !== undefined) config[key] = body[key];
  return config;
}

const TicketSchema = Type.Object({
  ticket: Type.String(),
  url: Type.String({ description: 'WebSocket URL with the one-time ticket' }),
  kind: Type.String({ description: 'vnc or serial (virtual servers), game (game servers)' }),
  password: Type.Union([Type.String(), Type.Null()], { description: 'VNC: the RFB password for this session' }),
  expires_at: Type.String({ format: 'date-time' }),
});

export async function instanceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  /** The product actions of POST /instances/{id}/{action}, in registry order. */
  const tokenActions = [...new Set(actionsOn(deps.products, 'token', 'action').map((a) => a.name))];
  const listed = jsonList<ReturnType<typeof listedServiceView>>(ServiceSchema, '"ok":true', 'instances');
  app.get(
    '/instances',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listInstances',
        tags,
        summary: 'Your instances with their live power state',
        querystring: PageQuery(INSTANCES_PER_PAGE),
        response: {
          200: okSchema({
            instances: Type.Array(ServiceSchema),
            pagination: PaginationSchema,
          }),
          ...tokenErrors(422),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      // Validation has filled in the defaults; the schema's type cannot say so.
      const page = request.query.page ?? 1;
      const perPage = request.query.per_page ?? INSTANCES_PER_PAGE;
      const list = await instancePage(deps, accountId, page, perPage);
      // The bytes of the unchanged page (list-body.ts); the same JSON the schema writes.
      const body = listed.page(
        accountId,
        list.instances.map((i) => i.view),
        { page, per_page: perPage, total: list.total },
      );
      return sendAsIs(reply.type('application/json; charset=utf-8'), body);
    },
  );

  app.post(
    '/instances',
    {
      config: {
        scope: 'orders.write',
        fieldRules: (body) => ({
          ...keyFieldRule(body.idempotency_key),
          ...orderFieldRules(deployConfig(body), body.domain, 'flat'),
        }),
      },
      schema: {
        operationId: 'deployInstance',
        tags,
        summary: 'Deploy: order and pay from the wallet; 201 with order, instance and job (Location: the job)',
        description:
          'Required: plan, server_name, eula, idempotency_key (or the Idempotency-Key header). ' +
          '402 insufficient_funds (details: balance, required, shortfall, deposit_url); 409 unavailable:<reason>, ' +
          'idempotency_conflict, idempotency_in_progress; 422 bad_config_<field> (the first failing field; ' +
          'bad_config_user_data: over 64 KiB, or given for a plan that is not vps; ' +
          'details.fields names every one as this body names it), domain_required, bad_domain, domain_taken (also ' +
          "the job's error, refunded, when the web server holds the domain under an account that is not ours); " +
          '429 after 10 deploys in an hour (decided before any charge).',
        body: DeployBody,
        response: {
          201: okSchema({ order: OrderSchema, instance: ServiceSchema, job: JobSchema }),
          ...tokenErrors(402, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // The key is not part of the payload: in the body or in the header, it is the same request.
      const { idempotency_key: _key, ...payload } = body;
      return answerTokenDeploy(deps, request, reply, {
        input: { plan: body.plan, config: deployConfig(body), domain: body.domain ?? null },
        key: body.idempotency_key,
        payload,
        scope: 'rest.instances',
        naming: 'flat',
        render: (placed) => ({
          ok: true,
          order: orderView(placed.order),
          instance: serviceView(deps, placed.service, {
            plan: placed.plan,
            location: placed.location,
            ipv4: placed.ipv4,
          }),
          job: jobView(placed.job),
        }),
        jobUrl: (id) => `/api/v1/jobs/${id}`,
      });
    },
  );

  app.get(
    '/instances/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getInstance',
        tags,
        summary: 'One instance with its credentials and last job (secret: not cached)',
        params: IdParams,
        response: {
          200: okSchema({
            instance: Type.Intersect([ServiceSchema, Type.Object({ credentials: CredentialsSchema })]),
          }),
          ...tokenErrors(404),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      const { view } = await instanceDetail(deps, accountId, id);
      const credentials = await instanceCredentials(deps, accountId, id);
      reply.header('Cache-Control', 'no-store');
      return { ok: true as const, instance: { ...view, credentials } };
    },
  );

  app.get(
    '/instances/:id/stats',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        operationId: 'getInstanceStats',
        summary: 'Live power, CPU, memory and uptime',
        params: IdParams,
        response: {
          200: okSchema({
            stats: Type.Object({
              power: Type.String(),
              cpu: orUnknown(Type.Number(), 'fraction of the allotted CPUs, 0–1'),
              cpus: Type.Integer(),
              memory: Type.Object({ used_bytes: orUnknown(Type.Integer()), total_bytes: Type.Integer() }),
              uptime_seconds: orUnknown(Type.Integer()),
            }),
          }),
          // 422 not_supported: a product with no live figures (web hosting).
          ...tokenErrors(404, 409, 422, 503),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      const { status } = await deps.serviceActions.status(accountId, id);
      return {
        ok: true as const,
        stats: {
          power: status.power,
          cpu: status.cpu,
          cpus: status.cpus,
          memory: { used_bytes: status.memoryBytes, total_bytes: status.memoryTotalBytes },
          uptime_seconds: status.uptimeSeconds,
        },
      };
    },
  );

  // Generated from the product action registry: every action a product exposes here.
  app.post(
    '/instances/:id/:action',
    {
      // Power actions take no parameters: a bare POST is one (read as `{}`).
      config: { scope: 'instances.write', optionalBody: true },
      schema: {
        tags,
        operationId: 'runInstanceAction',
        summary: `${listActions(deps.products, 'token', 'action', ' | ')}; 202`,
        description:
          `${powerDescription(deps.products)} Power actions, ` +
          'reinstall and resize answer with the job; vnc and console with a one-time ' +
          'ticket (60 s) for the WebSocket URL. Tickets: 6 a minute per instance, 20 per account, and at most 4 ' +
          'consoles open per account (50 per node); past any of these, 429. resize `{plan}` (a larger plan: its ' +
          'label or id) charges the pro-rata difference for the rest of the paid period at once: 402 ' +
          'insufficient_funds (details: balance, required, shortfall) when the wallet is short, nothing changed.',
        params: Type.Object(
          { id: Type.Integer({ minimum: 1 }), action: Type.String({ maxLength: 32 }) },
          { additionalProperties: false },
        ),
        body: Type.Object(actionParams(deps.products, 'token', 'action'), { additionalProperties: false }),
        response: {
          202: Type.Union([okSchema({ job: JobSchema }), okSchema({ console: TicketSchema })]),
          ...tokenErrors(402, 404, 409, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id, action } = request.params;
      const params: Record<string, unknown> = request.body ?? {};
      const unknown = () => new AppError('bad_signal', { message: `Actions are ${tokenActions.join(', ')}.` });
      const named = actionsOn(deps.products, 'token', 'action').find((a) => a.name === action);
      if (named?.console) {
        const ticket = await deps.consoles.issue(accountId, id, named.console);
        return reply.code(202).send({ ok: true as const, console: ticket });
      }
      const { result } = await deps.serviceActions.run(accountId, id, action, params, {
        unknown,
        exposed: (a) => a.surfaces.token === 'action',
      });
      if (result.kind !== 'job') throw new Error(`${action} answered ${result.kind}`);
      return reply
        .code(202)
        .header('Location', `/api/v1/jobs/${result.job.id}`)
        .send({ ok: true as const, job: jobView(result.job) });
    },
  );

  // Actions with a route of their own (PUT /instances/{id}/<path>, core/product-kit `token.put`):
  // the parameters are the body, the answer the action's data (backup_schedule).
  for (const { path, action } of tokenPuts(deps.products)) {
    app.put(
      `/instances/:id/${path}`,
      {
        config: { scope: 'instances.write' },
        schema: {
          tags,
          operationId: `put_${action.name}`.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
          summary: `${action.name} ${action.usage ?? ''}`.trim(),
          description: `${action.description}.`,
          params: IdParams,
          body: action.params,
          response: {
            200: okSchema({ message: Type.String(), ...(action.answer ?? {}) }),
            ...tokenErrors(402, 404, 409, 422, 503),
          },
        },
      },
      async (request) => {
        const { accountId } = principalOf(request);
        const { result } = await deps.serviceActions.run(
          accountId,
          request.params.id,
          action.name,
          request.body as Record<string, unknown>,
          { unknown: () => new AppError('not_found'), exposed: (a) => a === action },
        );
        if (result.kind !== 'data') throw new Error(`${action.name} answered ${result.kind}`);
        return { ok: true as const, message: result.message, ...result.data } as never;
      },
    );
  }

  app.delete(
    '/instances/:id',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'deleteInstance',
        tags,
        summary: 'Terminate: deletes the server and its disks, releases its IPv4; body `confirm` must equal the label',
        params: IdParams,
        body: Type.Object({ confirm: Type.String({ maxLength: 128 }) }, { additionalProperties: false }),
        response: { 202: okSchema({ job: JobSchema }), ...tokenErrors(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      const job = await deps.serviceActions.terminate(accountId, id, request.body.confirm);
      return reply
        .code(202)
        .header('Location', `/api/v1/jobs/${job.id}`)
        .send({ ok: true as const, job: jobView(job) });
    },
  );

  app.get(
    '/jobs/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getJob',
        tags,
        summary: 'A job: status, progress, step, error',
        params: IdParams,
        response: { 200: okSchema({ job: JobSchema }), ...tokenErrors(404) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      return { ok: true as const, job: jobView(await getOwnJob(deps.database.db, accountId, id)) };
    },
  );
}
