// {ALT_BASE_PATH}/v1/instances… and /jobs/{id} (spec 4.12, CONTRACT §9): KVM and bare-metal
// instances on the same core as /api/v1 (rest/instances.routes.ts): the same services, the same
// deploy use case (idempotent, 10 an hour per account counted with every surface, 402 when the
// wallet cannot pay), the same product actions for power; only the names differ — `type` kvm
// (plan type vps) or baremetal, `image` for the OS template, a hostname that is also the label.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { keyFieldRule } from '../../core/idempotency.ts';
import { orderFieldRules, USER_DATA_DESCRIPTION } from '../../core/orders/order-input.ts';
import { getOwnJob } from '../../core/services/service-jobs.ts';
import { answerTokenDeploy } from '../deploy.ts';
import { jsonList } from '../list-body.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { IdParams, okSchema, PageQuery, PaginationSchema } from '../rest/envelopes.ts';
import { tokenErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { CredentialsSchema, instanceCredentials, instanceDetail, instancePage } from '../views/instance.view.ts';
import { OrderSchema, orderView } from '../views/order.view.ts';
import { JobSchema, jobView, serviceView } from '../views/service.view.ts';
import { CLOUD_SCOPE, INSTANCE_TYPES, InstanceSchema, instanceType, instanceView } from './views.ts';

const tags = ['cloud: instances'];
const PER_PAGE = 50;

/** The power actions of this surface and the product action each one is (core/products/). */
const POWER = { shutdown: 'stop', reboot: 'restart', power_cycle: 'power_cycle' } as const;

const DeployBody = Type.Object(
  {
    type: Type.Union([Type.Literal('kvm'), Type.Literal('baremetal')], {
      description: "kvm (a plan of type vps) or baremetal; must be the plan's",
    }),
    plan: Type.String({ maxLength: 64, description: 'the plan label (GET plans)' }),
    region: Type.String({ maxLength: 32, description: 'a region code (GET regions)' }),
    image: Type.String({ maxLength: 64, description: 'an image id (GET images)' }),
    hostname: Type.String({ maxLength: 253, description: 'its first label is the instance label' }),
    ssh_key_ids: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 10, description: 'ids of your SSH keys (GET ssh-keys)' }),
    ),
    ssh_keys: Type.Optional(
      Type.Array(Type.String({ maxLength: 16_384 }), { maxItems: 10, description: 'OpenSSH public key lines' }),
    ),
    idempotency_key: Type.Optional(
      Type.String({ maxLength: 300, description: 'or the Idempotency-Key header (required one way)' }),
    ),
    // Its byte limit is the core's (a clear reason in bytes); the body limit bounds it before.
    user_data: Type.Optional(Type.String({ description: `kvm only (422 for baremetal). ${USER_DATA_DESCRIPTION}` })),
  },
  { additionalProperties: false },
);

/** The order's config as the core names it. */
function orderConfig(body: Record<string, unknown>): Record<string, unknown> {
  const config: Record<string, unknown> = { hostname: body.hostname, region: body.region, os: body.image };
  if (body.ssh_keys !== undefined) config.ssh_keys = body.ssh_keys;
  if (body.ssh_key_ids !== undefined) config.ssh_key_ids = body.ssh_key_ids;
  if (body.user_data !== undefined) config.user_data = body.user_data;
  return config;
}

/** The order's fields as this body names them: the label comes from the hostname, the template is the image. */
const FIELD_NAMES: Record<string, string> = { os: 'image', server_name: 'hostname' };

function renamed(fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, reason] of Object.entries(fields)) out[FIELD_NAMES[field] ?? field] ??= reason;
  return out;
}

