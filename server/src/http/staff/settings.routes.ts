// GET /api/v1/staff/settings (CONTRACT §14; admin): the configuration this process runs with.
// Hostplane keeps no settings in its database: every setting is an environment variable read at
// start (config.ts), so the console shows them read-only — the value in effect, what it means and
// its default — and never a secret's value (server/src/config-effective.ts). A change is a new
// value in the environment and a restart of the processes.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { effectiveSettings } from '../../config-effective.ts';
import type { Deps } from '../../core/deps.ts';
import { okSchema } from '../client/envelopes.ts';

const SettingSchema = Type.Object(
  {
    name: Type.String({ description: 'the environment variable' }),
    description: Type.String(),
    default: Type.String(),
    value: Type.String({ description: 'in effect; for a secret only "set" or "unset", and URLs without passwords' }),
    secret: Type.Boolean(),
  },
  { additionalProperties: false },
);

export async function staffSettingsRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/settings',
    {
      schema: {
        operationId: 'staffSettings',
        tags: ['staff: operations'],
        summary: 'The configuration in effect (environment variables), read-only, secrets redacted',
        response: {
          200: okSchema({
            settings: Type.Array(SettingSchema),
            engine: Type.String({ description: 'pglite or postgresql' }),
          }),
        },
      },
    },
    async () => ({
      success: true as const,
      message: 'Settings in effect.',
      settings: effectiveSettings(deps.config),
      engine: deps.config.engine,
    }),
  );
}
