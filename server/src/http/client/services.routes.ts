// Spec 4.8: /api/v1/client/services/ — list and detail with live power, credentials, events,
// sso; renew and staff-reviewed requests. What runs on a service (status/, graph/, action/) is
// service-control.routes.ts. Every id is checked against the caller's account.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { freeTextProblem } from '../../core/accounts/rules.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { actionParams, actionsOn, describeActions } from '../../core/product-kit/action-routes.ts';
import { sessionRoutes } from '../../core/product-kit/actions.ts';
import type { ServiceDetail } from '../../core/services/service-directory.ts';
import { isoWithOffset } from '../../core/time.ts';
import { jsonList } from '../list-body.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { OrderSchema, orderView } from '../views/order.view.ts';
import { RdnsSchema } from '../views/rdns.view.ts';
import { JobSchema, jobView, listedServiceView, ServiceSchema, serviceView } from '../views/service.view.ts';
import { PAGE_QUERY, PaginationSchema, pageOf, pagination, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['services'];
const IdQuery = { id: Type.Integer({ minimum: 1 }) };

const EventSchema = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  message: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
});
const CredentialsSchema = Type.Object({
  username: Type.String(),
  password: Type.Union([Type.String(), Type.Null()], {
    description: 'null for a game server: the client sets its panel password (game action panel_password)',
  }),
  ipv4: Type.Union([Type.String(), Type.Null()]),
  ssh: Type.Union([Type.String(), Type.Null()]),
  url: Type.Optional(Type.String({ description: 'where to sign in (a game server: its page on the panel)' })),
  note: Type.Optional(Type.String({ description: 'how to sign in, when there is no stored password' })),
});

