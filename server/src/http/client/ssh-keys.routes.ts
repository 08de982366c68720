// CONTRACT §9: /api/v1/client/ssh-keys/ — the account's SSH keys. GET lists them; POST adds one
// ({name, public_key}: an OpenSSH public key, checked and fingerprinted) or deletes one
// ({action: "delete", id}). Deploys name them by id.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { sshKeyView } from '../../core/ssh/ssh-key.service.ts';
import { sessionErrors } from '../schemas.ts';
import { SshKeySchema } from '../views/ssh-key.view.ts';
import { signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['ssh-keys'];

export async function sshKeyRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/ssh-keys/',
    {
      schema: {
        tags,
        operationId: 'listSshKeys',
        summary: "Your account's SSH keys",
        response: { 200: okSchema({ ssh_keys: Type.Array(SshKeySchema) }), ...sessionErrors(401) },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const keys = await deps.sshKeys.list(session.account.id);
      // Worded as every list of this surface ("Orders loaded."): no count to get singular or plural wrong.
      return { success: true as const, message: 'SSH keys loaded.', ssh_keys: keys.map(sshKeyView) };
    },
  );

  app.post(
    '/ssh-keys/',
    {
      schema: {
        tags,
        operationId: 'changeSshKeys',
        summary: 'Add an SSH key ({name, public_key}) or delete one ({action: "delete", id})',
        description:
          'OpenSSH public keys only (the one line of an id_*.pub file): ssh-ed25519, ecdsa-sha2-nistp256/384/521, ' +
          'ssh-rsa of 2048 bits or more. A key already on the account is 422; a bad key is 422 naming public_key.',
        body: mutationBody({
          action: Type.Optional(Type.Literal('delete')),
          id: Type.Optional(Type.Integer({ minimum: 1 })),
          name: Type.Optional(Type.String({ maxLength: 200 })),
          public_key: Type.Optional(Type.String({ maxLength: 20_000 })),
        }),
        response: {
          200: okSchema({ ssh_key: SshKeySchema }),
          201: okSchema({ ssh_key: SshKeySchema }),
          ...sessionErrors(401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      if (body.action === 'delete') {
        if (body.id === undefined) throw AppError.fields({ id: 'is required with action delete' });
        const removed = await deps.sshKeys.remove(session.account.id, body.id);
        return reply
          .code(200)
          .send({ success: true as const, message: `SSH key ${removed.name} deleted.`, ssh_key: sshKeyView(removed) });
      }
      const key = await deps.sshKeys.add(session.account.id, { name: body.name, public_key: body.public_key });
      return reply.code(201).send({
        success: true as const,
        message: `SSH key ${key.name} added (${key.fingerprint}).`,
        ssh_key: sshKeyView(key),
      });
    },
  );
}
