// Who made a staff change, as the audit log records it: a staff member of the console (their id,
// their role at the time, their address), or the operator at the staff CLI (no id, no role).
// Kept apart from ./audit.ts so the activity log's `Who` can carry one without an import circle.

import type { StaffRole } from '../staff/roles.ts';

export interface AuditActor {
  /** staff.id; null for the operator (the staff CLI). */
  staffId: number | null;
  /** The role the change was made with; null for the operator. */
  role: StaffRole | null;
  /** The client's address (console); null for the CLI. */
  ip: string | null;
}

/** The staff CLI (`npm run admin -- …`): whoever has a shell on the server. */
export const OPERATOR: AuditActor = Object.freeze({ staffId: null, role: null, ip: null });

/** `staff:<id>` or `operator`, as the audit log's `actor` column spells it. */
export function actorName(actor: AuditActor): string {
  return actor.staffId === null ? 'operator' : `staff:${actor.staffId}`;
}