function renamedError(error: unknown): unknown {
  if (!(error instanceof AppError) || !error.fields) return error;
  const code = error.code.startsWith('bad_config_') ? error.code.slice('bad_config_'.length) : null;
  const name = code !== null ? FIELD_NAMES[code] : undefined;
  let message = error.message;
  for (const [from, to] of Object.entries(FIELD_NAMES)) message = message.replace(new RegExp(`\\b${from}\\b`, 'g'), to);
  return new AppError(name ? `bad_config_${name}` : error.code, {
    message,
    fields: renamed(error.fields),
    ...(error.details ? { details: error.details } : {}),
  });
}

export async function cloudInstanceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const base = root.prefix;
  const jobUrl = (id: number) => `${base}/jobs/${id}`;
  const accepted = (job: Parameters<typeof jobView>[0]) => ({ ok: true as const, job: jobView(job) });
  const listed = jsonList<ReturnType<typeof instanceView>>(InstanceSchema, '"ok":true', 'instances');

  app.get(
    '/instances',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListInstances',
        tags,
        summary:
          'Your KVM and bare-metal instances: status, power, IPv4, region (node location), CPU and RAM utilisation',
        description:
          "Power and utilisation come from each node's listing of all its machines, asked at most once every few " +
          'seconds however many lists ask (a list is one request: it does not count against the live-read ' +
          'allowance of GET /api/v1/instances/{id}/stats); live_as_of says when. When a node is slow the last ' +
          'answer (up to a minute old) is shown with its time; utilisation is null with utilisation_reason when ' +
          'not known. Game and web services are not listed here (see /api/v1/instances).',
        querystring: PageQuery(PER_PAGE),
        response: {
          200: okSchema({
            instances: Type.Array(InstanceSchema),
            pagination: PaginationSchema,
          }),
          ...tokenErrors(422),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const page = request.query.page ?? 1;
      const perPage = request.query.per_page ?? PER_PAGE;
      const list = await instancePage(deps, accountId, page, perPage, CLOUD_SCOPE);
      // The bytes of the unchanged page (list-body.ts); the same JSON the schema writes.
      const body = listed.page(
        accountId,
        list.instances.map((i) => instanceView(i.view, i.live)),
        { page, per_page: perPage, total: list.total },
      );
      return sendAsIs(reply.type('application/json; charset=utf-8'), body);
    },
  );

  app.get(
    '/instances/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudGetInstance',
        tags,
        summary: 'One KVM or bare-metal instance with its utilisation, last job and login details (secret: not cached)',
        description:
          'Power and utilisation as in the list (the same cached listing of its node). A game or web service id ' +
          'answers 404 exactly like a missing one.',
        params: IdParams,
        response: {
          200: okSchema({
            instance: Type.Intersect([InstanceSchema, Type.Object({ credentials: CredentialsSchema })]),
          }),
          ...tokenErrors(404),
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      const { view, live } = await instanceDetail(deps, accountId, id, CLOUD_SCOPE);
      const credentials = await instanceCredentials(deps, accountId, id);
      reply.header('Cache-Control', 'no-store');
      return { ok: true as const, instance: { ...instanceView(view, live), credentials } };
    },
  );

  app.post(
    '/instances',
    {
      config: {
        scope: 'orders.write',
        fieldRules: (body) => ({
          ...keyFieldRule(body.idempotency_key),
          ...renamed(orderFieldRules(orderConfig(body), undefined, 'flat')),
        }),
      },
      schema: {
        operationId: 'cloudDeployInstance',
        tags,
        summary: 'Deploy a KVM or bare-metal instance, paid from the wallet; 201 with instance, order and job',
        description:
          'Required: type, plan, region, image, hostname, idempotency_key (or the Idempotency-Key header). SSH ' +
          'keys by id (ssh_key_ids: yours only, another id is 422 naming it) or inline (ssh_keys), installed for ' +
          'root through cloud-init (kvm) or the installer (baremetal). 402 insufficient_funds (details: balance, ' +
          "required, shortfall, deposit_url); 422 when type is not the plan's, for an unknown image or region " +
          '(bad_config_<field>), or a bad key; 409 unavailable:<reason>, idempotency_conflict, ' +
          'idempotency_in_progress; 429 after 10 deploys an hour per account (every surface counted).',
        body: DeployBody,
        response: {
          201: okSchema({ instance: InstanceSchema, order: OrderSchema, job: JobSchema }),
          ...tokenErrors(402, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const plan = await deps.catalog.findPlan(body.plan);
      if (plan && plan.plan.type !== INSTANCE_TYPES[body.type]) {
        throw AppError.fields(
          { type: `must be the plan's: ${plan.plan.label} is a ${instanceType(plan.plan.type)} plan` },
          `Plan ${plan.plan.label} does not deploy ${body.type} instances.`,
        );
      }
      const { idempotency_key: _key, ...payload } = body;
      try {
        return await answerTokenDeploy(deps, request, reply, {
          input: { plan: body.plan, config: orderConfig(body), domain: null },
          key: body.idempotency_key,
          payload,
          scope: 'cloud.instances',
          naming: 'flat',
          render: (placed) => ({
            ok: true,
            instance: instanceView(
              serviceView(deps, placed.service, {
                plan: placed.plan,
                location: placed.location,
                ipv4: placed.ipv4,
              }),
              null,
            ),
            order: orderView(placed.order),
            job: jobView(placed.job),
          }),
          jobUrl,
        });
      } catch (error) {
        throw renamedError(error);
      }
    },
  );

  app.post(
    '/instances/:id/power',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'cloudPowerInstance',
        tags,
        summary: 'shutdown (ACPI), reboot (graceful) or power_cycle (hard); 202 with the job',
        description:
          'shutdown: an ACPI shutdown, forced off if the guest is still up after 60 s. reboot: an ACPI reboot, ' +
          'reset if the guest ignores it. power_cycle: off and on again at once, nothing asked of the guest. ' +
          '409 locked while another job of the instance runs; 409 when it is not active.',
        params: IdParams,
        body: Type.Object(
          { action: Type.Union([Type.Literal('shutdown'), Type.Literal('reboot'), Type.Literal('power_cycle')]) },
          { additionalProperties: false },
        ),
        response: { 202: okSchema({ job: JobSchema }), ...tokenErrors(404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const { id } = request.params;
      const { result } = await deps.serviceActions.run(
        accountId,
        id,
        POWER[request.body.action],
        {},
        {
          unknown: () => new AppError('bad_signal', { fields: { action: 'must be shutdown, reboot or power_cycle' } }),
          exposed: (a) => a.surfaces.token === 'action',
          ...CLOUD_SCOPE,
        },
      );
      if (result.kind !== 'job') throw new Error(`power answered ${result.kind}`);
      return reply.code(202).header('Location', jobUrl(result.job.id)).send(accepted(result.job));
    },
  );

  app.delete(
    '/instances/:id',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'cloudDeleteInstance',
        tags,
        summary: 'Delete: the server and its disks (bare metal: wiped, back to stock); `confirm` must equal the label',
        params: IdParams,
        body: Type.Object({ confirm: Type.String({ maxLength: 128 }) }, { additionalProperties: false }),
        response: { 202: okSchema({ job: JobSchema }), ...tokenErrors(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const job = await deps.serviceActions.terminate(accountId, request.params.id, request.body.confirm, CLOUD_SCOPE);
      return reply.code(202).header('Location', jobUrl(job.id)).send(accepted(job));
    },
  );

  app.get(
    '/jobs/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudGetJob',
        tags,
        summary: 'A job of an instance (deploy, power, snapshot, delete): status, progress, step, error',
        params: IdParams,
        response: { 200: okSchema({ job: JobSchema }), ...tokenErrors(404) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      return {
        ok: true as const,
        job: jobView(await getOwnJob(deps.database.db, accountId, request.params.id, CLOUD_SCOPE)),
      };
    },
  );
}
