// Staff roles (CONTRACT §14): support ⊂ billing ⊂ admin. A role may do everything of the roles
// before it in STAFF_ROLES. The one comparison every check goes through is `roleAtLeast`.

import type { StaffRoleColumn } from '../../db/tables.ts';

export const STAFF_ROLES = ['support', 'billing', 'admin'] as const satisfies readonly StaffRoleColumn[];
export type StaffRole = (typeof STAFF_ROLES)[number];

export function isStaffRole(value: unknown): value is StaffRole {
  return typeof value === 'string' && (STAFF_ROLES as readonly string[]).includes(value);
}

/** Whether `role` may use what `minimum` may. */
export function roleAtLeast(role: StaffRole, minimum: StaffRole): boolean {
  return STAFF_ROLES.indexOf(role) >= STAFF_ROLES.indexOf(minimum);
}

/** The roles below `minimum` (those a route of that minimum refuses). */
export function rolesBelow(minimum: StaffRole): StaffRole[] {
  return STAFF_ROLES.filter((r) => !roleAtLeast(r, minimum));
}
