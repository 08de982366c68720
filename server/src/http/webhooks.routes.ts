// POST /api/v1/webhooks/razorpay (CONTRACT §12): Razorpay's server tells us about payments. No
// session, no CSRF, no token: the HMAC of the raw body in X-Razorpay-Signature is the only
// credential, so this plugin keeps the body as the exact bytes received (a re-serialised JSON
// would not match). 400 on a missing or wrong signature (nothing is done); 200 on anything
// signed, including duplicates and events we ignore, so Razorpay stops retrying; 503 while the
// gateway cannot be asked about the payment (Razorpay retries later).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { errorResponses, TokenError } from './schemas.ts';

export async function webhookRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  // This plugin's routes only: every body is kept as its bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/api/v1/webhooks/razorpay',
    {
      schema: {
        operationId: 'razorpayWebhook',
        security: [],
        tags: ['webhooks'],
        summary: 'Razorpay payment events (signed with the webhook secret)',
        description:
          'Called by Razorpay, not by clients. `X-Razorpay-Signature` must be the hex HMAC-SHA256 of the raw body ' +
          'under RAZORPAY_WEBHOOK_SECRET (400 otherwise). payment.captured and order.paid credit the deposit of ' +
          'the order once; payment.failed rejects it; anything else signed is acknowledged and ignored.',
        consumes: ['application/json'],
        response: {
          200: Type.Object({ ok: Type.Literal(true), handled: Type.String() }, { additionalProperties: false }),
          ...errorResponses(TokenError, [400, 404, 503]),
        },
      },
    },
    async (request) => {
      // No gateway on this installation: there is no such endpoint to deliver to (not a failure of ours).
      if (!deps.razorpay.configured) {
        throw new AppError('not_found', { message: 'Online payments are not configured on this installation.' });
      }
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const out = await deps.razorpay.webhook(raw, request.headers['x-razorpay-signature']);
      if (!out.verified) {
        throw new AppError('bad_signature', { message: 'The webhook signature is missing or does not match.' });
      }
      request.log.info({ handled: out.handled }, 'razorpay webhook');
      return { ok: true as const, handled: out.handled };
    },
  );
}
