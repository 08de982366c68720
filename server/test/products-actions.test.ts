// The product action battery (issue 11 item 4): it enumerates the action registry and runs
// every action of every product, on every route that exposes it, through the same checks —
// ownership (another account's service answers exactly like a missing id and changes nothing),
// CSRF (a session-surface mutation without the token is 403), wrong type (an action of one
// product on a service of another type is that product's refusal) and wrong state (a status
// outside the action's `states` is 409 with the code the routes have always used). A new
// action is covered by adding it to its product; nothing here names one.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../src/core/errors.ts';
import { type ProductAction, sessionRoutes } from '../src/core/product-kit/actions.ts';
import type { Product } from '../src/core/product-kit/product.ts';
import type { ProductList } from '../src/core/product-kit/registry.ts';
import type { Service, ServiceStatus } from '../src/db/tables.ts';
import { Browser } from './support/browser.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { ManualClock } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
const clock = new ManualClock();
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let ownerApi: ApiClient;
let intruder: Awaited<ReturnType<typeof signedInBrowser>>;
let intruderApi: ApiClient;
let serviceId: number;
const MISSING = 987_654;
const SVC = '/api/v1/client/services/';

/** One way to call an action: a route of one surface. */
interface Route {
  label: string;
  session: boolean;
  call(
    as: 'owner' | 'intruder' | 'anonymous',
    service: Pick<Service, 'id' | 'label'>,
    csrf?: boolean,
  ): Promise<LightMyRequestResponse>;
}

/** Every route that exposes `action`, from its declared surfaces. */
function routesOf(action: ProductAction): Route[] {
  const routes: Route[] = [];
  const params = (service: Pick<Service, 'id' | 'label'>) => action.example?.(service as Service) ?? {};
  const browser = (as: 'owner' | 'intruder' | 'anonymous'): Browser =>
    as === 'anonymous' ? new Browser(u.t, freshIp()) : (as === 'owner' ? owner : intruder).browser;
  const api = (as: 'owner' | 'intruder' | 'anonymous') => (as === 'owner' ? ownerApi : intruderApi);
  const query = (service: Pick<Service, 'id' | 'label'>) =>
    new URLSearchParams({ id: String(service.id), ...(params(service) as Record<string, string>) }).toString();
  for (const sessionRoute of sessionRoutes(action)) {
    switch (sessionRoute) {
      case 'action':
        routes.push({
          label: `session POST ${SVC}action/ ${action.name}`,
          session: true,
          call: (as, service, csrf = true) =>
            browser(as).post(`${SVC}action/`, { id: service.id, action: action.name, ...params(service) }, { csrf }),
        });
        break;
      case 'services':
        // The service's own route, beside renew and the staff requests (CONTRACT §13: resize, rdns,
        // backup_schedule), the action named in the body.
        routes.push({
          label: `session POST ${SVC} ${action.name}`,
          session: true,
          call: (as, service, csrf = true) =>
            browser(as).post(SVC, { id: service.id, action: action.name, ...params(service) }, { csrf }),
        });
        break;
      case 'status':
      case 'graph':
        routes.push({
          label: `session GET ${SVC}${sessionRoute}/ (${action.name})`,
          session: true,
          call: (as, service) => browser(as).get(`${SVC}${sessionRoute}/?${query(service)}`),
        });
        break;
      case 'panel': {
        // The product's management route (CONTRACT §6): reads are GETs with a query, the rest POSTs.
        const type = u.t.deps.products.all.find((p) => p.actions.includes(action))?.type ?? 'game';
        const base = `/api/v1/client/${type}/`;
        const panelQuery = (service: Pick<Service, 'id' | 'label'>) =>
          new URLSearchParams({ service: String(service.id), action: action.name }).toString();
        routes.push(
          action.method === 'read'
            ? {
                label: `session GET ${base} ${action.name}`,
                session: true,
                call: (as, service) =>
                  browser(as).get(
                    `${base}?${panelQuery(service)}&${new URLSearchParams(params(service) as Record<string, string>)}`,
                  ),
              }
            : {
                label: `session POST ${base} ${action.name}`,
                session: true,
                call: (as, service, csrf = true) =>
                  browser(as).post(`${base}?${panelQuery(service)}`, params(service), { csrf }),
              },
        );
        break;
      }
    }
  }
  const token = action.surfaces.token;
  if (typeof token === 'object') {
    // A route of its own on the token surface: PUT /instances/{id}/<put>, the parameters as the body.
    routes.push({
      label: `token PUT /instances/{id}/${token.put}`,
      session: false,
      call: (as, service) => api(as).call('PUT', `/api/v1/instances/${service.id}/${token.put}`, params(service)),
    });
  }
  switch (token) {
    case 'action':
      routes.push({
        label: `token POST /instances/{id}/${action.name}`,
        session: false,
        call: (as, service) => api(as).call('POST', `/api/v1/instances/${service.id}/${action.name}`, params(service)),
      });
      break;
    case 'stats':
      routes.push({
        label: `token GET /instances/{id}/stats (${action.name})`,
        session: false,
        call: (as, service) => api(as).call('GET', `/api/v1/instances/${service.id}/stats`),
      });
      break;
  }
  return routes;
}

