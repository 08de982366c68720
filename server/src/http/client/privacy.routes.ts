// CONTRACT §11: POST /api/v1/client/account/export/ asks for an archive of the account's data (at
// most one an hour), built by the `account.export` job; GET lists the account's exports, and GET
// ?id= answers one's status, or, once ready and for 24 hours, the archive itself as a JSON
// attachment. Only a session of the account reaches it: the mail only links to the panel.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { ARCHIVE_FORMAT } from '../../core/privacy/exporters.ts';
import { type ExportRow, exportState } from '../../core/privacy/exports.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import { whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['account'];
const PATH = '/api/v1/client/account/export/';

const When = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const ExportSchema = Type.Object({
  id: Type.Integer(),
  status: Type.Union(
    [
      Type.Literal('queued'),
      Type.Literal('building'),
      Type.Literal('ready'),
      Type.Literal('failed'),
      Type.Literal('expired'),
    ],
    { description: 'queued → building → ready (downloadable for 24 hours, then expired) or failed' },
  ),
  include_proofs: Type.Boolean({ description: 'deposit proof files inline (base64)' }),
  created_at: Type.String({ format: 'date-time' }),
  finished_at: When,
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'until when the archive can be downloaded',
  }),
  bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'the size of the archive' }),
  download_url: Type.Union([Type.String(), Type.Null()], { description: 'GET it (signed in) while ready' }),
});

const ArchiveSchema = Type.Object(
  {
    format: Type.Literal(ARCHIVE_FORMAT),
    version: Type.Integer(),
    generated_at: Type.String({ format: 'date-time' }),
    account_id: Type.Integer(),
    about: Type.String(),
    sections: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  },
  {
    additionalProperties: true,
    description: 'The archive: one key per section listed in `sections` (profile, sessions, orders, invoices, …)',
  },
);

function exportView(row: ExportRow, now: Date) {
  const status = exportState(row, now);
  return {
    id: row.id,
    status,
    include_proofs: row.include_proofs,
    created_at: isoWithOffset(row.created_at),
    finished_at: row.finished_at ? isoWithOffset(row.finished_at) : null,
    expires_at: row.expires_at ? isoWithOffset(row.expires_at) : null,
    bytes: row.bytes,
    download_url: status === 'ready' ? `${PATH}?id=${row.id}` : null,
  };
}

/** The day an archive was built, as a customer in India names it: 2026-11-29. */
function istDate(date: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Kolkata' }).format(date);
}

export async function privacyRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/account/export/',
    {
      schema: {
        operationId: 'requestAccountExport',
        tags,
        summary: 'Ask for an archive of everything the platform keeps about the account',
        description:
          'Queues the export (202); a job builds it and mails a link to the panel. At most one an hour: 429 ' +
          'rate_limited with Retry-After and `details.retry_after` (seconds). `include_proofs: true` puts the ' +
          "deposits' proof files in the archive (base64). Secrets are never in it: no password or its hash, no " +
          'token, session or two-factor secret, no service credential.',
        body: mutationBody({ include_proofs: Type.Optional(Type.Boolean()) }),
        response: {
          202: okSchema({ export: ExportSchema }),
          ...sessionErrors(400, 401, 403, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const row = await deps.privacy.exports.request(
        session.account.id,
        request.body.include_proofs ?? false,
        whoOf(request),
      );
      reply.code(202);
      return {
        success: true as const,
        message: 'Your export is being prepared; we will e-mail you when it is ready (usually within minutes).',
        export: exportView(row, deps.clock()),
      };
    },
  );

  app.get(
    '/account/export/',
    {
      schema: {
        operationId: 'getAccountExport',
        tags,
        summary: "The account's exports, or one (?id=): its status, or the archive once ready",
        description:
          'Without `id`: the latest exports, newest first. With `id`: while it is being built, failed or expired, ' +
          '`{export}`; once ready (for 24 hours), the archive itself: `application/json` as an attachment ' +
          "(`hostplane-export-<date>.json`). Another account's export is 404 not_owner.",
        querystring: Type.Object(
          { id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            okSchema({ exports: Type.Array(ExportSchema) }),
            okSchema({ export: ExportSchema }),
            ArchiveSchema,
          ]),
          ...sessionErrors(401, 404, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const id = request.query.id;
      const now = deps.clock();
      if (id === undefined) {
        const rows = await deps.privacy.exports.list(session.account.id);
        return {
          success: true as const,
          message: `${counted(rows.length, 'export')}.`,
          exports: rows.map((row) => exportView(row, now)),
        };
      }
      await limit(deps, reply, [['account_export_download', `account:${session.account.id}`]]);
      const { row, json } = await deps.privacy.exports.download(session.account.id, id, whoOf(request));
      if (json === null) {
        const view = exportView(row, now);
        return { success: true as const, message: `The export is ${view.status}.`, export: view };
      }
      reply
        .type('application/json; charset=utf-8')
        .header(
          'Content-Disposition',
          `attachment; filename="hostplane-export-${istDate(row.finished_at ?? now)}.json"`,
        )
        .header('Cache-Control', 'private, no-store')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      return sendAsIs(reply, json);
    },
  );
}
