// The staff route table (server/src/http/staff/route-table.ts) as a battery: every route × every
// role below its minimum answers 403 forbidden_role, the minimum role passes the role check, no
// session is 401, a session before its second factor is 403 second_factor_required, a mutation
// without its session's CSRF token is 403 csrf_failed and changes nothing; and every
// route the server registers under /api/v1/staff is in the table (CONTRACT §14, issue 38).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rolesBelow, STAFF_ROLES, type StaffRole } from '../src/core/staff/roles.ts';
import { STAFF_PREFIX, STAFF_ROUTES, type StaffRouteSpec } from '../src/http/staff/route-table.ts';
import { freshIp } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { type SignedInStaff, StaffBrowser, signedInStaff } from './support/staff.ts';

let t: TestApp;
const clock = new ManualClock();
const registered: string[] = [];
const members = {} as Record<StaffRole, SignedInStaff>;
before(async () => {
  t = await createTestApp({
    overrides: { clock: clock.now },
    extend: (app) =>
      app.addHook('onRoute', (route) => {
        if (!route.url.startsWith(STAFF_PREFIX)) return;
        for (const m of [route.method].flat()) if (m !== 'HEAD') registered.push(`${m} ${route.url}`);
      }),
  });
  for (const role of STAFF_ROLES) members[role] = await signedInStaff(t, clock, role, freshIp());
});
after(() => t.close());

const ROLE_ROUTES = (STAFF_ROUTES as readonly StaffRouteSpec[]).filter(
  (r): r is StaffRouteSpec & { access: StaffRole } => r.access !== 'public' && r.access !== 'session',
);

function call(browser: StaffBrowser, route: StaffRouteSpec) {
  return route.method === 'GET' ? browser.get(route.path) : browser.post(route.path, {});
}

describe('the staff route table', () => {
  test('every staff route the server registers is in the table, once', () => {
    const table = STAFF_ROUTES.map((r) => `${r.method} ${STAFF_PREFIX}${r.path}`).sort();
    assert.deepEqual([...new Set(registered)].sort(), table);
    assert.equal(new Set(table).size, table.length);
    assert.ok(ROLE_ROUTES.length >= 5);
  });

  test('roles nest: support ⊂ billing ⊂ admin', () => {
    assert.deepEqual(rolesBelow('support'), []);
    assert.deepEqual(rolesBelow('billing'), ['support']);
    assert.deepEqual(rolesBelow('admin'), ['support', 'billing']);
  });

  for (const route of ROLE_ROUTES) {
    const name = `${route.method} ${route.path} (${route.access}+)`;

    test(`${name}: every role below it is 403 forbidden_role`, async () => {
      for (const role of rolesBelow(route.access)) {
        const res = await call(members[role].browser, route);
        assert.equal(res.statusCode, 403, `${role}: ${res.body}`);
        assert.equal(res.json().code, 'forbidden_role', role);
        assert.equal(res.json().details.required, route.access);
      }
    });

    test(`${name}: its minimum role and every role above pass the role check`, async () => {
      for (const role of STAFF_ROLES.filter((r) => !rolesBelow(route.access).includes(r))) {
        const res = await call(members[role].browser, route);
        assert.notEqual(res.statusCode, 401, `${role}: ${res.body}`);
        assert.notEqual(res.json().code, 'forbidden_role', `${role}: ${res.body}`);
        assert.notEqual(res.json().code, 'csrf_failed', `${role}: ${res.body}`);
        assert.ok(res.statusCode === 200 || res.statusCode === 422, `${role}: ${res.statusCode} ${res.body}`);
      }
    });

    if (route.method !== 'GET') {
      test(`${name}: without its CSRF token, or with another session's, 403 csrf_failed and nothing audited`, async () => {
        const audited = async () =>
          Number(
            (
              await t.deps.database.db
                .selectFrom('audit_log')
                .select((eb) => eb.fn.countAll<string>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        const before = await audited();
        const other = members.support.browser.csrfToken as string;
        for (const csrf of [false, other] as const) {
          const res = await members.admin.browser.post(route.path, {}, { csrf });
          assert.equal(res.statusCode, 403, `${String(csrf)}: ${res.body}`);
          assert.equal(res.json().code, 'csrf_failed');
        }
        assert.equal(await audited(), before);
      });
    }

    test(`${name}: no session is 401, a session before its second factor is 403 second_factor_required`, async () => {
      const anonymous = new StaffBrowser(t, freshIp());
      await anonymous.bootstrap();
      const none = await call(anonymous, route);
      assert.equal(none.statusCode, 401);
      assert.equal(none.json().code, 'unauthenticated');
      const half = new StaffBrowser(t, freshIp());
      const login = await half.login(members.admin.email, members.admin.password);
      assert.equal(login.json().stage, 'totp');
      const refused = await call(half, route);
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().code, 'second_factor_required');
    });
  }

  test('a new role counts from the next request', async () => {
    const s = await signedInStaff(t, clock, 'support', freshIp());
    const before = await s.browser.post('/deposits', { action: 'approve', id: 999999 });
    assert.equal(before.json().code, 'forbidden_role');
    const changed = await members.admin.browser.post('/staff', { action: 'role', id: s.id, role: 'billing' });
    assert.equal(changed.statusCode, 200, changed.body);
    const after = await s.browser.post('/deposits', { action: 'approve', id: 999999 });
    assert.equal(after.statusCode, 404, 'past the role check: no such deposit');
    // An admin cannot change their own role or disable themselves (no lock-out by mistake).
    const self = await members.admin.browser.post('/staff', { action: 'role', id: members.admin.id, role: 'support' });
    assert.equal(self.statusCode, 409);
  });
});
