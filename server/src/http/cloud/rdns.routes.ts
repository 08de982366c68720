// PUT {ALT_BASE_PATH}/v1/instances/{id}/rdns (CONTRACT §13): the reverse DNS (PTR) of an
// instance's IPv4 address, set or cleared through the product action `rdns`
// (core/product-kit/reverse-dns.ts) and the one dispatcher, like the session surface's
// POST /api/v1/client/services/ {action: "rdns"}: ownership → the name → state → the DNS server.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { IdParams, okSchema } from '../rest/envelopes.ts';
import { tokenErrors } from '../schemas.ts';
import { RdnsSchema } from '../views/rdns.view.ts';
import { CLOUD_SCOPE } from './views.ts';

export async function cloudRdnsRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.put(
    '/instances/:id/rdns',
    {
      config: { scope: 'instances.write' },
      schema: {
        operationId: 'cloudSetReverseDns',
        tags: ['cloud: instances'],
        summary: "Set or clear the reverse DNS (PTR) of the instance's IPv4 address",
        description:
          '`ptr`: a hostname (RFC 1123 labels, at most 253 characters, lower-cased, a trailing dot optional); null ' +
          'or "" clears the record. The DNS server is changed first; the instance shows the new `ptr` once it ' +
          'accepted. 422 validation_failed (`details.fields.ptr`) for a name that is not a hostname; 409 ' +
          'unavailable:no_ipv4 (no address yet), unavailable:reverse_dns (not offered here), ' +
          'unavailable:reverse_zone (the address has no reverse zone), suspended; 503 when the DNS server fails ' +
          '(nothing is changed then).',
        params: IdParams,
        body: Type.Object(
          {
            ptr: Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
              description: 'the PTR hostname; null or "" clears it',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: okSchema({ rdns: RdnsSchema }), ...tokenErrors(404, 409, 422, 503) },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { result } = await deps.serviceActions.run(
        accountId,
        request.params.id,
        'rdns',
        { ptr: request.body.ptr },
        { unknown: () => new AppError('not_supported'), ...CLOUD_SCOPE },
      );
      if (result.kind !== 'data') throw new Error(`rdns answered ${result.kind}`);
      const { rdns } = result.data as { rdns: { ipv4: string; ptr: string | null } };
      return { ok: true as const, rdns };
    },
  );
}
