// staff add EMAIL --role ROLE [--name N] | list | invite EMAIL | disable EMAIL | role EMAIL ROLE |
// 2fa-reset EMAIL (CONTRACT §14). Each change is audited as the operator (actor `operator`).

import { OPERATOR } from '../../core/audit/audit.ts';
import { STAFF_ROLES } from '../../core/staff/roles.ts';
import { staffMemberView } from '../../core/staff/staff.service.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { type Command, clean, table } from '../command.ts';

const ROLES = STAFF_ROLES.join('|');

export const staffCommands: Command[] = [
  {
    noun: 'staff',
    verb: 'add',
    summary: 'Add a staff member and mail them an invitation to choose a password (/staff/invite)',
    args: ['EMAIL'],
    options: {
      role: { type: 'string', required: true, description: ROLES },
      name: { type: 'string', description: 'how the console names them (default: the e-mail before the @)' },
    },
    async run(deps, { args, options }) {
      const added = await deps.staff.add(
        {
          email: args[0] as string,
          role: String(options.role),
          ...(typeof options.name === 'string' ? { name: options.name } : {}),
        },
        OPERATOR,
      );
      return { json: staffMemberView(added), text: `added ${clean(added.email)} (${added.role}); invitation mailed` };
    },
  },
  {
    noun: 'staff',
    verb: 'list',
    summary: 'Staff members',
    async run(deps) {
      const rows = (await deps.staff.list()).map(staffMemberView);
      return { json: rows, text: table(rows, ['id', 'email', 'name', 'role', 'status', 'totp', 'created_at']) };
    },
  },
  {
    noun: 'staff',
    verb: 'invite',
    summary: 'Mail a new invitation (earlier links stop working)',
    args: ['EMAIL'],
    async run(deps, { args }) {
      const member = await deps.staff.invite(args[0] as string, OPERATOR);
      return { json: staffMemberView(member), text: `invitation mailed to ${clean(member.email)}` };
    },
  },
  {
    noun: 'staff',
    verb: 'disable',
    summary: 'Disable a staff member: no more sign-ins, every session ends now',
    args: ['EMAIL'],
    options: { reason: { type: 'string', description: 'why (kept in the audit log)' } },
    async run(deps, { args, options }) {
      const reason = typeof options.reason === 'string' ? options.reason : null;
      const { staff, endedSessions } = await deps.staff.disable(args[0] as string, OPERATOR, reason);
      return {
        json: { ...staffMemberView(staff), sessions_ended: endedSessions },
        text: `disabled ${clean(staff.email)}; ${counted(endedSessions, 'session')} ended`,
      };
    },
  },
  {
    noun: 'staff',
    verb: 'role',
    summary: "Change a staff member's role",
    args: ['EMAIL', 'ROLE'],
    details: `ROLE is one of ${ROLES} (support ⊂ billing ⊂ admin).`,
    async run(deps, { args }) {
      const member = await deps.staff.setRole(args[0] as string, args[1] as string, OPERATOR);
      return { json: staffMemberView(member), text: `${clean(member.email)} is now ${member.role}` };
    },
  },
  {
    noun: 'staff',
    verb: '2fa-reset',
    summary: "Forget a staff member's authenticator app (they enrol again at their next sign-in); sessions end",
    args: ['EMAIL'],
    async run(deps, { args }) {
      const { staff, endedSessions } = await deps.staff.resetTotp(args[0] as string, OPERATOR);
      return {
        json: { ...staffMemberView(staff), sessions_ended: endedSessions },
        text: `authenticator of ${clean(staff.email)} forgotten; ${counted(endedSessions, 'session')} ended`,
      };
    },
  },
];