/** Every table's fingerprint (support/db.ts: the sessions without their `last_seen_at`, which a signed-in request stamps). */
const state = () => fingerprint(u.t);

/** The error code, in either surface's envelope (session `code`, token `error`). */
const codeOf = (res: LightMyRequestResponse): string | undefined => {
  const body = res.json() as { code?: string; error?: unknown };
  return body.code ?? (typeof body.error === 'string' ? body.error : undefined);
};

const every = () => u.t.deps.products.all.flatMap((product) => product.actions.map((action) => ({ product, action })));

async function jobCount(): Promise<number> {
  const row = await u.t.deps.database.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A second service of the owner, of `type`, in `status`, with the VM of the first (never asked: refused first). */
async function twin(type: Service['type'], status: ServiceStatus, label: string): Promise<Service> {
  const db = u.t.deps.database.db;
  const first = await db.selectFrom('services').selectAll().where('id', '=', serviceId).executeTakeFirstOrThrow();
  return db
    .insertInto('services')
    .values({
      account_id: first.account_id,
      plan_id: first.plan_id,
      order_id: null,
      type,
      label,
      status,
      location_id: first.location_id,
      node_id: first.node_id,
      price_paise: first.price_paise,
      config: JSON.stringify(first.config),
      external: JSON.stringify(first.external),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const setStatus = (id: number, status: ServiceStatus) =>
  u.t.deps.database.db.updateTable('services').set({ status }).where('id', '=', id).execute();

/** An app with an owner whose VPS is provisioned, and an intruder; `products`: in place of the registered ones. */
async function setUp(products?: Partial<ProductList>): Promise<void> {
  u = await createUpstreamApp({ overrides: { clock: clock.now, ...(products ? { products } : {}) } });
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '3000', 'test float');
  ownerApi = await apiClient(u.t, ['*'], '0', owner.account.id);
  intruder = await signedInBrowser(u.t, freshIp());
  intruderApi = await apiClient(u.t, ['*'], '0', intruder.account.id);
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-2c-4g')
    .executeTakeFirstOrThrow();
  const res = await owner.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { hostname: 'app.example.in' }, idempotency_key: 'actions-battery-1' },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  serviceId = res.json().service.id;
  await waitFor('provisioned', async () => {
    const job = await u.t.deps.database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', res.json().job.id)
      .executeTakeFirstOrThrow();
    return job.status === 'succeeded';
  });
}

before(() => setUp());
after(() => u.close());

describe('product action battery', () => {
  test('the registry has actions, each exposed somewhere, each with a known method and states', () => {
    const all = every();
    assert.ok(all.length > 0);
    for (const { product, action } of all) {
      assert.ok(routesOf(action).length > 0, `${product.type}.${action.name} is on no route`);
      assert.ok(['read', 'mutate'].includes(action.method), action.name);
      assert.ok(action.states.length > 0, action.name);
      assert.equal(action.params.type, 'object', action.name);
    }
  });

  test("ownership: another account's service answers exactly like a missing id, and nothing changes", async () => {
    // A minute on, as when this battery runs slowly: the intruder's first request stamps its
    // session's last_seen_at, which is the request's own trail, not a change (see `state`).
    clock.advance(61);
    const owned = { id: serviceId, label: 'app' };
    for (const { action } of every()) {
      for (const route of routesOf(action)) {
        const before = await state();
        const foreign = await route.call('intruder', owned);
        const missing = await route.call('intruder', { id: MISSING, label: 'app' });
        assert.equal(foreign.statusCode, 404, `${route.label}: ${foreign.body}`);
        assert.equal(codeOf(foreign), 'not_owner', route.label);
        const { request_id: _a, ...foreignBody } = foreign.json();
        const { request_id: _b, ...missingBody } = missing.json();
        assert.deepEqual(foreignBody, missingBody, route.label);
        assert.doesNotMatch(foreign.body, /app\.example\.in|203\.0\.113/, route.label);
        assert.deepEqual(await state(), before, `${route.label} changed something`);
      }
    }
  });

  test('no session: every session-surface route of every action is 401, and nothing changes', async () => {
    for (const { action } of every()) {
      for (const route of routesOf(action).filter((r) => r.session)) {
        const before = await state();
        const res = await route.call('anonymous', { id: serviceId, label: 'app' });
        assert.equal(res.statusCode, 401, `${route.label}: ${res.body}`);
        assert.equal(codeOf(res), 'unauthenticated', route.label);
        assert.deepEqual(await state(), before, `${route.label} changed something`);
      }
    }
  });

  test('CSRF: a session-surface mutation without the token is 403, and nothing changes', async () => {
    for (const { action } of every()) {
      if (action.method !== 'mutate') continue;
      for (const route of routesOf(action).filter((r) => r.session)) {
        const before = await state();
        const res = await route.call('owner', { id: serviceId, label: 'app' }, false);
        assert.equal(res.statusCode, 403, `${route.label}: ${res.body}`);
        assert.equal(codeOf(res), 'csrf_failed', route.label);
        assert.deepEqual(await state(), before, `${route.label} changed something`);
      }
    }
  });

  test('wrong state: a status outside the action’s states is 409 with the code these routes use, and no job', async () => {
    const order: ServiceStatus[] = ['suspended', 'terminated', 'failed', 'provisioning', 'pending', 'active'];
    let n = 0;
    for (const { product, action } of every()) {
      const status = order.find((s) => !action.states.includes(s));
      if (!status) continue;
      for (const route of routesOf(action)) {
        const service = await twin(product.type, status, `state-${++n}`);
        const expected = action.refused?.(service) ?? product.refused(service);
        const jobs = await jobCount();
        const res = await route.call('owner', service);
        assert.equal(res.statusCode, 409, `${route.label} on a ${status} service: ${res.body}`);
        assert.equal(codeOf(res), expected.code, route.label);
        assert.equal(await jobCount(), jobs, `${route.label} queued a job`);
        await setStatus(service.id, 'terminated');
      }
    }
  });

  test("wrong type: an action of one product on a service of another type is that product's refusal", async () => {
    // Every registered action, on a service of some other type, and on every type that lists it
    // as unsupported (422 not_supported on each route that exposes it, the management route too).
    let n = 0;
    let panelUnsupported = 0;
    for (const { product, action } of every()) {
      const lacking = u.t.deps.products.all.filter(
        (p) => p.type !== product.type && !p.actions.some((a) => a.name === action.name),
      );
      const others = lacking.filter((p, i) => i === 0 || p.unsupported?.[action.name] !== undefined);
      for (const other of others) {
        // A name several products share is resolved to the first of them on a third type; that one's entry covers it.
        if (u.t.deps.products.findAction(action.name, other.type)?.action !== action) continue;
        for (const route of routesOf(action)) {
          const status = action.states.includes('active') ? 'active' : (action.states[0] as ServiceStatus);
          const service = await twin(other.type, status, `type-${++n}`);
          // A product that has no counterpart of the action says so (game: vnc is not_supported); on
          // the shared routes any other product's action is not_supported too (CONTRACT §2), and
          // only a management route answers its product's wrong-type refusal (not_game_service, …).
          const why: string | undefined = other.unsupported?.[action.name];
          const panel = route.label.includes('/api/v1/client/') && !route.label.includes(SVC);
          const expected: AppError =
            why || !panel ? new AppError('not_supported', { message: why }) : product.wrongType();
          const jobs = await jobCount();
          const res = await route.call('owner', service);
          assert.equal(res.statusCode, expected.status, `${route.label} on a ${other.type} service: ${res.body}`);
          assert.equal(codeOf(res), expected.code, route.label);
          assert.equal(await jobCount(), jobs, `${route.label} queued a job`);
          if (why && route.label.includes('/api/v1/client/') && !route.label.includes(SVC)) panelUnsupported++;
          await setStatus(service.id, 'terminated');
        }
      }
    }
    // Bare metal lists the VPS's snapshot actions (management route /api/v1/client/vps/) as unsupported.
    assert.ok(panelUnsupported > 0, 'a management-route action on a type that lists it unsupported was run');

    // A throwaway product in place of the game one: its action on the VPS is refused (422
    // not_supported on these shared routes) with no side effect; on its own type the handler runs.
    let ran = 0;
    const game = u.t.deps.products.of('game');
    const probe: ProductAction = {
      name: 'probe_test_action',
      method: 'mutate',
      params: Type.Object({}, { additionalProperties: false }),
      states: ['active'],
      description: 'test only',
      surfaces: { session: 'action', token: 'action' },
      async handler() {
        ran++;
        throw new Error('not expected to succeed');
      },
    };
    const throwaway: Product = { ...game, actions: [probe] };
    // An app of its own with the throwaway injected (the registry is the app's, not a global).
    const saved = { u, owner, ownerApi, intruder, intruderApi, serviceId };
    await setUp({ game: throwaway });
    try {
      for (const route of routesOf(probe)) {
        const before = await state();
        const res = await route.call('owner', { id: serviceId, label: 'app' });
        const expected = new AppError('not_supported');
        assert.equal(res.statusCode, expected.status, `${route.label}: ${res.body}`);
        assert.equal(codeOf(res), expected.code, route.label);
        assert.deepEqual(await state(), before, `${route.label} changed something`);
      }
      assert.equal(ran, 0, 'the handler never ran on a service of another type');
      const own = await twin('game', 'active', 'type-own');
      const res = await routesOf(probe)[0]?.call('owner', own);
      assert.equal(res?.statusCode, 500, res?.body);
      assert.equal(ran, 1, 'on its own type the handler runs');
      await setStatus(own.id, 'terminated');
    } finally {
      await u.close();
      ({ u, owner, ownerApi, intruder, intruderApi, serviceId } = saved);
    }
    assert.equal(u.t.deps.products.of('game'), game, "the other app's registry is untouched");
  });
});
