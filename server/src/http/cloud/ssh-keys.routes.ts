// {ALT_BASE_PATH}/v1/ssh-keys (CONTRACT §9): the account's SSH keys, the same resource as the
// session surface's /api/v1/client/ssh-keys/ (core/ssh/). Adding and deleting one need
// `orders.write`: a key does nothing until a deploy installs it, so the token that deploys can
// manage the keys it deploys with, and a read-only token cannot plant one.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { sshKeyView } from '../../core/ssh/ssh-key.service.ts';
import { principalOf } from '../plugins/token-auth.ts';
import { IdParams, okSchema } from '../rest/envelopes.ts';
import { tokenErrors } from '../schemas.ts';
import { SshKeySchema } from '../views/ssh-key.view.ts';

const tags = ['cloud: ssh-keys'];

export async function cloudSshKeyRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/ssh-keys',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'cloudListSshKeys',
        tags,
        summary: "Your account's SSH keys",
        response: { 200: okSchema({ ssh_keys: Type.Array(SshKeySchema) }), ...tokenErrors() },
      },
    },
    async (request) => ({
      ok: true as const,
      ssh_keys: (await deps.sshKeys.list(principalOf(request).accountId)).map(sshKeyView),
    }),
  );

  app.post(
    '/ssh-keys',
    {
      config: { scope: 'orders.write' },
      schema: {
        operationId: 'cloudAddSshKey',
        tags,
        summary: 'Add an SSH key: {name, public_key}; 201',
        description:
          'OpenSSH public keys only (the one line of an id_*.pub file): ssh-ed25519, ecdsa-sha2-nistp256/384/521, ' +
          'ssh-rsa of 2048 bits or more; a bad key, or one already on the account, is 422 naming public_key. ' +
          '409 limit_reached past 50 keys.',
        body: Type.Object(
          { name: Type.String({ maxLength: 200 }), public_key: Type.String({ maxLength: 20_000 }) },
          { additionalProperties: false },
        ),
        response: { 201: okSchema({ ssh_key: SshKeySchema }), ...tokenErrors(409, 422) },
      },
    },
    async (request, reply) => {
      const key = await deps.sshKeys.add(principalOf(request).accountId, request.body);
      return reply.code(201).send({ ok: true as const, ssh_key: sshKeyView(key) });
    },
  );

  app.delete(
    '/ssh-keys/:id',
    {
      config: { scope: 'orders.write' },
      schema: {
        operationId: 'cloudDeleteSshKey',
        tags,
        summary: 'Delete an SSH key (instances deployed with it keep it)',
        params: IdParams,
        response: { 200: okSchema({ ssh_key: SshKeySchema }), ...tokenErrors(404) },
      },
    },
    async (request) => ({
      ok: true as const,
      ssh_key: sshKeyView(await deps.sshKeys.remove(principalOf(request).accountId, request.params.id)),
    }),
  );
}
