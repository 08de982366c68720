// GET /api/v1/staff/audit (admin, CONTRACT §14): the audit log, newest first, a page at a time
// (`before`: the last id of the page read), optionally of one target. Read-only: the log has no
// update or delete path anywhere.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { listAudit } from '../../core/audit/audit.ts';
import type { Deps } from '../../core/deps.ts';
import { isoWithOffset } from '../../core/time.ts';
import { okSchema } from '../client/envelopes.ts';
import { StaffRoleSchema } from './context.ts';

const Json = Type.Unknown({ description: 'the fields of the target, as they were (before) or became (after)' });

const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'bigint, as a string' }),
    at: Type.String({ format: 'date-time' }),
    staff_id: Type.Union([Type.Integer(), Type.Null()]),
    actor: Type.String({ description: '`staff:<id>` or `operator` (the staff CLI)' }),
    role: Type.Union([StaffRoleSchema, Type.Null()]),
    action: Type.String({ description: '`<noun>.<verb>`, e.g. deposit.approve, staff.role' }),
    target_type: Type.String(),
    target_id: Type.Union([Type.String(), Type.Null()]),
    before: Json,
    after: Json,
    reason: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export async function staffAuditRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/audit',
    {
      schema: {
        operationId: 'staffAudit',
        tags: ['staff: audit'],
        summary: 'The audit log of staff changes, newest first',
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,17}$', description: 'rows with a smaller id' })),
          target_type: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]{1,31}$' })),
          target_id: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: okSchema({
            entries: Type.Array(AuditEntrySchema),
            next_before: Type.Union([Type.String(), Type.Null()], {
              description: 'pass as `before` for the next page',
            }),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = q.limit ?? 50;
      const rows = await listAudit(deps.database.db, {
        limit,
        before: q.before,
        targetType: q.target_type,
        targetId: q.target_id,
      });
      return {
        success: true as const,
        message: 'Audit log.',
        entries: rows.map((r) => ({
          id: String(r.id),
          at: isoWithOffset(r.at),
          staff_id: r.staff_id,
          actor: r.actor,
          role: r.role,
          action: r.action,
          target_type: r.target_type,
          target_id: r.target_id,
          before: r.before ?? null,
          after: r.after ?? null,
          reason: r.reason,
          ip: r.ip,
        })),
        next_before: rows.length === limit ? String(rows[rows.length - 1]?.id) : null,
      };
    },
  );
}
