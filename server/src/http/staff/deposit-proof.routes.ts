// GET /api/v1/staff/deposit-proof?id= (support and above, CONTRACT §14): the payment proof a
// customer uploaded with a manual deposit, as it was uploaded, for the console's deposit queue to
// show beside the claim. Served inline (an <img> of the console) with a sandboxing CSP and
// no-store; 404 for an unknown deposit or one paid online (no proof file).

import { createReadStream } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { CONTENT_TYPES } from '../../core/deposits/uploads.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { sessionErrors } from '../schemas.ts';
import { sendAsIs } from '../surfaces.ts';

const ProofFile = Type.String({ format: 'binary', description: 'the payment proof, as uploaded' });

export async function staffDepositProofRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/deposit-proof',
    {
      schema: {
        operationId: 'staffDepositProof',
        tags: ['staff: deposits'],
        summary: "A manual deposit's payment proof (the customer's screenshot), as uploaded",
        querystring: Type.Object({ id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
        response: {
          200: {
            description: 'The proof file (PNG, JPEG or WebP), inline',
            content: Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type, { schema: ProofFile }])),
          },
          ...sessionErrors(404, 422),
        },
      },
    },
    async (request, reply) => {
      const deposit = await deps.deposits.get(request.query.id);
      const file = deps.deposits.screenshotPath(deposit);
      if (file === null || deposit.screenshot_type === null) {
        throw new AppError('not_found', { message: 'This deposit was paid online and has no proof file.' });
      }
      reply
        .type(CONTENT_TYPES[deposit.screenshot_type])
        .header('Content-Disposition', 'inline')
        .header('Cache-Control', 'private, no-store')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; sandbox");
      return sendAsIs(reply, createReadStream(file));
    },
  );
}
