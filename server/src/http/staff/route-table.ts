// Every route of the staff surface (/api/v1/staff, CONTRACT §14), with who may call it: the one
// place a staff route's access is declared. The surface (./plugin.ts) refuses at boot a staff
// route that is not in this table (and a table row without its route), attaches each row to its
// route, and enforces it in one hook for every request. Tests generate their role battery from
// it (server/test/staff-roles.test.ts). To add a route: a row here, then the route (docs/STAFF.md).

import type { StaffRole } from '../../core/staff/roles.ts';

/**
 * - `public`: no session (the CSRF bootstrap, sign-in, accepting an invitation);
 * - `session`: any staff session, also one whose second factor is still to come (enrolment, the
 *   code step, `me`, logout);
 * - a role: a full session (second factor done) of that role or a higher one.
 */
export type StaffAccess = 'public' | 'session' | StaffRole;

export interface StaffRouteSpec {
  method: 'GET' | 'POST';
  /** Under /api/v1/staff, without a trailing slash (both forms are served). */
  path: string;
  access: StaffAccess;
  /**
   * Changes platform data (not only the caller's own session): such a route writes an audit row
   * in the transaction of its change (core/audit/audit.ts). Every POST checks CSRF, mutating or not.
   */
  mutates: boolean;
}

export const STAFF_PREFIX = '/api/v1/staff';

export const STAFF_ROUTES = [
  // Signing in (./auth.routes.ts).
  { method: 'GET', path: '/auth/csrf', access: 'public', mutates: false },
  { method: 'POST', path: '/auth/login', access: 'public', mutates: false },
  { method: 'POST', path: '/auth/invite', access: 'public', mutates: false },
  { method: 'POST', path: '/auth/totp', access: 'session', mutates: false },
  { method: 'POST', path: '/auth/logout', access: 'session', mutates: false },
  { method: 'GET', path: '/me', access: 'session', mutates: false },
  // The audit log and the staff directory (./audit.routes.ts, ./staff.routes.ts).
  { method: 'GET', path: '/audit', access: 'admin', mutates: false },
  { method: 'GET', path: '/staff', access: 'admin', mutates: false },
  { method: 'POST', path: '/staff', access: 'admin', mutates: true },
  // Deposits (./deposits.routes.ts): the pattern for domain routes.
  { method: 'GET', path: '/deposits', access: 'support', mutates: false },
  { method: 'POST', path: '/deposits', access: 'billing', mutates: true },
  // The payment proof of a manual deposit, for the console's queue (./deposit-proof.routes.ts).
  { method: 'GET', path: '/deposit-proof', access: 'support', mutates: false },
  // The console's domain routes (./ops.routes.ts, ./accounts.routes.ts, ./services.routes.ts,
  // ./infra.routes.ts). A row with actions of several roles names the least of them; the handler
  // refuses an action above the caller's role (403 forbidden_role; docs/STAFF.md has each action's).
  { method: 'GET', path: '/dashboard', access: 'support', mutates: false },
  { method: 'GET', path: '/accounts', access: 'support', mutates: false },
  { method: 'GET', path: '/accounts/:id', access: 'support', mutates: false },
  { method: 'POST', path: '/accounts', access: 'support', mutates: true },
  { method: 'GET', path: '/services', access: 'support', mutates: false },
  { method: 'GET', path: '/services/:id', access: 'support', mutates: false },
  { method: 'POST', path: '/services', access: 'billing', mutates: true },
  { method: 'POST', path: '/billing', access: 'billing', mutates: true },
  { method: 'GET', path: '/invoices/export', access: 'billing', mutates: false },
  { method: 'GET', path: '/nodes', access: 'admin', mutates: false },
  { method: 'POST', path: '/nodes', access: 'admin', mutates: true },
  { method: 'GET', path: '/plans', access: 'admin', mutates: false },
  { method: 'POST', path: '/plans', access: 'admin', mutates: true },
  // Billing's invoices, credit notes and statement reconciliation (./invoices.routes.ts,
  // ./reconcile.routes.ts); deposit refunds are an action of POST /deposits (billing).
  { method: 'GET', path: '/invoices', access: 'billing', mutates: false },
  { method: 'GET', path: '/invoices/:id', access: 'billing', mutates: false },
  { method: 'GET', path: '/invoices/:id/pdf', access: 'billing', mutates: false },
  { method: 'POST', path: '/invoices', access: 'billing', mutates: true },
  { method: 'POST', path: '/deposits/reconcile', access: 'billing', mutates: true },
  // The admin's inventory and settings (./catalog.routes.ts, ./settings.routes.ts).
  { method: 'GET', path: '/locations', access: 'admin', mutates: false },
  { method: 'POST', path: '/locations', access: 'admin', mutates: true },
  { method: 'GET', path: '/os', access: 'admin', mutates: false },
  { method: 'POST', path: '/os', access: 'admin', mutates: true },
  { method: 'GET', path: '/ip-ranges', access: 'admin', mutates: false },
  { method: 'POST', path: '/ip-ranges', access: 'admin', mutates: true },
  { method: 'GET', path: '/settings', access: 'admin', mutates: false },
] as const satisfies readonly StaffRouteSpec[];

/** A row by the route Fastify registers (`/api/v1/staff/deposits/` or without the slash; HEAD as GET). */
export function staffRouteOf(method: string, url: string): StaffRouteSpec | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const path = url.slice(STAFF_PREFIX.length).replace(/\/$/, '');
  return (STAFF_ROUTES as readonly StaffRouteSpec[]).find((r) => r.method === wanted && r.path === path);
}