export async function serviceRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  // The product actions exposed on POST /services/ beside renew and the requests (resize, rdns,
  // backup_schedule), by name.
  const registryActions = [
    ...new Map(actionsOn(deps.products, 'session', 'services').map((a) => [a.name, a])).values(),
  ];
  const productActions = registryActions.map((a) => a.name);
  const listed = jsonList<ReturnType<typeof listedServiceView>>(
    ServiceSchema,
    '"success":true,"message":"Services loaded."',
    'services',
  );
  const view = (detail: ServiceDetail, power: string | null | undefined, withJob: boolean) =>
    serviceView(deps, detail.service, {
      plan: detail.plan,
      location: detail.location,
      ipv4: detail.ipv4,
      overdue: detail.overdue,
      backupSchedule: detail.backupSchedule,
      power: (power ?? null) as 'running' | null,
      ...(withJob ? { lastJob: detail.lastJob } : {}),
    });

  /**
   * The service's login. A product that keeps none and signs in on its own panel (game: the
   * panel has no one-time sign-in, the client sets the panel password) answers how to sign in
   * there, not 409 no_vm.
   */
  async function credentialsOf(accountId: number, id: number) {
    try {
      return await deps.services.credentials(accountId, id);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'no_vm')) throw error;
      const { service } = await deps.services.detail(accountId, id);
      if (service.status !== 'active' || typeof deps.products.of(service.type).sso !== 'function') throw error;
      const signOn = await deps.serviceActions.sso(accountId, id);
      if (signOn.username === undefined) throw error;
      return { username: signOn.username, password: null, ipv4: null, ssh: null, url: signOn.url, note: signOn.note };
    }
  }

  app.get(
    '/services/',
    {
      schema: {
        tags,
        operationId: 'getServices',
        summary: 'Your services with live power state; ?id= one; &action=credentials|events|sso',
        description:
          'credentials are secret: the answer is not cached (Cache-Control: no-store). A game server has no stored ' +
          'password: its credentials are the panel username, the sign-in address and a note on setting the panel ' +
          'password (POST /api/v1/client/game/?service=<id>&action=panel_password). sso: for web hosting a one-time ' +
          'cPanel session URL; for a game server its page on the game panel and the username (the panel has no ' +
          'one-time sign-in); for a virtual server a console ticket; 409 while the service is not active; 422 ' +
          'not_supported for a product without sign-on (bare metal).',
        querystring: Type.Object(
          {
            ...PAGE_QUERY,
            id: Type.Optional(IdQuery.id),
            action: Type.Optional(
              Type.Union([Type.Literal('credentials'), Type.Literal('events'), Type.Literal('sso')]),
            ),
            console: Type.Optional(
              Type.Union([Type.Literal('vnc'), Type.Literal('serial')], {
                description:
                  'with action=sso on a virtual server: the screen (vnc, the default) or the serial console ' +
                  '(serial: raw terminal output; input as termproxy frames `0:<bytes>:<data>`, resize `1:<cols>:<rows>:`)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({ services: Type.Array(ServiceSchema), pagination: PaginationSchema }),
            okSchema({ service: ServiceSchema }),
            okSchema({ credentials: CredentialsSchema }),
            okSchema({ events: Type.Array(EventSchema) }),
            okSchema({
              sso: Type.Object({
                kind: Type.Union([Type.Literal('console'), Type.Literal('panel')]),
                protocol: Type.Optional(
                  Type.Union([Type.Literal('vnc'), Type.Literal('serial')], {
                    description: 'a console: what the WebSocket carries (RFB, or the serial terminal)',
                  }),
                ),
                url: Type.String(),
                expires_at: Type.Union([Type.String(), Type.Null()]),
                note: Type.String(),
                password: Type.Union([Type.String(), Type.Null()]),
                username: Type.Optional(Type.String({ description: 'whom to sign in as, where the panel asks' })),
              }),
            }),
          ]),
          // 503 node_unreachable: sso asks the panel for its one-time sign-in.
          ...sessionErrors(401, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const q = request.query;
      const { page, perPage } = pageOf(q);
      const accountId = session.account.id;
      if (q.id === undefined) {
        if (q.action !== undefined) throw AppError.fields({ id: 'is required with action' });
        const list = await deps.services.list(accountId, page, perPage);
        const live = await deps.serviceActions.liveStates(list.rows.map((d) => d.service));
        // The bytes of the unchanged page (list-body.ts); the same JSON the schema writes.
        const body = listed.page(
          accountId,
          list.rows.map((d) => listedServiceView(deps, d, live.get(d.service.id) ?? null)),
          pagination(page, perPage, list.total),
        );
        return sendAsIs(reply.type('application/json; charset=utf-8'), body);
      }
      if (q.action === 'credentials') {
        reply.header('Cache-Control', 'no-store');
        return {
          success: true as const,
          message: 'Credentials loaded.',
          credentials: await credentialsOf(accountId, q.id),
        };
      }
      if (q.action === 'events') {
        const events = await deps.services.events(accountId, q.id);
        return {
          success: true as const,
          message: 'Events loaded.',
          events: events.map((e) => ({
            id: e.id,
            kind: e.kind,
            message: e.message,
            data: e.data,
            created_at: isoWithOffset(e.created_at),
          })),
        };
      }
      if (q.console !== undefined && q.action !== 'sso') throw AppError.fields({ console: 'only with action=sso' });
      const detail = await deps.services.detail(accountId, q.id);
      if (q.action === 'sso') {
        reply.header('Cache-Control', 'no-store');
        if (deps.products.of(detail.service.type).sso === 'console') {
          const protocol = q.console ?? 'vnc';
          const ticket = await deps.consoles.issue(accountId, q.id, protocol);
          return {
            success: true as const,
            message: 'Console ticket issued; open the URL within 60 seconds.',
            sso: {
              kind: 'console' as const,
              protocol,
              url: ticket.url,
              expires_at: ticket.expires_at,
              note:
                protocol === 'vnc'
                  ? 'The VNC console of the server: a one-time ticket for our WebSocket; the RFB password is in password.'
                  : 'The serial console of the server: a one-time ticket for our WebSocket; output is the raw terminal, input goes as termproxy frames (0:<bytes>:<data>).',
              password: protocol === 'vnc' ? ticket.password : null,
            },
          };
        }
        if (q.console !== undefined) {
          throw new AppError('not_supported', { message: 'Only a virtual server has a console to choose.' });
        }
        const signOn = await deps.serviceActions.sso(accountId, q.id, whoOf(request));
        return {
          success: true as const,
          message: 'Sign-in link issued.',
          sso: { kind: 'panel' as const, ...signOn, password: null },
        };
      }
      const power = await deps.serviceActions.powerStates([detail.service]);
      return {
        success: true as const,
        message: 'Service loaded.',
        service: view(detail, power.get(detail.service.id), true),
      };
    },
  );

  app.post(
    '/services/',
    {
      schema: {
        tags,
        operationId: 'updateService',
        summary: `renew (charged to the wallet), request_suspend or request_terminate (reviewed by staff), ${productActions.join(', ')}`,
        description:
          "renew pays the service's unpaid renewal orders first, oldest first (422 insufficient_funds with " +
          '`details.unpaid_orders` when the wallet does not cover them all; nothing is charged then); with nothing ' +
          'owed, one more month from paid_until. 409 not_renewable when the service is not active or suspended, ' +
          `or while its termination is queued or running. ${describeActions(deps.products, 'session', 'services')} ` +
          'What resizing to each plan charges now: GET /api/v1/client/vps/?service=<id>&action=resize_options.',
        body: mutationBody({
          id: Type.Integer({ minimum: 1 }),
          action: Type.Union([
            Type.Literal('renew'),
            Type.Literal('request_suspend'),
            Type.Literal('request_terminate'),
            ...productActions.map((name) => Type.Literal(name)),
          ]),
          ...actionParams(deps.products, 'session', 'services'),
          note: Type.Optional(
            Type.String({
              maxLength: 1000,
              description: 'why (for staff); line breaks allowed, other control characters are 422',
            }),
          ),
          ...actionParams(deps.products, 'session', 'services'),
        }),
        response: {
          200: Type.Union([
            okSchema({ order: OrderSchema, paid_until: Type.String() }),
            okSchema({
              request: Type.Object({
                id: Type.Integer(),
                kind: Type.String(),
                status: Type.String(),
                created_at: Type.String(),
              }),
            }),
            okSchema({ rdns: RdnsSchema }),
            ...registryActions.flatMap((a) => (a.answer ? [okSchema(a.answer)] : [])),
          ]),
          202: okSchema({ job: JobSchema }),
          // 402: a resize or a paid add-on (backup_schedule) that the wallet cannot cover.
          ...sessionErrors(401, 402, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      if (productActions.includes(body.action)) {
        const { id, action, csrf_token: _csrf, note, ...params } = body;
        if (note !== undefined) throw AppError.fields({ note: 'is for request_suspend and request_terminate' });
        const { result } = await deps.serviceActions.run(session.account.id, id, action, params, {
          unknown: () => new AppError('not_supported'),
          exposed: (a) => sessionRoutes(a).includes('services'),
        });
        if (result.kind === 'job')
          return reply.code(202).send({ success: true as const, message: result.message, job: jobView(result.job) });
        if (result.kind !== 'data') throw new Error(`${action} answered ${result.kind}`);
        return { success: true as const, message: result.message, ...result.data } as never;
      }
      const { id: _id, action: _action, csrf_token: _csrf, note: _note, ...stray } = body as Record<string, unknown>;
      const strayKey = Object.keys(stray)[0];
      if (strayKey !== undefined) throw AppError.fields({ [strayKey]: `is not a parameter of ${body.action}` });
      const noteProblem = body.note === undefined ? null : freeTextProblem(body.note, { multiline: true });
      if (noteProblem) throw AppError.fields({ note: noteProblem });
      if (body.action === 'renew') {
        const { order, service } = await deps.orders.renew(session.account.id, body.id, whoOf(request));
        return {
          success: true as const,
          message: `Renewed ${service.label} until ${service.period_end?.toISOString().slice(0, 10)}.`,
          order: orderView(order),
          paid_until: isoWithOffset(service.period_end as Date),
        };
      }
      const kind = body.action === 'request_suspend' ? 'suspend' : 'terminate';
      const created = await deps.services.request(session.account.id, body.id, kind, body.note?.trim() || null);
      return {
        success: true as const,
        message: `Your ${kind} request was sent to staff for review.`,
        request: {
          id: created.id,
          kind: created.kind,
          status: created.status,
          created_at: isoWithOffset(created.created_at),
        },
      };
    },
  );
}
